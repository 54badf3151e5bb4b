/**
 * Zone maps: from a filter pushed into a source, the test that tells a cached block none of
 * whose rows can pass (engine/exec/cached_scan.ts skips it). Comparisons of a field with a
 * constant number or timestamp (`bytes > 1000`, `ts >= $from`, `now() - 1h < ts`) are read
 * against the block's minimum and maximum of that field, through `and` (any conjunct rules the
 * block out) and `or` (every disjunct does); anything else may match.
 *
 *   zoneTest(filter, ctx)?.(meta) // false: no row of the block passes the filter
 *
 * A comparison with null is not true, so a block whose field is null or absent in every row
 * has no minimum and passes no comparison. A negated filter (`where not …`) prunes nothing.
 */

import type { Expr } from "../front/ast.ts";
import type { ExprOrigin, PushedFilter } from "../plan/plan.ts";
import type { ExecContext } from "../plan/context.ts";
import type { BlockMeta, BlockTest, ColumnMeta } from "../fs/column_block.ts";
import { constantValue } from "../expr/compile_expr.ts";
import { Timestamp } from "../values/values.ts";

export type ZoneTest = (meta: BlockMeta) => boolean;

type Bound = (columns: ReadonlyMap<string, ColumnMeta>) => boolean;

const FLIP: Record<string, string> = { "<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=" };

/** The fields whose zone maps `filter` is checked against (explain()); empty: none. */
export function zoneFields(
  filter: PushedFilter | null | undefined,
  ctx: Pick<ExecContext, "timeZone" | "now">,
): string[] {
  const fields: string[] = [];
  zoneTest(filter ?? undefined, ctx, fields);
  return [...new Set(fields)];
}

/**
 * The expression a pushed filter was compiled from and the value of its parts that name no
 * field (undefined for the others); null for a negated filter or one without its origin.
 */
function readFilter(
  filter: PushedFilter | null | undefined,
  ctx: Pick<ExecContext, "timeZone" | "now">,
): { readonly origin: ExprOrigin; readonly constant: (e: Expr) => unknown } | null {
  const f = filter as
    | (PushedFilter & { condition?: { origin?: ExprOrigin }; negated?: boolean })
    | undefined;
  const origin = f?.condition?.origin;
  if (!origin || f?.negated) return null;
  const scope = {
    fields: origin.fields === null ? null : new Map(origin.fields.map((x) => [x.name, x])),
    params: origin.params,
    timeZone: ctx.timeZone,
    now: ctx.now,
  };
  const constant = (e: Expr): unknown => {
    if (mentionsField(e)) return undefined;
    try {
      return constantValue(e, scope)?.value;
    } catch {
      return undefined;
    }
  };
  return { origin, constant };
}

/** The test of `filter`'s blocks, or null when it names no bound a zone map can check. */
export function zoneTest(
  filter: PushedFilter | undefined,
  ctx: Pick<ExecContext, "timeZone" | "now">,
  named?: string[],
): ZoneTest | null {
  const read = readFilter(filter, ctx);
  if (read === null) return null;
  const { origin, constant } = read;
  const bound = boundOf(origin.expr, constant, named);
  if (bound === null) return null;
  return (meta) => {
    const columns = new Map(meta.columns.map((c) => [c.name, c]));
    return bound(columns);
  };
}

/**
 * A filter's comparisons of a field with a constant, as a cached block tests them on its typed
 * columns (column_block.ts's BlockScan.test) instead of calling the filter on a row of each:
 * `num` compares with a number, `ts` with a timestamp's milliseconds.
 */
export type ColumnTest = BlockTest;

/**
 * The comparisons of `filter` a block can test on its columns, and whether they are the whole
 * filter (`exact`: a row they pass is one it keeps); null when it has none (or is negated).
 * Through `and`, a conjunct that is no such comparison is left to the filter (not exact); an
 * `or` needs both sides. A comparison is true only where the field has a value, as the
 * filter's (with null it is not true), so a test through `and` and `or` is true exactly where
 * the filter's condition is.
 */
