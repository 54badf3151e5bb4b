/**
 * `sort(expr [asc|desc], ...)`: holds every row (charged to the memory budget), then sorts
 * stably; nulls come last whatever the direction. Under a `limit` (`keep`), only the first
 * `keep` rows of the order are held, in a sorted buffer that most rows pass by after one
 * comparison with its last entry.
 */

import type { Compiled } from "../plan.ts";
import type { Row, Value } from "../values.ts";
import { compareValues, estimateBytes } from "../value_ops.ts";
import { BATCH_ROWS, type BatchStream, checkCancelled, type ExecContext } from "./context.ts";

export type SortKeyFn = Compiled & { readonly descending: boolean };

/** Compares two key vectors: nulls last in both directions. */
export function compareKeys(
  a: readonly Value[],
  b: readonly Value[],
  keys: readonly { descending: boolean }[],
): number {
  for (let i = 0; i < keys.length; i++) {
    const x = a[i], y = b[i];
    if (x === null || y === null) {
      if (x === y) continue;
      return x === null ? 1 : -1;
    }
    const c = compareValues(x, y);
    if (c !== 0) return keys[i].descending ? -c : c;
  }
  return 0;
}

export async function* sortRows(
  input: BatchStream,
  keys: readonly SortKeyFn[],
  ctx: ExecContext,
  options: { keep?: number } = {},
): BatchStream {
  if (options.keep !== undefined) {
    yield* topRows(input, keys, ctx, options.keep);
    return;
  }
  const entries: { row: Row; key: Value[]; seq: number }[] = [];
  let charged = 0;
  try {
    for await (const batch of input) {
      checkCancelled(ctx.signal);
      let bytes = 0;
      for (const row of batch) {
        const key = keys.map((k) => k.fn(row));
        bytes += estimateBytes(row) + 16 * keys.length + 48;
        entries.push({ row, key, seq: entries.length });
      }
      ctx.memory.take(bytes, "sort");
      charged += bytes;
    }
    // Array.prototype.sort is stable; seq makes it explicit and independent of the engine.
    entries.sort((a, b) => compareKeys(a.key, b.key, keys) || a.seq - b.seq);
    for (let i = 0; i < entries.length; i += BATCH_ROWS) {
      checkCancelled(ctx.signal);
      yield entries.slice(i, i + BATCH_ROWS).map((e) => e.row);
    }
  } finally {
    ctx.memory.release(charged);
  }
}

/** The first `keep` rows in the order of `keys`, as `sortRows` would give them (stably). */
async function* topRows(
  input: BatchStream,
  keys: readonly SortKeyFn[],
  ctx: ExecContext,
  keep: number,
): BatchStream {
  if (keep <= 0) return;
  // Sorted by key, ties in arrival order: a row that ties with the last one comes after it.
  const top: { row: Row; key: Value[] }[] = [];
  let charged = 0;
  try {
    for await (const batch of input) {
      checkCancelled(ctx.signal);
      let bytes = 0;
      for (const row of batch) {
        const key = keys.map((k) => k.fn(row));
        if (top.length === keep && compareKeys(key, top[keep - 1].key, keys) >= 0) continue;
        let lo = 0;
        let hi = top.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (compareKeys(top[mid].key, key, keys) <= 0) lo = mid + 1;
          else hi = mid;
        }
        top.splice(lo, 0, { row, key });
        bytes += estimateBytes(row) + 16 * keys.length + 48;
        if (top.length > keep) {
          const dropped = top.pop()!;
          bytes -= estimateBytes(dropped.row) + 16 * keys.length + 48;
        }
      }
      if (bytes > 0) ctx.memory.take(bytes, "sort");
      else ctx.memory.release(-bytes);
      charged += bytes;
    }
    for (let i = 0; i < top.length; i += BATCH_ROWS) {
      checkCancelled(ctx.signal);
      yield top.slice(i, i + BATCH_ROWS).map((e) => e.row);
    }
  } finally {
    ctx.memory.release(charged);
  }
}
