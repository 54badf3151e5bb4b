/**
 * `join(@other on left.a = right.b)` and `leftjoin(...)`: a hash join that builds on the right
 * side (charged to the memory budget) and streams the left. Null keys never match.
 *
 * A key shared by many rows on both sides multiplies them: a left batch can have millions of
 * joined rows. They go out in batches of at most BATCH_ROWS, each charged to the budget until
 * the consumer asks for the next, with the cancellation signal checked and the event loop given
 * turns in between (TimeSlicer); a `limit` downstream stops the join after the rows it needs.
 */

import type { Compiled } from "../plan/plan.ts";
import type { Row, Value } from "../values/values.ts";
import { combineKeys, estimateBytes, type ValueKey, valueKey } from "../values/value_ops.ts";
import {
  BATCH_ROWS,
  type BatchStream,
  checkCancelled,
  type ExecContext,
  TimeSlicer,
} from "../plan/context.ts";

export interface JoinOptions {
  readonly outer: boolean;
  readonly leftKeys: readonly Compiled[];
  readonly rightKeys: readonly Compiled[];
  /** Null: names are chosen row by row (`right_x` when the left row has `x`). */
  readonly rightNames: ReadonlyMap<string, string> | null;
}

function keyOf(keys: readonly Compiled[], row: Row): string | null {
  const parts: ValueKey[] = [];
  for (const k of keys) {
    const v: Value = k.fn(row);
    if (v === null) return null;
    parts.push(valueKey(v));
  }
  return combineKeys(parts);
}

/** Bytes of a row object beyond its values. */
const ROW_OVERHEAD = 48;

export async function* joinRows(
  left: BatchStream,
  right: BatchStream,
  options: JoinOptions,
  ctx: ExecContext,
): BatchStream {
  const table = new Map<string, Row[]>();
  const own = ctx.slicer ? null : new TimeSlicer(ctx.signal);
  const turns = ctx.slicer ?? own!;
  let charged = 0;
  let outCharged = 0;
  try {
    for await (const batch of right) {
      checkCancelled(ctx.signal);
      let bytes = 0;
      for (const row of batch) {
        const key = keyOf(options.rightKeys, row);
        if (key === null) continue;
        let renamed: Row = row;
        if (options.rightNames) {
          renamed = {};
          for (const [from, to] of options.rightNames) renamed[to] = row[from] ?? null;
        }
        const list = table.get(key);
        if (list) list.push(renamed);
        else table.set(key, [renamed]);
        bytes += estimateBytes(row) + key.length * 2 + ROW_OVERHEAD;
      }
      ctx.memory.take(bytes, "join");
      charged += bytes;
      await turns.check();
    }
    const empty: Row = {};
    for (const to of options.rightNames?.values() ?? []) empty[to] = null;
    const merge = options.rightNames ? (l: Row, r: Row) => ({ ...l, ...r }) : mergeOpen;
    let out: Row[] = [];
    let rowBytes = 0;
    // Hands out `out` charged to the budget; the charge ends when the consumer asks for more.
    const emit = async function* (): AsyncGenerator<readonly Row[]> {
      // The first joined row is measured; the others have the same fields.
      if (rowBytes === 0) rowBytes = estimateBytes(out[0]!) + ROW_OVERHEAD;
      outCharged = rowBytes * out.length;
      ctx.memory.take(outCharged, "join output");
      const batch = out;
      out = [];
      yield batch;
      ctx.memory.release(outCharged);
      outCharged = 0;
      checkCancelled(ctx.signal);
      await turns.check();
    };
    for await (const batch of left) {
      checkCancelled(ctx.signal);
      for (const row of batch) {
        const key = keyOf(options.leftKeys, row);
        const matches = key === null ? undefined : table.get(key);
        if (matches) {
          for (const m of matches) {
            out.push(merge(row, m));
            if (out.length >= BATCH_ROWS) yield* emit();
          }
        } else if (options.outer) {
          out.push({ ...row, ...empty });
          if (out.length >= BATCH_ROWS) yield* emit();
        }
      }
      // A selective join streams what each left batch found, as soon as it found it.
      if (out.length > 0) yield* emit();
      else await turns.check();
    }
  } finally {
    own?.stop();
    ctx.memory.release(charged + outCharged);
  }
}

/** Joins two rows of open schemas: a right field whose name the left row has gets `right_`. */
function mergeOpen(left: Row, right: Row): Row {
  const out: Row = { ...left };
  for (const [k, v] of Object.entries(right)) {
    let name = k;
    while (name in left) name = `right_${name}`;
    out[name] = v;
  }
  return out;
}