export function columnTest(
  filter: PushedFilter | null | undefined,
  ctx: Pick<ExecContext, "timeZone" | "now">,
): { readonly test: ColumnTest; readonly exact: boolean } | null {
  const read = readFilter(filter, ctx);
  if (read === null) return null;
  const { origin, constant } = read;
  let exact = true;
  const of = (e: Expr): ColumnTest | null => {
    if (e.kind !== "binary") return null;
    if (e.op === "and") {
      const l = of(e.left);
      const r = of(e.right);
      if (l && r) return { and: [l, r] };
      exact = false;
      return l ?? r;
    }
    if (e.op === "or") {
      const l = of(e.left);
      const r = of(e.right);
      return l && r ? { or: [l, r] } : null;
    }
    const compared = comparison(e, constant);
    if (compared === null) return null;
    const { field, op, value } = compared;
    if (typeof value === "number" && Number.isFinite(value)) {
      return { field, op: op as "<", value, kind: "num" };
    }
    if (value instanceof Timestamp && Number.isFinite(value.ms)) {
      return { field, op: op as "<", value: value.ms, kind: "ts" };
    }
    return null;
  };
  const test = of(origin.expr);
  return test === null ? null : { test, exact };
}

/**
 * A comparison of a field with a constant (`<`, `<=`, `=`, ... in FLIP), as `field op value`
 * with the field on the left (`5 < n` is `n > 5`); null for any other expression.
 */
function comparison(
  e: Expr & { readonly kind: "binary" },
  constant: (e: Expr) => unknown,
): { readonly field: string; readonly op: string; readonly value: unknown } | null {
  if (!(e.op in FLIP)) return null;
  if (e.left.kind === "field") return { field: e.left.name, op: e.op, value: constant(e.right) };
  if (e.right.kind === "field") {
    return { field: e.right.name, op: FLIP[e.op]!, value: constant(e.left) };
  }
  return null;
}

function mentionsField(e: unknown): boolean {
  if (Array.isArray(e)) return e.some(mentionsField);
  if (e === null || typeof e !== "object") return false;
  const node = e as Record<string, unknown>;
  if (node.kind === "field" || node.kind === "position" || node.kind === "star") return true;
  for (const [k, v] of Object.entries(node)) if (k !== "span" && mentionsField(v)) return true;
  return false;
}

/** Whether a block may hold a passing row, or null when `e` bounds nothing. */
function boundOf(e: Expr, constant: (e: Expr) => unknown, named?: string[]): Bound | null {
  if (e.kind !== "binary") return null;
  if (e.op === "and") {
    const l = boundOf(e.left, constant, named);
    const r = boundOf(e.right, constant, named);
    if (l && r) return (c) => l(c) && r(c);
    return l ?? r;
  }
  if (e.op === "or") {
    const l = boundOf(e.left, constant, named);
    const r = boundOf(e.right, constant, named);
    return l && r ? (c) => l(c) || r(c) : null;
  }
  const compared = comparison(e, constant);
  if (compared === null) return null;
  const { field, op, value } = compared;
  let x: number;
  let kinds: readonly string[];
  if (typeof value === "number" && !Number.isNaN(value)) {
    x = value;
    kinds = ["i32", "f64"];
  } else if (value instanceof Timestamp) {
    x = value.ms;
    kinds = ["ts"];
  } else return null;
  named?.push(field);
  return (columns) => {
    const c = columns.get(field);
    // Not a column of one of those kinds here (strings, mixed values): it may match.
    if (!c || !kinds.includes(c.kind)) return true;
    if (c.min === undefined || c.max === undefined) {
      // No value in the block: every row compares with null, which is not true.
      return false;
    }
    switch (op) {
      case "<":
        return c.min < x;
      case "<=":
        return c.min <= x;
      case ">":
        return c.max > x;
      case ">=":
        return c.max >= x;
      default:
        return c.min <= x && x <= c.max;
    }
  };
}
