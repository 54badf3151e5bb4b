/**
 * `select(...)`: a projection, or, when it holds aggregates or a `group` follows, a grouped
 * aggregation. Aggregate calls (also nested: `sum(x) / count(*)`) are replaced by slots that the
 * output expressions read; the rest of an output expression sees the group's first row.
 */

import type { Command, Expr, SelectItem, Span } from "../front/ast.ts";
import type { AggregateSpec, Column, Compiled, PlanNode, RowFn } from "../plan/plan.ts";
import { QueryError } from "../front/diagnostics.ts";
import { ANY, type Field, type Type } from "../values/types.ts";
import { AGGREGATES, isAggregate } from "../functions/aggregates.ts";
import { SPREAD_PREFIX } from "../exec/project.ts";
import { isTuple } from "../values/values.ts";
import { type PlanEnv, report } from "./env.ts";
import { FieldReads, fieldsRead, type Input, originOf, scopeOf, typed } from "./expressions.ts";
import { exprLabel } from "./labels.ts";

type Select = Command & { kind: "select" };
type Group = Command & { kind: "group" };

/** Whether `expr` calls an aggregate function anywhere. */
export function containsAggregate(expr: Expr): boolean {
  switch (expr.kind) {
    case "call":
      return isAggregate(expr.name) || expr.args.some(containsAggregate);
    case "unary":
      return containsAggregate(expr.operand);
    case "binary":
      return containsAggregate(expr.left) || containsAggregate(expr.right);
    case "in":
      return containsAggregate(expr.operand) || expr.list.some(containsAggregate);
    case "isNull":
      return containsAggregate(expr.operand);
    case "member":
      return containsAggregate(expr.object);
    case "index":
      return containsAggregate(expr.object) || containsAggregate(expr.index);
    case "tuple":
      return expr.fields.some((f) => containsAggregate(f.value));
    default:
      return false;
  }
}

/** The output name of the item at 0-based `index`. */
export function itemName(item: SelectItem, index: number): string {
  if (item.alias !== null) return item.alias;
  return item.expr.kind === "field" ? item.expr.name : `f_${index + 1}`;
}

/** Adds `column` to the output, a later column of the same name replacing the earlier. */
export function put<T extends { name: string }>(list: T[], column: T): void {
  const at = list.findIndex((c) => c.name === column.name);
  if (at >= 0) list[at] = column;
  else list.push(column);
}

export function planProject(env: PlanEnv, input: PlanNode, select: Select): PlanNode | undefined {
  const columns: Column[] = [];
  const schema: Field[] = [];
  let reads: Set<string> | null = new FieldReads();
  let ok = true;
  let spreads = false;
  select.items.forEach((item, i) => {
    if (item.expr.kind === "star") {
      reads = null;
      for (const f of input.schema) {
        const name = f.name;
        const origin = originOf({ kind: "field", name, span: item.span }, scopeOf(env, input));
        put(columns, { name, label: name, fn: (row) => row[name] ?? null, origin });
        put(schema, f);
      }
      return;
    }
    const t = typed(env, item.expr, input);
    if (!t) return void (ok = false);
    if (reads) fieldsRead(item.expr, reads);
    if (item.spread) {
      const field = (item.expr as Expr & { kind: "field" }).name;
      if (t.type.kind === "TUPLE") {
        // Known members: a column each, named as the member.
        for (const m of t.type.fields) {
          const member = m.name;
          const fn: RowFn = (row) => {
            const v = t.fn(row);
            return isTuple(v) ? v[member] ?? null : null;
          };
          put(columns, { name: member, label: `${field}.${member}`, fn });
          put(schema, { name: member, type: m.type, nullable: m.nullable || t.nullable });
        }
        return;
      }
      if (t.type.kind !== "ANY") {
        report(env, "TYPE_ERROR", `${field}.* needs a TUPLE, found ${t.type.kind}`, item.span);
        return void (ok = false);
      }
      // Members known only row by row (READ_JSON): the project spreads them (SPREAD_PREFIX).
      spreads = true;
      put(columns, {
        name: `${SPREAD_PREFIX}${field}`,
        label: `${field}.*`,
        fn: t.fn,
        ...(t.origin ? { origin: t.origin } : {}),
      });
      return;
    }
    const name = itemName(item, i);
    put(columns, { name, label: t.label, fn: t.fn, ...(t.origin ? { origin: t.origin } : {}) });
    put(schema, { name, type: t.type, nullable: t.nullable });
  });
  if (!ok) return undefined;
  if (spreads) {
    const star = input.open === true && select.items.some((i) => i.expr.kind === "star");
    return { kind: "project", schema, open: true, input, columns, copyInput: star, reads };
  }
  if (input.open && select.items.some((i) => i.expr.kind === "star")) {
    // The fields of an open input are known only row by row: `*` copies each row whole.
    const own = columns.filter((c) =>
      !input.schema.some((f) => f.name === c.name) || c.label !== c.name
    );
    return {
      kind: "project",
      schema,
      open: true,
      input,
      columns: own,
      copyInput: true,
      reads: null,
    };
  }
  return { kind: "project", schema, input, columns, copyInput: false, reads };
}

