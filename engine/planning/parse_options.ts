/**
 * PARSE's options beyond pattern and src: `record_start` (what begins a record of several
 * lines: a pattern matched at the start of a line, `REGEX('...')` for a regular expression) and
 * `max_record_lines` (the most lines a record holds, 1000 unless given); `unmatched: true` gives
 * the records the pattern does not match (uri, line, record) instead of the parsed ones.
 */

import type { NamedExpr } from "../ast.ts";
import { compilePattern } from "../pattern/compile_pattern.ts";
import type { RecordOptions } from "../exec/parse_records.ts";
import type { Value } from "../values.ts";
import { type PlanEnv, report } from "./env.ts";

export const DEFAULT_MAX_RECORD_LINES = 1000;
const MAX_RECORD_LINES = 1_000_000;

export interface ParseOptions {
  /** How records are cut, when they may span lines (`record_start`); null: one per line. */
  readonly records: RecordOptions | null;
  /** `unmatched: true`: the source gives the records that do not match instead. */
  readonly unmatched: boolean;
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
    const compiled = compilePattern(startArg.value, { timeZone: env.query.timeZone });
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
  let unmatched = false;
  const u = args.get("unmatched");
  if (u && u.value !== null) {
    if (typeof u.value !== "boolean") {
      report(env, "BAD_ARGUMENT", "PARSE unmatched must be true or false", u.expr.span);
      ok = false;
    } else unmatched = u.value;
  }
  return ok ? { records, unmatched } : undefined;
}
