/**
 * `window(expr as name, ..., by: key, ..., order: key [desc], ...)`: every input row with the
 * items added, computed over the rows of its `by` group in the `order` (engine/exec/window.ts).
 * Window functions (row_number, rank, dense_rank, lag, lead) and aggregates (running values:
 * the group's rows up to this one) are replaced by slots that the items read, as a grouped
 * select's aggregates are (select.ts); the rest of an item sees the row itself.
 */

import type { Command, Expr } from "../front/ast.ts";
import type { Column, Compiled, PlanNode, WindowSpec } from "../plan/plan.ts";
import { QueryError } from "../front/diagnostics.ts";
import { ANY, type Field, type Type } from "../values/types.ts";
import { AGGREGATES, isAggregate } from "../functions/aggregates.ts";
import {
  isWindowFunction,
  WINDOW_AGGREGATES,
  WINDOW_FUNCTIONS,
} from "../functions/window_functions.ts";
import { type PlanEnv, report } from "./env.ts";
import { FieldReads, fieldsRead, type Input, typed } from "./expressions.ts";
import { exprLabel } from "./labels.ts";
import { itemName, put, replaceCalls } from "./select.ts";

type Window = Command & { kind: "window" };

/** The most rows a lag or lead may reach back or ahead. */
export const MAX_WINDOW_OFFSET = 10_000;

const SLOT = "\u0000win";

export function planWindow(env: PlanEnv, input: PlanNode, command: Window): PlanNode | undefined {
  const reads = new FieldReads();
  const by: Compiled[] = [];
  for (const k of command.by) {
    const t = typed(env, k, input);
    if (!t) return undefined;
    fieldsRead(k, reads);
    by.push(t);
  }
  const order: (Compiled & { descending: boolean })[] = [];
  for (const k of command.order) {
    const t = typed(env, k.expr, input);
    if (!t) return undefined;
    fieldsRead(k.expr, reads);
    order.push({ ...t, descending: k.descending });
  }
  const functions: WindowSpec[] = [];
  const slots: Field[] = [];
  const rewritten: { name: string; expr: Expr; label: string }[] = [];
  let ok = true;
  command.items.forEach((item, i) => {
    const expr = windowCalls(env, item.expr, input, functions, slots);
    if (!expr) return void (ok = false);
    fieldsRead(item.expr, reads);
    rewritten.push({ name: itemName(item, i), expr, label: exprLabel(item.expr) });
  });
  if (!ok) return undefined;
  const known: Field[] = [...input.schema, ...slots];
  for (const { expr } of rewritten) {
    for (const name of fieldsRead(expr)) {
      if (!known.some((f) => f.name === name) && input.open) {
        known.push({ name, type: ANY, nullable: true });
      }
    }
  }
  const scope: Input = { schema: known };
  const outputs: Column[] = [];
  const schema: Field[] = [...input.schema];
  for (const { name, expr, label } of rewritten) {
    const t = typed(env, expr, scope);
    if (!t) return undefined;
    put(outputs, { name, label, fn: t.fn });
    put(schema, { name, type: t.type, nullable: t.nullable });
  }
  return {
    kind: "window",
    schema,
    open: input.open,
    input,
    by,
    order,
    functions,
    outputs,
    reads,
  };
}

/** `expr` with each window function and aggregate call replaced by a field reading its slot. */
function windowCalls(
  env: PlanEnv,
  expr: Expr,
  input: PlanNode,
  functions: WindowSpec[],
  slots: Field[],
): Expr | undefined {
  return replaceCalls(
    expr,
    (call) =>
      isWindowFunction(call.name) || isAggregate(call.name)
        ? windowSlot(env, call, input, functions, slots)
        : null,
  );
}

function windowSlot(
  env: PlanEnv,
  call: Expr & { kind: "call" },
  input: PlanNode,
  functions: WindowSpec[],
  slots: Field[],
): Expr | undefined {
  const name = call.name.toLowerCase();
  const argExpr = call.args[0];
  let arg: Compiled | null = null;
  let argType: Type | null = null;
  if (argExpr && argExpr.kind !== "star") {
    const t = typed(env, argExpr, input);
    if (!t) return undefined;
    arg = t;
    argType = t.type;
  }
  const slot = `${SLOT}${functions.length}`;
  const label = exprLabel(call);
  const window = WINDOW_FUNCTIONS.get(name);
  if (window) {
    let offset = 0;
    if (name === "lag" || name === "lead") {
      offset = 1;
      const o = call.args[1];
      if (o) {
        const value = o.kind === "literal" ? o.value : null;
        if (
          typeof value !== "number" || !Number.isInteger(value) || value < 1 ||
          value > MAX_WINDOW_OFFSET
        ) {
          report(
            env,
            "BAD_ARGUMENT",
            `${name} takes a constant whole number of rows from 1 to ${MAX_WINDOW_OFFSET} as its ` +
              `second argument`,
            o.span,
          );
          return undefined;
        }
        offset = value;
      }
    }
    const { type, nullable } = window.resultType(argType);
    functions.push({ slot, label, kind: window.name, arg: arg && arg.fn, offset });
    slots.push({ name: slot, type, nullable });
    return { kind: "field", name: slot, span: call.span };
  }
  const def = AGGREGATES.get(name)!;
  if (!WINDOW_AGGREGATES.has(name)) {
    report(
      env,
      "TYPE_ERROR",
      `${name} cannot be a running value in window; those are ${[...WINDOW_AGGREGATES].join(", ")}`,
      call.span,
    );
    return undefined;
  }
  if (argExpr === undefined || call.args.length !== 1) return undefined;
  let type: Type;
  try {
    type = def.resultType(argType);
  } catch (e) {
    if (!(e instanceof QueryError)) throw e;
    report(env, "TYPE_ERROR", e.diagnostic.message, call.span);
    return undefined;
  }
  functions.push({
    slot,
    label,
    kind: "aggregate",
    arg: arg && arg.fn,
    offset: 0,
    create: () => def.create(),
  });
  const counts = name === "count" || name === "count_distinct";
  slots.push({ name: slot, type, nullable: !counts });
  return { kind: "field", name: slot, span: call.span };
}
