/**
 * `sort(expr [asc|desc], ...)`: holds every row (charged to the memory budget), then sorts
 * stably; nulls come last whatever the direction. Under a `limit` (`keep`), only the first
 * `keep` rows of the order are held: a few in a sorted buffer that most rows pass by after one
 * comparison with its last entry, many in a buffer cut back to the best `keep` whenever it
 * holds twice as many.
 *
 * The sort runs in the server's thread, so it never holds the event loop for long (TimeSlicer):
 * the rows are sorted in runs of RUN_ROWS, with a turn of the loop between runs when the slice
 * is used up, then merged through a heap of the runs' heads, which hands out batches as it goes
 * and also takes turns. Ties are broken by arrival order (`seq`), so the order is total and the
 * result is the one stable sort of the whole input would give.
 */

import type { Compiled } from "../plan/plan.ts";
import type { Row, Value } from "../values/values.ts";
import { compareValues, estimateBytes } from "../values/value_ops.ts";
import {
  BATCH_ROWS,
  type BatchStream,
  checkCancelled,
  type ExecContext,
  TimeSlicer,
} from "../plan/context.ts";

export type SortKeyFn = Compiled & { readonly descending: boolean };

/** Rows sorted in one go (a few ms of work for usual keys). */
export const RUN_ROWS = 4096;

/** Up to this many kept rows, a top-N sort inserts each row into a sorted buffer. */
const INSERT_TOP = 10_000;

/** Compares two key vectors: nulls last in both directions. */
export function compareKeys(
  a: readonly Value[],
  b: readonly Value[],
  keys: readonly { descending: boolean }[],
): number {
  for (let i = 0; i < keys.length; i++) {
    const x = a[i]!, y = b[i]!;
    if (x === null || y === null) {
      if (x === y) continue;
      return x === null ? 1 : -1;
    }
    const c = compareValues(x, y);
    if (c !== 0) return keys[i]!.descending ? -c : c;
  }
  return 0;
}

interface Entry {
  readonly row: Row;
  readonly key: Value[];
  /** Arrival order: breaks ties, so that the sort is stable. */
  readonly seq: number;
  /** What the entry was charged to the memory budget. */
  readonly bytes: number;
}

export async function* sortRows(
  input: BatchStream,
  keys: readonly SortKeyFn[],
  ctx: ExecContext,
  options: {
    keep?: number | undefined;
    /** Tests make runs and the insertion buffer small, so that small inputs take every path. */
    runRows?: number;
    insertTop?: number;
  } = {},
): BatchStream {
  const keep = options.keep;
  const runRows = options.runRows ?? RUN_ROWS;
  if (keep !== undefined && keep <= (options.insertTop ?? INSERT_TOP)) {
    yield* topRows(input, keys, ctx, keep);
    return;
  }
  if (keep !== undefined && keep <= 0) return;
  const own = ctx.slicer ? null : new TimeSlicer(ctx.signal);
  const slicer = ctx.slicer ?? own!;
  const compare = (a: Entry, b: Entry) => compareKeys(a.key, b.key, keys) || a.seq - b.seq;
  let entries: Entry[] = [];
  let seq = 0;
  let charged = 0;
  // After a cut: the last row kept. A row that sorts after it can never be among the best.
  let worst: Entry | null = null;
  // Cut back when twice `keep` are held, and not more often than every RUN_ROWS * 16 rows.
  const cutAt = keep === undefined ? Infinity : Math.max(2 * keep, keep + runRows * 16);
  try {
    for await (const batch of input) {
      checkCancelled(ctx.signal);
      let bytes = 0;
      for (const row of batch) {
        const key = keys.map((k) => k.fn(row));
        if (worst !== null && compareKeys(key, worst.key, keys) >= 0) continue;
        const b = estimateBytes(row) + 16 * keys.length + 56;
        bytes += b;
        entries.push({ row, key, seq: seq++, bytes: b });
      }
      ctx.memory.take(bytes, "sort");
      charged += bytes;
      if (keep !== undefined && entries.length >= cutAt) {
        // Cut back to the best `keep`: a row past them now stays past them.
        const best: Entry[] = [];
        for await (
          const out of mergeRuns(
            await sortedRuns(entries, runRows, compare, slicer),
            compare,
            slicer,
          )
        ) {
          best.push(...out);
          if (best.length >= keep) break;
        }
        best.length = Math.min(best.length, keep);
        let kept = 0;
        for (const e of best) kept += e.bytes;
        ctx.memory.release(charged - kept);
        charged = kept;
        entries = best;
        worst = best.length === keep ? best[keep - 1]! : null;
      }
      await slicer.check();
    }
    const runs = await sortedRuns(entries, runRows, compare, slicer);
    entries = [];
    let left = keep ?? Infinity;
    for await (const out of mergeRuns(runs, compare, slicer)) {
      const rows = out.length <= left
        ? out.map((e) => e.row)
        : out.slice(0, left).map((e) => e.row);
      left -= rows.length;
      yield rows;
      checkCancelled(ctx.signal);
      if (left <= 0) break;
    }
  } finally {
    own?.stop();
    ctx.memory.release(charged);
  }
}

