/**
 * The options of READ_CSV: `delimiter` (one or more characters, `','` unless given; `'\t'` for
 * TSV), `header` (true unless given: the first record names the fields) and `quote` (`'"'`
 * unless given; `''` for none). READ_W3C and READ_ZEEK take none: their headers say it all.
 */

import type { NamedExpr } from "../front/ast.ts";
import type { TableFormat } from "../exec/read_table_source.ts";
import type { Value } from "../values/values.ts";
import { type PlanEnv, report } from "./env.ts";

type Args = ReadonlyMap<string, { value: Value; expr: NamedExpr }>;

/** The format a READ_CSV, READ_W3C or READ_ZEEK call reads; undefined when an option is wrong. */
export function tableFormat(env: PlanEnv, name: string, args: Args): TableFormat | undefined {
  if (name === "READ_W3C") return { kind: "w3c" };
  if (name === "READ_ZEEK") return { kind: "zeek" };
  let ok = true;
  const text = (key: string, fallback: string, allowEmpty: boolean): string => {
    const a = args.get(key);
    if (!a || a.value === null) return fallback;
    if (typeof a.value !== "string" || (!allowEmpty && a.value === "")) {
      report(
        env,
        "BAD_ARGUMENT",
        `READ_CSV ${key} must be a ${allowEmpty ? "" : "non-empty "}string`,
        a.expr.span,
      );
      ok = false;
      return fallback;
    }
    return a.value;
  };
  const delimiter = text("delimiter", ",", false);
  const quote = text("quote", '"', true);
  if (quote.length > 1) {
    report(
      env,
      "BAD_ARGUMENT",
      "READ_CSV quote must be one character, or '' for none",
      args.get("quote")!.expr.span,
    );
    ok = false;
  }
  if (delimiter.includes("\n") || (quote !== "" && delimiter.includes(quote))) {
    report(
      env,
      "BAD_ARGUMENT",
      "READ_CSV delimiter cannot hold a line break or the quote",
      args.get("delimiter")!.expr.span,
    );
    ok = false;
  }
  let header = true;
  const h = args.get("header");
  if (h && h.value !== null) {
    if (typeof h.value !== "boolean") {
      report(env, "BAD_ARGUMENT", "READ_CSV header must be true or false", h.expr.span);
      ok = false;
    } else header = h.value;
  }
  return ok ? { kind: "csv", delimiter, header, quote: quote === "" ? null : quote } : undefined;
}
