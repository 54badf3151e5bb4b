/**
 * Expressions as the planner needs them: compiled against a schema (mistakes become
 * diagnostics), evaluated as constants, with the fields they read and whether they may be null.
 */

import type { Expr } from "../front/ast.ts";
import { QueryError } from "../front/diagnostics.ts";
import type { Compiled, ExprOrigin } from "../plan/plan.ts";
import type { Field, Schema, Type } from "../values/types.ts";
import type { Value } from "../values/values.ts";
import { type Scope, typeExpr } from "../expr/compile_expr.ts";
import { type PlanEnv, report } from "./env.ts";
import { exprLabel } from "./labels.ts";

export interface TypedExpr extends Compiled {
  readonly type: Type;
  readonly nullable: boolean;
}

/** The rows an expression reads: a schema, open (READ_JSON) or not; null for constants. */
export type Input = { readonly schema: Schema; readonly open?: boolean | undefined } | null;

const NO_FIELDS: ReadonlyMap<string, Field> = new Map();

/** The scope expressions over `input` see. */
export function scopeOf(env: PlanEnv, input: Input): Scope {
  return {
    fields: input === null
      ? NO_FIELDS
      : input.open
      ? null
      : new Map(input.schema.map((f) => [f.name, f])),
    params: env.params,
    timeZone: env.query.timeZone,
    now: env.now,
  };
}

/** Runs `work`; a QueryError it throws becomes a diagnostic and the result undefined. */
export function catching<T>(env: PlanEnv, work: () => T): T | undefined {
  try {
    return work();
  } catch (e) {
    if (!(e instanceof QueryError)) throw e;
    env.diagnostics.push(env.script ? { ...e.diagnostic, script: env.script } : e.diagnostic);
    return undefined;
  }
}

/** Compiles `expr` over `input`; undefined (with a diagnostic) when it does not type. */
export function typed(env: PlanEnv, expr: Expr, input: Input): TypedExpr | undefined {
  const scope = scopeOf(env, input);
  return catching(env, () => {
    const { fn, type } = typeExpr(expr, scope);
    return {
      fn,
      type,
      nullable: mayBeNull(expr, scope),
      label: exprLabel(expr),
      origin: originOf(expr, scope),
    };
  });
}

/** What `expr` is compiled from in `scope`, kept for the scan workers (ExprOrigin). */
export function originOf(expr: Expr, scope: Scope): ExprOrigin {
  const params = new Map<string, { value: Value; type: Type }>();
  const walk = (e: unknown): void => {
    if (Array.isArray(e)) return e.forEach(walk);
    if (e === null || typeof e !== "object") return;
    const node = e as { kind?: unknown; name?: unknown };
    if (node.kind === "param" && typeof node.name === "string") {
      const p = scope.params.get(node.name);
      if (p) params.set(node.name, p);
      return;
    }
    if (node.kind === "literal") return;
    for (const v of Object.values(e)) walk(v);
  };
  walk(expr);
  return { expr, fields: scope.fields === null ? null : [...scope.fields.values()], params };
}

/** Evaluates an expression that reads no field (`$x = ...`, limits, source arguments). */
export function constant(
  env: PlanEnv,
  expr: Expr,
): { value: Value; type: Type } | undefined {
  const compiled = typed(env, expr, null);
  if (!compiled) return undefined;
  return catching(env, () => ({ value: compiled.fn({}), type: compiled.type }));
}

/** A constant that must be a string (paths, patterns). */
export function constantString(env: PlanEnv, expr: Expr, what: string): string | undefined {
  const c = constant(env, expr);
  if (!c) return undefined;
  if (typeof c.value !== "string") {
    report(env, "TYPE_ERROR", `${what} must be a STRING`, expr.span);
    return undefined;
  }
  return c.value;
}

