/**
 * `join(@other on left.a = right.b and ...)` / `leftjoin(...)`: the condition must be equalities
 * joined by `and`, each between an expression over the left stream and one over the right.
 * `left.x` / `right.x` name a side; a bare field belongs to the side that has it.
 */

import type { Expr, Span } from "../front/ast.ts";
import type { Compiled, PlanNode } from "../plan/plan.ts";
import { type Field, type Schema, typeToString } from "../values/types.ts";
import { compatible } from "../expr/common_type.ts";
import { type PlanEnv, report } from "./env.ts";
import { fieldsRead, typed } from "./expressions.ts";

type Side = "left" | "right";

function conjuncts(e: Expr): Expr[] {
  return e.kind === "binary" && e.op === "and"
    ? [...conjuncts(e.left), ...conjuncts(e.right)]
    : [e];
}

/** `expr` with `left.x`/`right.x` replaced by `x`, and the sides it reads. */
function unqualify(
  expr: Expr,
  schemas: Record<Side, Schema>,
  sides: Set<Side | "both">,
): Expr {
  const walk = (e: Expr): Expr => {
    if (
      e.kind === "member" && e.object.kind === "field" &&
      (e.object.name === "left" || e.object.name === "right")
    ) {
      const side = e.object.name;
      if (!schemas[side].some((f) => f.name === "left" || f.name === "right")) {
        sides.add(side);
        return { kind: "field", name: e.name, span: e.span };
      }
    }
    switch (e.kind) {
      case "field": {
        const inLeft = schemas.left.some((f) => f.name === e.name);
        const inRight = schemas.right.some((f) => f.name === e.name);
        sides.add(inLeft && inRight ? "both" : inRight ? "right" : "left");
        return e;
      }
      case "call":
        return { ...e, args: e.args.map(walk) };
      case "unary":
        return { ...e, operand: walk(e.operand) };
      case "binary":
        return { ...e, left: walk(e.left), right: walk(e.right) };
      case "in":
        return { ...e, operand: walk(e.operand), list: e.list.map(walk) };
      case "isNull":
        return { ...e, operand: walk(e.operand) };
      case "member":
        return { ...e, object: walk(e.object) };
      case "index":
        return { ...e, object: walk(e.object), index: walk(e.index) };
      case "tuple":
        return { ...e, fields: e.fields.map((f) => ({ ...f, value: walk(f.value) })) };
      default:
        return e;
    }
  };
  return walk(expr);
}

function sideOf(sides: Set<Side | "both">): Side | "both" | null {
  if (sides.has("both") || (sides.has("left") && sides.has("right"))) return "both";
  return sides.has("left") ? "left" : sides.has("right") ? "right" : null;
}

export function planJoin(
  env: PlanEnv,
  left: PlanNode,
  right: PlanNode,
  join: { on: Expr; outer: boolean; span: Span },
): PlanNode | undefined {
  const schemas = { left: left.schema, right: right.schema };
  const leftKeys: Compiled[] = [];
  const rightKeys: Compiled[] = [];
  const leftReads = new Set<string>();
  const rightReads = new Set<string>();
  for (const c of conjuncts(join.on)) {
    if (c.kind !== "binary" || c.op !== "=") {
      report(
        env,
        "TYPE_ERROR",
        "a join condition must be equalities such as left.a = right.b, joined by 'and'",
        c.span,
      );
      return undefined;
    }
    const a = new Set<Side | "both">(), b = new Set<Side | "both">();
    const ea = unqualify(c.left, schemas, a), eb = unqualify(c.right, schemas, b);
    const sa = sideOf(a), sb = sideOf(b);
    let l: Expr, r: Expr;
    if ((sa === "left" || sa === null) && sb === "right") [l, r] = [ea, eb];
    else if (sa === "right" && (sb === "left" || sb === null)) [l, r] = [eb, ea];
    else if (sa === "left" && sb === null) [l, r] = [ea, eb];
    else {
      report(
        env,
        "TYPE_ERROR",
        "each side of a join equality must read one stream: write left.<field> = right.<field>",
        c.span,
      );
      return undefined;
    }
    const lt = typed(env, l, left), rt = typed(env, r, right);
    if (!lt || !rt) return undefined;
    // Keys of clashing types never match: an empty join, which a typo deserves to hear about.
    if (!compatible(lt.type, rt.type)) {
      report(
        env,
        "TYPE_ERROR",
        `a join cannot match ${typeToString(lt.type)} and ${
          typeToString(rt.type)
        }: left ${lt.label} and right ${rt.label} would never be equal (convert one side, e.g. STRING(...))`,
        c.span,
      );
      return undefined;
    }
    leftKeys.push(lt);
    rightKeys.push(rt);
    fieldsRead(l, leftReads);
    fieldsRead(r, rightReads);
  }
  const leftNames = new Set(left.schema.map((f) => f.name));
  const rightNames = new Map<string, string>();
  const schema: Field[] = [...left.schema];
  for (const f of right.schema) {
    let name = f.name;
    while (leftNames.has(name) || [...rightNames.values()].includes(name)) name = `right_${name}`;
    rightNames.set(f.name, name);
    schema.push({ name, type: f.type, nullable: f.nullable || join.outer });
  }
  return {
    kind: "join",
    schema,
    left,
    right,
    outer: join.outer,
    leftKeys,
    rightKeys,
    rightNames,
    leftReads,
    rightReads,
  };
}
