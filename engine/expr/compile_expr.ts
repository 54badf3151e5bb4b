/**
 * Static types and compilation of expressions (ast.ts `Expr`) into row functions. Both walk
 * the tree once: types are checked as the code is built, constants are folded, and every user
 * mistake is a QueryError (TYPE_ERROR, UNKNOWN_NAME, ARITY) at the expression's position.
 *
 * @example
 * // `cond` is the Expr of `status >= 500` (from parse()), `scope` types `status` as INTEGER
 * compileExpr(cond, scope)({ status: 503 }) // true
 */

import { assertNever, type Expr } from "../front/ast.ts";
import { didYouMean, QueryError } from "../front/diagnostics.ts";
import { AGGREGATES } from "../functions/aggregates.ts";
import type { RowFn } from "../plan/plan.ts";
import {
  ANY,
  type Field,
  isNumeric,
  NULL_TYPE,
  scalar,
  tupleOf,
  type Type,
  typeToString,
} from "../values/types.ts";
import { Interval, isTuple, type Row, type TupleValue, type Value } from "../values/values.ts";
import { typeOfValue } from "../values/value_ops.ts";
import { describeValue } from "./coerce.ts";
import { compileBinary } from "./compile_binary.ts";
import { compileCall } from "./compile_call.ts";
import { compileIn } from "./compile_in.ts";
import { fail, type Scope, typeError } from "./scope.ts";
import { constant, folded, type Typed } from "./typed.ts";

export type { Scope } from "./scope.ts";

/** The row function of `expr`; throws QueryError for a mistake in it. */
export function compileExpr(expr: Expr, scope: Scope): (row: Row) => Value {
  return typeExpr(expr, scope).fn;
}

/** The value of an expression that reads no field (`limit(10)`, init defaults), or undefined. */
export function constantValue(expr: Expr, scope: Scope): { value: Value } | undefined {
  return typeExpr(expr, scope).constant;
}

/** Type, row function and (for constants) value of `expr` in one pass. */
export function typeExpr(expr: Expr, scope: Scope): Typed {
  switch (expr.kind) {
    case "literal": {
      const type = expr.numberKind && typeof expr.value === "number"
        ? scalar(expr.numberKind)
        : typeOfValue(expr.value);
      return constant(type, expr.value, expr.span);
    }
    case "field":
      return fieldAccess(expr.name, expr.span, scope);
    case "param": {
      const p = scope.params.get(expr.name);
      if (!p) {
        return fail(
          "UNKNOWN_NAME",
          `unknown constant '$${expr.name}'${didYouMean(expr.name, scope.params.keys())}`,
          expr.span,
        );
      }
      return constant(p.type, p.value, expr.span);
    }
    case "position":
      return fail(
        "TYPE_ERROR",
        `a position key @${expr.index} may only stand alone in group(...) and sort(...)`,
        expr.span,
      );
    case "star":
      return fail("TYPE_ERROR", `'*' may only be used in count(*) and select(*)`, expr.span);
    case "call":
      return callExpr(expr, scope);
    case "unary":
      return unaryExpr(expr.op, typeExpr(expr.operand, scope), expr.span);
    case "binary":
      return compileBinary(
        expr.op,
        typeExpr(expr.left, scope),
        typeExpr(expr.right, scope),
        expr.span,
        scope.timeZone,
      );
    case "in":
      return compileIn(
        typeExpr(expr.operand, scope),
        expr.list.map((e) => typeExpr(e, scope)),
        { isList: expr.isList, negated: expr.negated, span: expr.span, zone: scope.timeZone },
      );
    case "isNull": {
      const operand = typeExpr(expr.operand, scope);
      const f = operand.fn;
      const fn: RowFn = expr.negated ? (row) => f(row) !== null : (row) => f(row) === null;
      return folded(scalar("BOOLEAN"), fn, [operand], expr.span);
    }
    case "member":
      return memberExpr(typeExpr(expr.object, scope), expr.name, expr.span);
    case "index":
      return indexExpr(typeExpr(expr.object, scope), typeExpr(expr.index, scope), expr.span);
    case "tuple": {
      const parts = expr.fields.map((f) => ({ name: f.name, typed: typeExpr(f.value, scope) }));
      const fields: Field[] = parts.map(({ name, typed }) => ({
        name,
        type: typed.type,
        nullable: !(typed.constant && typed.constant.value !== null),
      }));
      const fns = parts.map((p) => [p.name, p.typed.fn] as const);
      const fn: RowFn = (row) => {
        const out: Record<string, Value> = {};
        for (const [name, f] of fns) out[name] = f(row);
        return out;
      };
      return folded(tupleOf(fields), fn, parts.map((p) => p.typed), expr.span);
    }
    default:
      return assertNever(expr);
  }
}

function fieldAccess(name: string, span: Expr["span"], scope: Scope): Typed {
  const fn: RowFn = (row) => row[name] ?? null;
  if (scope.fields === null) return { type: ANY, fn, span };
  const field = scope.fields.get(name);
  if (!field) {
    const known = [...scope.fields.keys()];
    return fail(
      "UNKNOWN_NAME",
      `unknown field '${name}'${didYouMean(name, known)}; the fields are ${
        known.length ? known.join(", ") : "(none)"
      }`,
      span,
    );
  }
  return { type: field.type, fn, span };
}

