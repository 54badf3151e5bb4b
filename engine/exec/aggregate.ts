/**
 * A `select` with aggregates, grouped by its `group(...)` keys (hash grouping). Each group
 * keeps its first input row and the state of each aggregate; outputs are evaluated on that
 * row extended with the aggregates' results, so non-aggregate columns see the group's keys.
 * Without keys there is exactly one group, even over no input (count 0, the others null).
 *
 * `count` and `sum` are folded into typed arrays indexed by group number (one number and a
 * flag per group, no object per group): with many groups, chasing an accumulator object and
 * its closure per row costs far more than the addition. Other aggregates keep accumulators.
 */

import type { Accumulator, AggregateSpec, Column, Compiled } from "../plan.ts";
import { Interval, type Row, type Value } from "../values.ts";
import { estimateBytes } from "../value_ops.ts";
import { BATCH_ROWS, type BatchStream, checkCancelled, type ExecContext } from "./context.ts";
import { GroupTable } from "./group_table.ts";

export interface AggregateOptions {
  readonly keys: readonly Compiled[];
  readonly aggregates: readonly AggregateSpec[];
  readonly outputs: readonly Column[];
}

const SEEN = 1;
const INTERVAL = 2;

/** Per-group numbers (a count or a total) and flags (SEEN, INTERVAL), grown by doubling. */
class FoldSlots {
  values = new Float64Array(64);
  flags = new Uint8Array(64);

  ensure(groups: number): void {
    if (groups <= this.values.length) return;
    const size = Math.max(groups, this.values.length * 2);
    const values = new Float64Array(size);
    values.set(this.values);
    const flags = new Uint8Array(size);
    flags.set(this.flags);
    this.values = values;
    this.flags = flags;
  }
}

export async function* aggregateRows(
  input: BatchStream,
  options: AggregateOptions,
  ctx: ExecContext,
): BatchStream {
  const { keys, aggregates, outputs } = options;
  const table = new GroupTable(keys);
  const firsts: Row[] = [];
  const n = aggregates.length;
  const args = aggregates.map((a) => a.arg);
  const folds = aggregates.map((a) => (a.fold === undefined ? null : new FoldSlots()));
  const kinds = aggregates.map((a) => a.fold ?? "accumulate");
  const generic = kinds.some((k) => k === "accumulate");
  // Per group: the accumulators of the aggregates that are not folded (null where folded) and
  // what each reported holding (distinct sets, arrays), already charged.
  const accumulators: (Accumulator | null)[][] = [];
  const held: number[][] = [];
  let tracks: boolean[] | null = null;
  const groupBytes = 64 * (n + 1);

  const newGroup = (g: number, first: Row): void => {
    firsts.push(first);
    for (const f of folds) f?.ensure(g + 1);
    if (generic) {
      const accs = aggregates.map((a, i) => (folds[i] === null ? a.create() : null));
      tracks ??= accs.map((acc) => acc !== null && acc.bytes !== undefined);
      accumulators.push(accs);
      held.push(accs.map(() => 0));
    }
  };

  let charged = 0;
  try {
    for await (const batch of input) {
      checkCancelled(ctx.signal);
      let bytes = 0;
      for (let r = 0; r < batch.length; r++) {
        const row = batch[r];
        let g = table.find(row);
        if (g < 0) {
          g = table.add();
          newGroup(g, row);
          bytes += estimateBytes(row) + groupBytes;
        }
        for (let i = 0; i < n; i++) {
          const arg = args[i];
          // count(*) counts rows: it gets a non-null marker for each.
          const v: Value = arg === null ? true : arg(row);
          switch (kinds[i]) {
            case "count":
              if (v !== null) folds[i]!.values[g]++;
              break;
            case "sum": {
              if (v === null) break;
              const f = folds[i]!;
              if (typeof v === "number") {
                f.values[g] += v;
                f.flags[g] |= SEEN;
              } else if (v instanceof Interval) {
                f.values[g] += v.ms;
                f.flags[g] |= SEEN | INTERVAL;
              } else aggregates[i].create().add(v); // throws sum's own error for the value
              break;
            }
            default: {
              const acc = accumulators[g][i]!;
              acc.add(v);
              if (tracks![i] && acc.bytes !== held[g][i]) {
                bytes += acc.bytes! - held[g][i];
                held[g][i] = acc.bytes!;
              }
            }
          }
        }
      }
      if (bytes > 0) {
        ctx.memory.take(bytes, "group");
        charged += bytes;
      }
    }
    if (keys.length === 0 && table.size === 0) newGroup(table.addEmpty(), {});
    let out: Row[] = [];
    for (let g = 0; g < firsts.length; g++) {
      const row: Row = { ...firsts[g] };
      for (let i = 0; i < n; i++) row[aggregates[i].slot] = result(i, g);
      const shaped: Row = {};
      for (const c of outputs) shaped[c.name] = c.fn(row);
      out.push(shaped);
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

  function result(i: number, g: number): Value {
    const f = folds[i];
    if (f === null) return accumulators[g][i]!.result();
    if (kinds[i] === "count") return f.values[g];
    const flags = f.flags[g];
    if ((flags & SEEN) === 0) return null;
    return (flags & INTERVAL) !== 0 ? new Interval(f.values[g]) : f.values[g];
  }
}