/**
 * The record fields an expression reads, and how: a field read only through member chains
 * (`status.errorCode`, `location.geo.lat`) has the paths of those chains below it, so that a
 * source of nested data may build just those members (READ_JSON); any other use of a field
 * (the field itself, an index, a function of it) reads it whole.
 */
export class FieldReads extends Set<string> {
  /** Per field: the member paths below it that are read, or null when it is read whole. */
  readonly paths = new Map<string, (readonly string[])[] | null>();

  /** Notes a read of `name`: whole, or the members `path` below it. */
  note(name: string, path: readonly string[] | null): void {
    this.add(name);
    const known = this.paths.get(name);
    if (known === null) return;
    if (path === null) this.paths.set(name, null);
    else if (known === undefined) this.paths.set(name, [path]);
    else known.push(path);
  }
}

/** Names of the record fields `expr` reads (with their paths when `into` is a FieldReads). */
export function fieldsRead(expr: Expr, into: Set<string> = new FieldReads()): Set<string> {
  switch (expr.kind) {
    case "field":
      if (into instanceof FieldReads) into.note(expr.name, null);
      else into.add(expr.name);
      break;
    case "literal":
    case "position":
    case "param":
    case "star":
      break;
    case "call":
      for (const a of expr.args) fieldsRead(a, into);
      break;
    case "unary":
      fieldsRead(expr.operand, into);
      break;
    case "binary":
      fieldsRead(expr.left, into);
      fieldsRead(expr.right, into);
      break;
    case "in":
      fieldsRead(expr.operand, into);
      for (const a of expr.list) fieldsRead(a, into);
      break;
    case "isNull":
      fieldsRead(expr.operand, into);
      break;
    case "member": {
      // A chain of members down to a field is a path below that field.
      const path: string[] = [expr.name];
      let at: Expr = expr.object;
      while (at.kind === "member") {
        path.unshift(at.name);
        at = at.object;
      }
      if (at.kind === "field" && into instanceof FieldReads) into.note(at.name, path);
      else fieldsRead(at, into);
      break;
    }
    case "index":
      fieldsRead(expr.object, into);
      fieldsRead(expr.index, into);
      break;
    case "tuple":
      for (const f of expr.fields) fieldsRead(f.value, into);
      break;
  }
  return into;
}

/** Functions that give null only for a null argument. */
const NULL_PRESERVING = new Set([
  "lower",
  "upper",
  "len",
  "trim",
  "contains",
  "starts_with",
  "ends_with",
  "replace",
  "concat",
  "hour",
  "day",
  "time_trunc",
  "format_time",
  "ip_trunc",
  "substr",
  "split",
]);

/**
 * Whether a value of `expr` may be null, statically and on the safe side: the result schema
 * marks such fields nullable (and run.ts adds any field where a null was seen).
 */
export function mayBeNull(expr: Expr, scope: Scope): boolean {
  const any = (list: readonly Expr[]) => list.some((e) => mayBeNull(e, scope));
  switch (expr.kind) {
    case "literal":
      return expr.value === null;
    case "field": {
      const f: Field | undefined = scope.fields?.get(expr.name);
      return f ? f.nullable : true;
    }
    case "param":
      return scope.params.get(expr.name)?.value === null;
    case "position":
    case "member":
    case "index":
      return true;
    case "star":
    case "tuple":
    case "isNull":
      return false;
    case "unary":
      return mayBeNull(expr.operand, scope);
    case "binary":
      // Division by zero gives null.
      if (expr.op === "/" || expr.op === "%") return true;
      return mayBeNull(expr.left, scope) || mayBeNull(expr.right, scope);
    case "in":
      return mayBeNull(expr.operand, scope) || any(expr.list);
    case "call": {
      const name = expr.name.toLowerCase();
      if (name === "count" || name === "count_distinct" || name === "now") return false;
      if (name === "coalesce") return expr.args.every((a) => mayBeNull(a, scope));
      if (NULL_PRESERVING.has(name)) return any(expr.args);
      return true;
    }
  }
}
