/**
 * A `select` with aggregates, grouped by its `group(...)` keys (hash grouping). Each group
 * keeps its first input row and one accumulator per aggregate; outputs are evaluated on that
 * row extended with the aggregates' results, so non-aggregate columns see the group's keys.
 * Without keys there is exactly one group, even over no input (count 0, the others null).
 */

import type { Accumulator, AggregateSpec, Column, Compiled } from "../plan.ts";
import type { Row } from "../values.ts";
import { combineKeys, estimateBytes, valueKey } from "../value_ops.ts";
import { BATCH_ROWS, type BatchStream, checkCancelled, type ExecContext } from "./context.ts";

interface Group {
  readonly first: Row;
  readonly accumulators: Accumulator[];
  /** What each accumulator reported holding (distinct sets, arrays), already charged. */
  readonly held: number[];
}

export interface AggregateOptions {
  readonly keys: readonly Compiled[];
  readonly aggregates: readonly AggregateSpec[];
  readonly outputs: readonly Column[];
}

function groupKey(keys: readonly Compiled[], row: Row): unknown {
  if (keys.length === 1) return valueKey(keys[0].fn(row));
  return combineKeys(keys.map((k) => valueKey(k.fn(row))));
}

export async function* aggregateRows(
  input: BatchStream,
  options: AggregateOptions,
  ctx: ExecContext,
): BatchStream {
  const { keys, aggregates, outputs } = options;
  const groups = new Map<unknown, Group>();
  const newGroup = (first: Row): Group => ({
    first,
    accumulators: aggregates.map((a) => a.create()),
    held: aggregates.map(() => 0),
  });
  let charged = 0;
  try {
    for await (const batch of input) {
      checkCancelled(ctx.signal);
      let bytes = 0;
      for (const row of batch) {
        const key = keys.length === 0 ? "" : groupKey(keys, row);
        let group = groups.get(key);
        if (!group) {
          group = newGroup(row);
          groups.set(key, group);
          bytes += estimateBytes(row) + 64 * (aggregates.length + 1);
        }
        for (let i = 0; i < aggregates.length; i++) {
          const arg = aggregates[i].arg;
          // count(*) counts rows: it gets a non-null marker for each.
          const acc = group.accumulators[i];
          acc.add(arg === null ? true : arg(row));
          if (acc.bytes !== undefined && acc.bytes !== group.held[i]) {
            bytes += acc.bytes - group.held[i];
            group.held[i] = acc.bytes;
          }
        }
      }
      if (bytes > 0) {
        ctx.memory.take(bytes, "group");
        charged += bytes;
      }
    }
    if (keys.length === 0 && groups.size === 0) groups.set("", newGroup({}));
    let out: Row[] = [];
    for (const group of groups.values()) {
      const row: Row = { ...group.first };
      aggregates.forEach((a, i) => (row[a.slot] = group.accumulators[i].result()));
      const result: Row = {};
      for (const c of outputs) result[c.name] = c.fn(row);
      out.push(result);
      if (out.length >= BATCH_ROWS) {
        checkCancelled(ctx.signal);
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  } finally {
    ctx.memory.release(charged);
  }
}