/** `entries` cut into runs of `runRows`, each sorted, with turns of the event loop between runs. */
async function sortedRuns(
  entries: readonly Entry[],
  runRows: number,
  compare: (a: Entry, b: Entry) => number,
  slicer: TimeSlicer,
): Promise<Entry[][]> {
  const runs: Entry[][] = [];
  for (let i = 0; i < entries.length; i += runRows) {
    runs.push(entries.slice(i, i + runRows).sort(compare));
    await slicer.check();
  }
  return runs;
}

/**
 * The entries of sorted `runs` in one order, in batches of BATCH_ROWS: a binary heap of run
 * numbers ordered by each run's next entry. The caller may stop early.
 */
async function* mergeRuns(
  runs: readonly Entry[][],
  compare: (a: Entry, b: Entry) => number,
  slicer: TimeSlicer,
): AsyncGenerator<Entry[]> {
  if (runs.length === 1) {
    const run = runs[0]!;
    for (let i = 0; i < run.length; i += BATCH_ROWS) {
      yield run.slice(i, i + BATCH_ROWS);
      await slicer.check();
    }
    return;
  }
  const pos = new Int32Array(runs.length);
  const heap: number[] = [];
  const less = (a: number, b: number) => compare(runs[a]![pos[a]!]!, runs[b]![pos[b]!]!) < 0;
  const down = (i: number) => {
    const n = heap.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const r = l + 1;
      const c = r < n && less(heap[r]!, heap[l]!) ? r : l;
      if (!less(heap[c]!, heap[i]!)) return;
      [heap[c], heap[i]] = [heap[i]!, heap[c]!];
      i = c;
    }
  };
  for (let r = 0; r < runs.length; r++) if (runs[r]!.length > 0) heap.push(r);
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
  let out: Entry[] = [];
  while (heap.length > 0) {
    const r = heap[0]!;
    out.push(runs[r]![pos[r]!++]!);
    if (pos[r] === runs[r]!.length) {
      const last = heap.pop()!;
      if (heap.length > 0) heap[0] = last;
    }
    down(0);
    if (out.length === BATCH_ROWS) {
      yield out;
      out = [];
      await slicer.check();
    }
  }
  if (out.length > 0) yield out;
}

/** The first `keep` rows in the order of `keys`, as `sortRows` would give them (stably). */
async function* topRows(
  input: BatchStream,
  keys: readonly SortKeyFn[],
  ctx: ExecContext,
  keep: number,
): BatchStream {
  if (keep <= 0) return;
  const own = ctx.slicer ? null : new TimeSlicer(ctx.signal);
  const slicer = ctx.slicer ?? own!;
  // Sorted by key, ties in arrival order: a row that ties with the last one comes after it.
  const top: { row: Row; key: Value[] }[] = [];
  let charged = 0;
  try {
    for await (const batch of input) {
      checkCancelled(ctx.signal);
      let bytes = 0;
      for (const row of batch) {
        const key = keys.map((k) => k.fn(row));
        if (top.length === keep && compareKeys(key, top[keep - 1]!.key, keys) >= 0) continue;
        let lo = 0;
        let hi = top.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (compareKeys(top[mid]!.key, key, keys) <= 0) lo = mid + 1;
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
      await slicer.check();
    }
    for (let i = 0; i < top.length; i += BATCH_ROWS) {
      checkCancelled(ctx.signal);
      yield top.slice(i, i + BATCH_ROWS).map((e) => e.row);
    }
  } finally {
    own?.stop();
    ctx.memory.release(charged);
  }
}
