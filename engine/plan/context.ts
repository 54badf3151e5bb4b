/**
 * What every operator of a running query shares: the cancellation signal, warnings, progress
 * and the memory budget. Operators are async generators of batches (`BatchStream`).
 */

import type { FileEntry, Warning } from "../contracts/datastore.ts";
import type { Row } from "../values/values.ts";
import process from "node:process";
import { QueryError } from "../front/diagnostics.ts";
import type { ParallelContext } from "../contracts/scan_workers.ts";
import type { ColumnCache } from "../fs/column_cache.ts";
import type { BlockBytesWriter, ColumnVectors } from "../render/render_bytes.ts";

/** A stream of record batches; operators consume one and produce another. */
export type BatchStream = AsyncIterable<readonly Row[]>;

/** Rows per batch that sources aim for. */
export const BATCH_ROWS = 1024;

export interface ExecContext {
  readonly signal: AbortSignal;
  readonly timeZone: string;
  /** Query start, epoch ms: `now()` is the same everywhere in one query. */
  readonly now: number;
  readonly warn: (w: Warning) => void;
  readonly progress: ProgressMeter;
  readonly memory: MemoryBudget;
  /** The query's scan workers, where parts of it may run in them. */
  readonly parallel?: ParallelContext;
  /** In a worker: the files of its share, by the source node (a plan node) they replace. */
  readonly shareFiles?: ReadonlyMap<object, readonly FileEntry[]>;
  /**
   * Files a source has listed already, by its scan's `list` (plan.ts SourceScan): its listing
   * hands them out instead of listing again, which would repeat the listing's warnings
   * (parallel_aggregate.ts lists to share the files, then finds too little to share).
   */
  readonly listed?: ReadonlyMap<object, readonly FileEntry[]>;
  /** What the query has read and produced so far (absent: nobody counts). */
  readonly stats?: QueryStats | undefined;
  /**
   * Set for a PARSE source with `unmatched: 'ignore'`: records the pattern does not match are
   * expected, counted in `stats.recordsUnmatched` and not warned about.
   */
  readonly ignoreUnmatched?: boolean;
  /**
   * The query's slices of work in the server's thread (absent in a scan worker, whose thread
   * serves nobody else): every operator's batches pass it (run.ts), and operators that work on
   * rows they hold take turns through it.
   */
  readonly slicer?: TimeSlicer;
  /**
   * Set by a grouping for the source right under it (Grouping.inputContext): the source may
   * fold records into it instead of handing out their rows (parse_source.ts).
   */
  readonly direct?: DirectGroups;
  /**
   * Set by a result rendered right above the source (engine/exec/render_rows.ts): the source
   * may write a block of records it holds as columns as the result's bytes, without rows
   * (cached_scan.ts).
   */
  readonly rendered?: DirectRender;
  /** The column cache sources read through (engine/exec/cached_scan.ts); absent: none. */
  readonly cache?: ColumnCache | undefined;
}

/**
 * A result's rows written from columns: each of the result's columns is one field of the
 * source's records, unchanged. A source that holds a block of records as columns writes those
 * it keeps in order with the rows it hands out, through `block(...)` (after every row it handed
 * out before), and then hands out an empty batch, so that the bytes written are taken.
 */
export interface DirectRender {
  /** The source's field each of the result's columns is, in order. */
  readonly fields: readonly string[];
  /** The writer of a block's rows from its columns of `fields`, in that order. */
  block(columns: readonly ColumnVectors[]): BlockBytesWriter;
}

/** Single integer keys below this are looked up in an array (DirectGroups.smallInts). */
export const SMALL_INTS = 1 << 16;

/**
 * A grouping with one key that is a field, and only counts and sums of fields (or rows), as a
 * source can fold its records into it without making rows (parse_source.ts): it finds a
 * record's group by the key's number and adds to the group's count or sum in place. A record
 * whose group is new, or whose values it cannot fold as plain numbers, it hands over as a row
 * (`add`) at once, so that the grouping takes every record in input order (first rows, and sums
 * beyond 2^53, are those of rows).
 */
export interface DirectGroups {
  /** The field of the one key. */
  readonly key: string;
  /** Per aggregate: `count` or `sum` of a field, or of rows (`count(*)`: field null). */
  readonly folds: readonly { readonly kind: "count" | "sum"; readonly field: string | null }[];
  /**
   * Takes the row of a record now (charging the memory budget for a new group). What the
   * getters below gave may be stale after it (new groups grow the arrays).
   */
  add(row: Row): void;
  /** The groups of IPv4 keys by their bits (group_table.ts's Uint32Table: `slots`, `shift`). */
  ipv4(): { readonly slots: Uint32Array; readonly shift: number };
  /** Group + 1 by an integer key 0 <= v < 65536 (0: none), or null while there is none. */
  smallInts(): Int32Array | null;
  /**
   * The numbers of fold `i`, by group: counts, or sums (with `flags(i)[g] |= 1` once a sum took
   * a value).
   */
  values(i: number): Float64Array;
  flags(i: number): Uint8Array;
}