interface Rewrite {
  readonly specs: AggregateSpec[];
  readonly slots: Field[];
}

/** `expr` with each aggregate call replaced by a field reading its slot. */
function extractAggregates(
  env: PlanEnv,
  expr: Expr,
  input: Input,
  into: Rewrite,
): Expr | undefined {
  return replaceCalls(
    expr,
    (call) => isAggregate(call.name) ? aggregateSlot(env, call, input, into) : null,
  );
}

/**
 * `expr` with the calls `slot` takes replaced by what it gives (undefined: a reported
 * mistake, and the whole is undefined); it answers null for a call to keep, whose arguments
 * are walked. Aggregates in a select, window functions in a window (window.ts).
 */
export function replaceCalls(
  expr: Expr,
  slot: (call: Expr & { kind: "call" }) => Expr | undefined | null,
): Expr | undefined {
  const walk = (e: Expr): Expr | undefined => {
    switch (e.kind) {
      case "call": {
        const taken = slot(e);
        if (taken !== null) return taken;
        const args: Expr[] = [];
        for (const a of e.args) {
          const r = walk(a);
          if (!r) return undefined;
          args.push(r);
        }
        return { ...e, args };
      }
      case "unary": {
        const operand = walk(e.operand);
        return operand && { ...e, operand };
      }
      case "binary": {
        const left = walk(e.left), right = walk(e.right);
        return left && right && { ...e, left, right };
      }
      case "in": {
        const operand = walk(e.operand);
        const list = e.list.map(walk);
        if (!operand || list.some((x) => !x)) return undefined;
        return { ...e, operand, list: list as Expr[] };
      }
      case "isNull": {
        const operand = walk(e.operand);
        return operand && { ...e, operand };
      }
      case "member": {
        const object = walk(e.object);
        return object && { ...e, object };
      }
      case "index": {
        const object = walk(e.object), index = walk(e.index);
        return object && index && { ...e, object, index };
      }
      case "tuple": {
        const fields = e.fields.map((f) => ({ ...f, value: walk(f.value) }));
        if (fields.some((f) => !f.value)) return undefined;
        return { ...e, fields: fields as typeof e.fields };
      }
      default:
        return e;
    }
  };
  return walk(expr);
}

function aggregateSlot(
  env: PlanEnv,
  call: Expr & { kind: "call" },
  input: Input,
  into: Rewrite,
): Expr | undefined {
  const name = call.name.toLowerCase();
  const def = AGGREGATES.get(name)!;
  const argExpr = call.args[0];
  let arg: Compiled | null = null;
  let argType: Type | null = null;
  if (argExpr && argExpr.kind !== "star") {
    if (containsAggregate(argExpr)) {
      report(env, "TYPE_ERROR", `an aggregate cannot be nested in '${name}'`, argExpr.span);
      return undefined;
    }
    const t = typed(env, argExpr, input);
    if (!t) return undefined;
    arg = t;
    argType = t.type;
  }
  const params: number[] = [];
  for (const [i, paramName] of (def.params?.names ?? []).entries()) {
    const e = call.args[i + 1];
    const value = e && constantNumber(e);
    if (e === undefined || value === undefined) {
      report(
        env,
        "BAD_ARGUMENT",
        `${name} takes a constant number as its argument '${paramName}'`,
        (e ?? call).span,
      );
      return undefined;
    }
    const problem = def.params!.check(value, i);
    if (problem !== null) {
      report(env, "BAD_ARGUMENT", problem, e.span);
      return undefined;
    }
    params.push(value);
  }
  let resultType: Type;
  try {
    resultType = def.resultType(argType);
  } catch (e) {
    if (!(e instanceof QueryError)) throw e;
    report(env, "TYPE_ERROR", e.diagnostic.message, call.span);
    return undefined;
  }
  const slot = `\u0000agg${into.specs.length}`;
  into.specs.push({
    slot,
    label: exprLabel(call),
    name,
    arg: arg && arg.fn,
    ...(arg?.origin ? { argOrigin: arg.origin } : {}),
    create: () => def.create(params),
    ...(params.length > 0 ? { params } : {}),
    ...(name === "count" || name === "sum" ? { fold: name } : {}),
    ...(argExpr?.kind === "field" ? { argField: argExpr.name } : {}),
  });
  const counts = name === "count" || name === "count_distinct";
  into.slots.push({ name: slot, type: resultType, nullable: !counts });
  return { kind: "field", name: slot, span: call.span };
}

