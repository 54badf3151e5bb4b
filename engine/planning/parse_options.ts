/**
 * PARSE's options beyond src: the pattern (`pattern:` or `pattern_file:`), `record_start` (what begins a record of several
 * lines: a pattern matched at the start of a line, `REGEX('...')` for a regular expression) and
 * `max_record_lines` (the most lines a record holds, 1000 unless given); `unmatched: true` gives
 * the records the pattern does not match (uri, line, record) instead of the parsed ones, and
 * `unmatched: 'ignore'` expects them (counted in the stats, without a warning).
 */

import type { NamedExpr, Quoted, Span } from "../front/ast.ts";
import type { SubPatterns } from "../pattern/parse_pattern.ts";
import { existingFile } from "./paths.ts";
import { compilePattern } from "../pattern/compile_pattern.ts";
import type { RecordOptions } from "../exec/parse_records.ts";
import type { Value } from "../values/values.ts";
import { type PlanEnv, report } from "./env.ts";

export const DEFAULT_MAX_RECORD_LINES = 1000;
const MAX_RECORD_LINES = 1_000_000;

export interface ParseOptions {
  /** How records are cut, when they may span lines (`record_start`); null: one per line. */
  readonly records: RecordOptions | null;
  /** `unmatched: true`: the source gives the records that do not match instead. */
  readonly unmatched: boolean;
  /** `unmatched: 'ignore'`: records that do not match are expected: counted, not warned of. */
  readonly ignoreUnmatched: boolean;
}

type Args = ReadonlyMap<string, { value: Value; expr: NamedExpr }>;

/** The options of a PARSE call; undefined (with the mistakes reported) when one is wrong. */
export function parseOptions(env: PlanEnv, args: Args): ParseOptions | undefined {
  let ok = true;
  let maxLines = DEFAULT_MAX_RECORD_LINES;
  const max = args.get("max_record_lines");
  if (max && max.value !== null) {
    const n = max.value;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > MAX_RECORD_LINES) {
      report(
        env,
        "BAD_ARGUMENT",
        `PARSE max_record_lines must be a whole number from 1 to ${MAX_RECORD_LINES}`,
        max.expr.span,
      );
      ok = false;
    } else maxLines = n;
  }
  let records: RecordOptions | null = null;
  const startArg = args.get("record_start");
  if (startArg && startArg.value !== null) {
    if (typeof startArg.value !== "string") {
      report(
        env,
        "BAD_ARGUMENT",
        "PARSE record_start must be a pattern as a string (REGEX('...') for a regular expression)",
        startArg.expr.span,
      );
      return undefined;
    }
    const compiled = compilePattern(startArg.value, {
      timeZone: env.query.timeZone,
      subPatterns: subPatterns(env),
    });
    if (!compiled.ok) {
      report(
        env,
        "SYNTAX_ERROR",
        `in record_start at offset ${compiled.offset}: ${compiled.message}`,
        startArg.expr.value.span,
      );
      return undefined;
    }
    const starts = compiled.pattern.makeExtractor([]);
    records = { start: (line) => starts(line) !== null, maxLines };
  } else if (max && max.value !== null) {
    report(
      env,
      "BAD_ARGUMENT",
      "PARSE max_record_lines needs record_start, which says where a record begins",
      max.expr.span,
    );
    ok = false;
  }
  let unmatched = false, ignoreUnmatched = false;
  const u = args.get("unmatched");
  if (u && u.value !== null) {
    if (u.value === "ignore") ignoreUnmatched = true;
    else if (typeof u.value !== "boolean") {
      report(
        env,
        "BAD_ARGUMENT",
        "PARSE unmatched must be true (give the records that do not match), false, or 'ignore' " +
          "(expect them: no warning)",
        u.expr.span,
      );
      ok = false;
    } else unmatched = u.value;
  }
  return ok ? { records, unmatched, ignoreUnmatched } : undefined;
}

/** The sub-patterns `$name` a pattern may use: the script's constants that hold text. */
export function subPatterns(env: PlanEnv): SubPatterns {
  return (name) => {
    const value = env.params.get(name)?.value;
    return typeof value === "string" ? value : undefined;
  };
}

/**
 * The pattern of a PARSE: the text of `pattern:`, or of the file `pattern_file:` names (a
 * `.sxp` file in the resource tree, which the user must be able to read); exactly one of them.
 */
export async function patternArgument(
  env: PlanEnv,
  call: { readonly span: Span },
  args: Args,
): Promise<
  { text: string; what: string; span: Span; quoted?: Quoted } | undefined
> {
  const inline = args.get("pattern");
  const file = args.get("pattern_file");
  if ((inline === undefined) === (file === undefined)) {
    report(
      env,
      "BAD_ARGUMENT",
      inline
        ? "PARSE takes pattern or pattern_file, not both"
        : "PARSE needs pattern: a pattern as a string (or pattern_file: a .sxp file that holds one)",
      call.span,
    );
    return undefined;
  }
  if (inline) {
    if (typeof inline.value !== "string") {
      report(env, "BAD_ARGUMENT", "PARSE needs pattern: a pattern as a string", inline.expr.span);
      return undefined;
    }
    const expr = inline.expr.value;
    // A pattern written in place, or a constant's: its mistakes are placed in the literal, at the
    // element they are about.
    const written = expr.kind === "literal" && expr.quoted
      ? { span: expr.span, quoted: expr.quoted }
      : expr.kind === "param"
      ? env.params.get(expr.name)?.written
      : undefined;
    return {
      text: inline.value,
      what: "pattern",
      span: written?.span ?? expr.span,
      ...(written ? { quoted: written.quoted } : {}),
    };
  }
  const path = file!.value;
  const span = file!.expr.value.span;
  if (typeof path !== "string" || !path.endsWith(".sxp")) {
    report(env, "BAD_ARGUMENT", "PARSE pattern_file must name a .sxp file", span);
    return undefined;
  }
  const found = await existingFile(env, path, { right: "read", what: "pattern file", span });
  if (!found) return undefined;
  let text: string;
  try {
    text = new TextDecoder().decode((await found.files.read(found.real)).bytes);
  } catch {
    report(env, "NOT_FOUND", `the pattern file ${found.canonical} cannot be read`, span);
    return undefined;
  }
  return { text, what: `pattern file ${found.canonical}`, span };
}