/**
 * Counters of a running query, added to in place by the sources (per file and per chunk, not
 * per record) and read by whoever shows the query's status while it runs.
 */
export interface QueryStats {
  filesRead: number;
  bytesRead: number;
  /** Records found in the input, matched or not. */
  recordsRead: number;
  /** Records a pattern or a JSON reader could not take (also counted in recordsRead). */
  recordsUnmatched: number;
  rowsOut: number;
  /** Requests to cloud APIs made on this query's behalf (retries included). */
  cloudRequests: number;
  /** Cloud log hours and content blobs given up (each also a WARN or ERROR warning). */
  cloudLost: number;
  /** Column cache (engine/exec/cached_scan.ts): bytes of files whose rows came from it. */
  cacheBytes: number;
  /** Blocks found in the cache, and of those the ones skipped by their zone maps. */
  cacheBlocks: number;
  cacheBlocksSkipped: number;
}

export function newQueryStats(): QueryStats {
  return {
    filesRead: 0,
    bytesRead: 0,
    recordsRead: 0,
    recordsUnmatched: 0,
    rowsOut: 0,
    cloudRequests: 0,
    cloudLost: 0,
    cacheBytes: 0,
    cacheBlocks: 0,
    cacheBlocksSkipped: 0,
  };
}

/** Throws the signal's reason (an AbortError) when the query was cancelled. */
export function checkCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason ?? new DOMException("cancelled", "AbortError");
}

/**
 * Longest stretch of a query's work in one go, in ms: operators that work on rows they hold
 * (sort, the output of a grouping, a join, an unnest of a large array) give the event loop a
 * turn at least this often, so that the server answers other requests (and a DELETE) meanwhile.
 */
export const SLICE_MS = 10;

/**
 * CPU time (µs, the process's: scan workers' and the collector's threads count too, which keeps
 * slices short while they are busy) of a turn that ran other work: a bare turn of the event loop
 * (`setTimeout(0)`, about 2.2 ms of waiting) takes about 0.1 ms of CPU. CPU rather than elapsed
 * time, which a loaded machine stretches without anyone else being served.
 */
const BUSY_TURN_CPU_US = 1000;

/** While nobody else is served, a slice grows up to this many times SLICE_MS. */
const IDLE_STRETCH = 2.5; // 25 ms

/**
 * Cuts a long synchronous computation into slices of at most SLICE_MS between two turns of the
 * event loop: the work asks `due()` every few hundred rows (cheap) and, when it is, awaits
 * `turn()`, a macrotask (a `setTimeout(0)`: timers and I/O run, unlike a microtask or
 * `setImmediate`, which starve the server's sockets), after which the query's cancellation is
 * checked. A turn the loop took by itself (a file read completing) counts too: a timer armed
 * when the slicer is asked notes when the loop last turned, so a scan whose reads keep the loop
 * turning seldom sleeps. `stop()` clears that timer when the work ends.
 *
 *   for (let i = 0; i < n; i++) {
 *     work(i);
 *     if ((i & 255) === 0 && slicer.due()) await slicer.turn();
 *   }
 */
export class TimeSlicer {
  #turnedAt = performance.now();
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The current slice: SLICE_MS, stretched while turns find nothing else to run. */
  #slice: number;
  constructor(private readonly signal: AbortSignal, private readonly sliceMs = SLICE_MS) {
    this.#slice = sliceMs;
  }

