/** Short text of an expression for plan labels (`printPlan`, explain). */

import type { Expr } from "../front/ast.ts";
import { toText } from "../render/render.ts";

function literalText(expr: Expr & { kind: "literal" }): string {
  const v = expr.value;
  if (typeof v === "string") return `'${v.replaceAll("'", "\\'")}'`;
  return toText(v, { timeZone: "UTC" }) ?? "null";
}

export function exprLabel(expr: Expr): string {
  switch (expr.kind) {
    case "literal":
      return literalText(expr);
    case "field":
      return /^[A-Za-z_][A-Za-z0-9_]*$/.test(expr.name) ? expr.name : `\`${expr.name}\``;
    case "position":
      return `@${expr.index}`;
    case "param":
      return `$${expr.name}`;
    case "star":
      return "*";
    case "call":
      return `${expr.name}(${expr.args.map(exprLabel).join(", ")})`;
    case "unary":
      return expr.op === "not" ? `not ${exprLabel(expr.operand)}` : `-${exprLabel(expr.operand)}`;
    case "binary":
      return `(${exprLabel(expr.left)} ${expr.op} ${exprLabel(expr.right)})`;
    case "in": {
      const list = expr.isList
        ? `(${expr.list.map(exprLabel).join(", ")})`
        : exprLabel(expr.list[0]!);
      return `${exprLabel(expr.operand)}${expr.negated ? " not" : ""} in ${list}`;
    }
    case "isNull":
      return `${exprLabel(expr.operand)} is ${expr.negated ? "not " : ""}null`;
    case "member":
      return `${exprLabel(expr.object)}.${expr.name}`;
    case "index":
      return `${exprLabel(expr.object)}[${exprLabel(expr.index)}]`;
    case "tuple":
      return `(${expr.fields.map((f) => `${f.name}: ${exprLabel(f.value)}`).join(", ")})`;
  }
}
