/**
 * `log-status` over a source whose fields are known only from the data (READ_CSV's header,
 * READ_JSON's members): a name with a `-` written without spaces is that field, not `log`
 * minus `status`. Logs name fields so (VPC flow logs' `log-status`, W3C's `cs-method`); a
 * subtraction of two fields is written with spaces, `a - b`, or over a known schema.
 *
 *   filter(log-status = 'OK')    →    filter(`log-status` = 'OK')     (open input only)
 */

import type { Command, Expr } from "../front/ast.ts";

/** The field a `-` between two fields written without spaces names, or null. */
function joined(expr: Expr): Expr | null {
  if (expr.kind !== "binary" || expr.op !== "-") return null;
  const { left, right } = expr;
  if (left.kind !== "field" || right.kind !== "field") return null;
  // Adjacent: `left` written plainly (a backquoted name is two characters longer), then `-`.
  if (left.span.offset + left.name.length + 1 !== right.span.offset) return null;
  if (!/^[A-Za-z_][\w-]*$/.test(left.name) || !/^[A-Za-z_]\w*$/.test(right.name)) return null;
  return { kind: "field", name: `${left.name}-${right.name}`, span: left.span };
}

function rewrite(value: unknown, skip: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => rewrite(v, new Set()));
  // Only the syntax tree's own plain objects: a literal's value (a network, bytes) stays as is.
  if (value === null || typeof value !== "object") return value;
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] = skip.has(key) ? v : rewrite(v, new Set());
  }
  // Bottom up: `a-b-c` is (a-b)-c, its left already the field `a-b`.
  return joined(out as Expr) ?? out;
}

/** `command` with its hyphenated names as fields; the streams it reads (join, union) as they are. */
export function hyphenatedNames(command: Command): Command {
  const skip = new Set(
    command.kind === "join" ? ["right"] : command.kind === "union" ? ["sources"] : [],
  );
  return rewrite(command, skip) as Command;
}