  /** Whether the loop last turned a slice ago or more. */
  due(): boolean {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#turnedAt = performance.now();
    }, 0);
    return performance.now() - this.#turnedAt >= this.#slice;
  }

  /**
   * A turn of the event loop, then throws if the query was cancelled meanwhile. A turn that
   * used more CPU than a bare one served other work (a request), which usually needs a few
   * more turns to finish (read, answer, write): those are given at once, up to one slice.
   */
  async turn(): Promise<void> {
    const started = performance.now();
    for (let first = true;; first = false) {
      const cpu = process.cpuUsage();
      await new Promise<void>((resolve) => setTimeout(resolve, 0));
      const used = process.cpuUsage(cpu);
      if (used.user + used.system < BUSY_TURN_CPU_US) {
        // Nobody was served: the next slice may be longer (a turn costs ~2 ms of waiting).
        if (first) this.#slice = Math.min(this.sliceMs * IDLE_STRETCH, this.#slice * 1.5);
        break;
      }
      this.#slice = this.sliceMs;
      if (performance.now() - started >= this.sliceMs) break;
    }
    this.#turnedAt = performance.now();
    checkCancelled(this.signal);
  }

  /** A turn when the slice is used up (undefined otherwise: no await needed). */
  check(): Promise<void> | undefined {
    return this.due() ? this.turn() : undefined;
  }

  /** Clears the pending timer (work that ends leaves none behind). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * The share of the input consumed, never decreasing. Sources add what they will read
 * (`expect`) as soon as they know it and report what they consumed (`consume`); preparatory
 * work (fetching cloud logs) reports its own fraction with a weight.
 */
export class ProgressMeter {
  #expected = 0;
  #consumed = 0;
  #last = 0;
  #prep = new Map<string, { weight: number; fraction: number }>();

  constructor(private readonly report: (fraction: number) => void = () => {}) {}

  expect(bytes: number): void {
    this.#expected += bytes;
  }

  consume(bytes: number): void {
    this.#consumed += bytes;
    this.#emit();
  }

  /** Progress of a named preparatory task, 0..1, counted as `weight` bytes of input. */
  prepare(task: string, weight: number, fraction: number): void {
    this.#prep.set(task, { weight, fraction: Math.min(1, Math.max(0, fraction)) });
    this.#emit();
  }

  /** The current fraction, below 1 until `finish`. */
  get fraction(): number {
    return this.#last;
  }

  finish(): void {
    this.#last = 1;
    this.report(1);
  }

  #emit(): void {
    let total = this.#expected;
    let done = Math.min(this.#consumed, this.#expected);
    for (const p of this.#prep.values()) {
      total += p.weight;
      done += p.weight * p.fraction;
    }
    if (total <= 0) return;
    // Held below 1: only finish() says the query is done.
    const f = Math.min(0.999, done / total);
    if (f > this.#last) {
      this.#last = f;
      this.report(f);
    }
  }
}

/**
 * Where a source collects the rows it finds. `push` applies a filter pushed into the scan;
 * `take` hands out a batch when one is due: full, or behind a pushed filter a row at a time, so
 * that a selective filter streams its few rows as they are found (as the filter operator did).
 */
export class RowSink {
  rows: Row[] = [];
  readonly batchRows: number;
  /** Adds a row, when the pushed filter (if any) keeps it. */
  readonly push: (row: Row) => void;

  constructor(keep?: (row: Row) => boolean) {
    this.batchRows = keep === undefined ? BATCH_ROWS : 1;
    this.push = keep === undefined
      ? (row) => {
        this.rows.push(row);
      }
      : (row) => {
        if (keep(row)) this.rows.push(row);
      };
  }

  /** The rows collected so far when a batch is due (or, with `all`, whatever is left). */
  take(all = false): Row[] | null {
    if (this.rows.length === 0 || (!all && this.rows.length < this.batchRows)) return null;
    const batch = this.rows;
    this.rows = [];
    return batch;
  }
}

/**
 * Lists a source's files before it reads the first, and expects all their bytes at once: the
 * share of the input consumed must count every file from the start, not one file at a time.
 */
export async function expectFiles(
  files: AsyncIterable<FileEntry> | Iterable<FileEntry>,
  progress: ProgressMeter,
): Promise<FileEntry[]> {
  const list: FileEntry[] = [];
  let bytes = 0;
  for await (const file of files) {
    list.push(file);
    bytes += file.size;
  }
  progress.expect(bytes);
  return list;
}

/** The bytes that group and sort state may take; exceeding it fails the query plainly. */
export class MemoryBudget {
  #used = 0;
  constructor(readonly limit: number) {}

  get used(): number {
    return this.#used;
  }

  /** Takes `bytes` for `what` (e.g. "sort", "group"); throws QueryError MEMORY_LIMIT past the limit. */
  take(bytes: number, what: string): void {
    this.#used += bytes;
    if (this.#used > this.limit) {
      throw new QueryError({
        code: "MEMORY_LIMIT",
        message: `the query's ${what} state exceeds the memory limit of ${
          formatBytes(this.limit)
        } (query.memoryLimit); filter or aggregate more before it`,
      });
    }
  }

  release(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes);
  }
}

export function formatBytes(n: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${Number.isInteger(n) ? n : n.toFixed(1)} ${units[i]}`;
}
