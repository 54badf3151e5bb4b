/**
 * The front end in one call: parse, then the static checks. Pure and synchronous.
 *
 * @example const { script, diagnostics } = check("READ_JSON(src: '/x') | filter(a = 1)");
 */

import type { Script } from "./ast.ts";
import type { Diagnostic } from "./diagnostics.ts";
import { parse } from "./parser.ts";
import { checkScript } from "./checker.ts";

export interface CheckResult {
  /** The syntax tree; present only when there are no diagnostics, so it is safe to run. */
  readonly script?: Script;
  /** Every syntax and static error, in the order of the script. */
  readonly diagnostics: Diagnostic[];
}

/** Parses a script and runs every check that needs no data. Never throws. */
export function check(text: string): CheckResult {
  const parsed = parse(text);
  const hasSyntaxError = parsed.diagnostics.some((d) => d.code === "SYNTAX_ERROR");
  const diagnostics = [
    ...parsed.diagnostics,
    ...checkScript(parsed.script, {
      assumeBound: parsed.unparsedBindings,
      incomplete: hasSyntaxError,
    }),
  ];
  diagnostics.sort((a, b) => (a.line! - b.line!) || (a.column! - b.column!));
  return diagnostics.length === 0 ? { script: parsed.script, diagnostics } : { diagnostics };
}
