/**
 * `window(...)`: the rows sorted by the `by` keys then the `order` keys (stably: rows ranked
 * equal keep their input order; held by the sort, charged to the memory budget), then one pass
 * that keeps, per group, its row count, its rank, the last values each `lag` reaches back to
 * and each running aggregate's accumulator. A `lead` needs the rows after: a row waits until
 * the rows its leads read have come, or its group has ended (at most the largest lead offset of
 * rows wait). Each row goes out with the window's columns added, in the sorted order.
 */

import type { PlanNode, WindowSpec } from "../plan/plan.ts";
import type { Accumulator } from "../functions/aggregates.ts";
import type { Row, Value } from "../values/values.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "../plan/context.ts";
import { compareKeys, sortRows } from "./sort.ts";

type WindowNode = PlanNode & { kind: "window" };

interface Waiting {
  readonly row: Row;
  readonly values: Value[];
}

export async function* windowRows(
  input: BatchStream,
  node: WindowNode,
  ctx: ExecContext,
): BatchStream {
  const byKeys = node.by.map((k) => ({ ...k, descending: false }));
  const keys = [...byKeys, ...node.order];
  const sorted = keys.length > 0 ? sortRows(input, keys, ctx) : input;
  const fns: readonly WindowSpec[] = node.functions;
  const maxLead = Math.max(0, ...fns.map((f) => (f.kind === "lead" ? f.offset : 0)));

  let group: Value[] | null = null;
  let order: Value[] = [];
  let n = 0, rank = 0, dense = 0;
  let lags: Value[][] = [];
  let accumulators: (Accumulator | null)[] = [];
  let waiting: Waiting[] = [];
  const start = () => {
    n = rank = dense = 0;
    lags = fns.map(() => []);
    accumulators = fns.map((f) => (f.create ? f.create() : null));
  };

  const finish = (w: Waiting): Row => {
    const extended: Row = { ...w.row };
    fns.forEach((f, i) => (extended[f.slot] = w.values[i]!));
    const out: Row = { ...w.row };
    for (const c of node.outputs) out[c.name] = c.fn(extended);
    return out;
  };

  for await (const batch of sorted) {
    checkCancelled(ctx.signal);
    const out: Row[] = [];
    for (const row of batch) {
      const g = node.by.map((k) => k.fn(row));
      if (group === null || compareKeys(g, group, byKeys) !== 0) {
        for (const w of waiting) out.push(finish(w));
        waiting = [];
        group = g;
        start();
      }
      n++;
      const o = node.order.map((k) => k.fn(row));
      if (n === 1 || compareKeys(o, order, node.order) !== 0) {
        rank = n;
        dense++;
        order = o;
      }
      const values: Value[] = fns.map((f, i) => {
        switch (f.kind) {
          case "row_number":
            return n;
          case "rank":
            return rank;
          case "dense_rank":
            return dense;
          case "lag": {
            const past = lags[i]!;
            const v = past.length >= f.offset ? past[past.length - f.offset]! : null;
            past.push(f.arg!(row));
            if (past.length > f.offset) past.shift();
            return v;
          }
          case "lead":
            return null;
          case "aggregate": {
            const acc = accumulators[i]!;
            acc.add(f.arg ? f.arg(row) : true);
            return acc.result();
          }
        }
      });
      waiting.push({ row, values });
      fns.forEach((f, i) => {
        if (f.kind !== "lead") return;
        const back = waiting.length - 1 - f.offset;
        if (back >= 0) waiting[back]!.values[i] = f.arg!(row);
      });
      while (waiting.length > maxLead) out.push(finish(waiting.shift()!));
    }
    if (out.length > 0) yield out;
  }
  if (waiting.length > 0) yield waiting.map(finish);
}