/** The group keys: output names and positions stand for their select items' expressions. */
function groupKeys(
  env: PlanEnv,
  select: Select,
  group: Group | null,
): { expr: Expr; span: Span }[] | undefined {
  if (!group) return [];
  const named = new Map<string, SelectItem>();
  select.items.forEach((item, i) => named.set(itemName(item, i), item));
  const keys: { expr: Expr; span: Span }[] = [];
  for (const key of group.keys) {
    let expr: Expr = key;
    if (key.kind === "position") {
      const item = select.items[key.index - 1];
      if (!item) {
        report(
          env,
          "UNKNOWN_NAME",
          `group position @${key.index} is out of range: the select has ${select.items.length} columns`,
          key.span,
        );
        return undefined;
      }
      expr = item.expr;
    } else if (key.kind === "field" && named.has(key.name)) {
      expr = named.get(key.name)!.expr;
    }
    if (containsAggregate(expr)) {
      report(env, "TYPE_ERROR", `cannot group by an aggregate (${exprLabel(expr)})`, key.span);
      return undefined;
    }
    keys.push({ expr, span: key.span });
  }
  return keys;
}

export function planAggregate(
  env: PlanEnv,
  input: PlanNode,
  select: Select,
  group: Group | null,
): PlanNode | undefined {
  const rewrite: Rewrite = { specs: [], slots: [] };
  const reads = new FieldReads();
  const keyExprs = groupKeys(env, select, group);
  if (!keyExprs) return undefined;
  const keys: Compiled[] = [];
  for (const k of keyExprs) {
    const t = typed(env, k.expr, input);
    if (!t) return undefined;
    fieldsRead(k.expr, reads);
    keys.push(k.expr.kind === "field" ? { ...t, field: k.expr.name } : t);
  }
  const rewritten: { name: string; expr: Expr; label: string }[] = [];
  let ok = true;
  select.items.forEach((item, i) => {
    if (item.expr.kind === "star" || item.spread) {
      report(env, "TYPE_ERROR", "'*' cannot be used in a select with aggregates", item.span);
      return void (ok = false);
    }
    const expr = extractAggregates(env, item.expr, input, rewrite);
    if (!expr) return void (ok = false);
    fieldsRead(item.expr, reads);
    rewritten.push({ name: itemName(item, i), expr, label: exprLabel(item.expr) });
  });
  if (!ok) return undefined;
  // Closed even over an open input, so that the slots keep their types: the input fields the
  // outputs read are added, typed ANY, when the input schema does not know them.
  const known: Field[] = [...input.schema, ...rewrite.slots];
  for (const { expr } of rewritten) {
    for (const name of fieldsRead(expr)) {
      if (!known.some((f) => f.name === name) && input.open) {
        known.push({ name, type: ANY, nullable: true });
      }
    }
  }
  const outputScope: Input = { schema: known };
  const outputs: Column[] = [];
  const schema: Field[] = [];
  for (const { name, expr, label } of rewritten) {
    const t = typed(env, expr, outputScope);
    if (!t) return undefined;
    put(outputs, { name, label, fn: t.fn, ...(t.origin ? { origin: t.origin } : {}) });
    // With no group, the parts outside aggregates read an empty row over empty input.
    const readsInput = [...fieldsRead(expr)].some((f) => !isSlot(f));
    put(schema, { name, type: t.type, nullable: t.nullable || (keys.length === 0 && readsInput) });
  }
  return { kind: "aggregate", schema, input, keys, aggregates: rewrite.specs, outputs, reads };
}

/** The value of a number literal (a negative one is folded by the parser), else undefined. */
function constantNumber(e: Expr): number | undefined {
  return e.kind === "literal" && typeof e.value === "number" ? e.value : undefined;
}

function isSlot(field: string): boolean {
  return field.startsWith("\u0000agg");
}