function callExpr(expr: Extract<Expr, { kind: "call" }>, scope: Scope): Typed {
  const lower = expr.name.toLowerCase();
  const aggregate = AGGREGATES.get(lower);
  if (aggregate) {
    const star = expr.args.length === 1 && expr.args[0]!.kind === "star";
    const wanted = 1 + (aggregate.params?.names.length ?? 0);
    if (!star && expr.args.length !== wanted) {
      fail(
        "ARITY",
        `${lower} takes ${
          wanted === 1 ? "one argument" : `${wanted} arguments`
        }, found ${expr.args.length}`,
        expr.span,
      );
    }
    if (star && lower !== "count") {
      fail("TYPE_ERROR", `${lower}(*) is not allowed; only count takes *`, expr.span);
    }
    const argType = star ? null : typeExpr(expr.args[0]!, scope).type;
    let type: Type;
    try {
      type = aggregate.resultType(argType);
    } catch (e) {
      if (e instanceof QueryError) typeError(e.diagnostic.message, expr.span);
      throw e;
    }
    // The planner computes aggregates per group and reads their results by slot.
    const fn: RowFn = () =>
      typeError(`the aggregate ${lower}(...) can only be used in select`, expr.span);
    return { type, fn, span: expr.span };
  }
  const args = expr.args.map((a) => typeExpr(a, scope));
  return compileCall(expr.name, args, expr.span, scope);
}

function unaryExpr(op: "-" | "not", operand: Typed, span: Expr["span"]): Typed {
  const t = operand.type;
  const f = operand.fn;
  if (op === "not") {
    if (t.kind !== "BOOLEAN" && t.kind !== "ANY" && t.kind !== "NULL") {
      typeError(`not needs a BOOLEAN, found ${typeToString(t)}`, span);
    }
    const fn: RowFn = (row) => {
      const v = f(row);
      if (v === null) return null;
      if (typeof v !== "boolean") typeError(`not needs a BOOLEAN, found ${describeValue(v)}`, span);
      return !v;
    };
    return folded(scalar("BOOLEAN"), fn, [operand], span);
  }
  if (!isNumeric(t) && t.kind !== "INTERVAL" && t.kind !== "ANY" && t.kind !== "NULL") {
    typeError(`cannot negate ${typeToString(t)}`, span);
  }
  const fn: RowFn = (row) => {
    const v = f(row);
    if (v === null) return null;
    if (typeof v === "number") return -v;
    if (v instanceof Interval) return new Interval(-v.ms);
    return typeError(`cannot negate ${describeValue(v)}`, span);
  };
  return folded(t.kind === "NULL" ? NULL_TYPE : t, fn, [operand], span);
}

function memberExpr(object: Typed, name: string, span: Expr["span"]): Typed {
  const t = object.type;
  const f = object.fn;
  if (t.kind === "TUPLE") {
    const field = t.fields.find((x) => x.name === name);
    if (!field) {
      const known = t.fields.map((x) => x.name);
      fail(
        "UNKNOWN_NAME",
        `the tuple has no field '${name}'${didYouMean(name, known)}; its fields are ${
          known.join(", ")
        }`,
        span,
      );
    }
    const fn: RowFn = (row) => {
      const v = f(row) as TupleValue | null;
      return v === null ? null : v[name] ?? null;
    };
    return folded(field.type, fn, [object], span);
  }
  if (t.kind === "ANY" || t.kind === "NULL") {
    // Open data: a value without that field (or not a tuple at all) has no such member.
    const fn: RowFn = (row) => {
      const v = f(row);
      return isTuple(v) ? v[name] ?? null : null;
    };
    return folded(t.kind === "NULL" ? NULL_TYPE : ANY, fn, [object], span);
  }
  return typeError(`cannot read field '${name}' of ${typeToString(t)}`, span);
}

function indexExpr(object: Typed, index: Typed, span: Expr["span"]): Typed {
  const t = object.type;
  if (t.kind !== "ARRAY" && t.kind !== "ANY" && t.kind !== "NULL") {
    typeError(`cannot index ${typeToString(t)}; [n] needs an ARRAY`, span);
  }
  const it = index.type;
  if (it.kind !== "INTEGER" && it.kind !== "LONG" && it.kind !== "ANY" && it.kind !== "NULL") {
    typeError(`an array index must be INTEGER, found ${typeToString(it)}`, index.span);
  }
  const fo = object.fn, fi = index.fn;
  const fn: RowFn = (row) => {
    const a = fo(row);
    if (!Array.isArray(a)) return null;
    const i = fi(row);
    if (typeof i !== "number" || !Number.isInteger(i) || i < 0 || i >= a.length) return null;
    return a[i];
  };
  const type = t.kind === "ARRAY" ? t.element : t.kind === "NULL" ? NULL_TYPE : ANY;
  return folded(type, fn, [object, index], span);
}
