/**
 * A source's files read through the column cache (engine/fs/column_cache.ts): the rows of each
 * block of a file come from the cache where a block of the same specification is there and the
 * file is unchanged under it, else from the bytes, by the source's own reader, and are then
 * written to the cache as a by-product.
 *
 *   cachedScan(files, { spec, fields, lines, raw, keep, word, zone }, ctx)
 *
 * A file is cut into blocks by byte ranges [lo, hi) that own the lines starting in them (as the
 * shares of workers are, engine/exec/parallel/shares.ts): lo and hi are multiples of the
 * cache's `blockBytes`, or the ends of what one read covered (a share's cut, the size of a
 * file that has grown since). Any run of blocks from a share's start to its end thus reads its
 * lines exactly once, whichever read wrote them and with however many workers.
 *
 * A block is used when the file is the same: the same device and inode (the entry's key holds
 * the URI; its blocks hold the identity), the same size and modification time as when the block
 * was read, or a larger size (the file grew) with the bytes it read still there, checked by a
 * CRC-32 of the first and last SAMPLE_BYTES it read. A file that shrank, was rewritten (same
 * size, another time), was replaced (another inode) or whose sampled bytes differ has its entry
 * dropped and is read raw. A block whose checksum fails is removed, its lines read raw, and an
 * INFO warning says so.
 *
 * Only files of one record per line that can be opened at an offset are cached; the others are
 * read raw as before. Rows are cached unfiltered: the pushed filter (`keep`) is applied to the
 * rows of both ways, and `zone` skips a block whose minima and maxima show no row can pass.
 *
 * Under a result written from columns (ExecContext.rendered, for a reader that is `written`), a
 * block's rows are written from its columns, the cached block's or those the reader filled, and
 * no row is made (without a cache, PARSE does so itself: parse_source.ts).
 */

import type { FileEntry, Warning } from "../contracts/datastore.ts";
import type { Row } from "../values/values.ts";
import {
  BATCH_ROWS,
  type BatchStream,
  checkCancelled,
  type DirectRender,
  type ExecContext,
  expectFiles,
  newQueryStats,
  ProgressMeter,
} from "../plan/context.ts";
import type { SkipTally } from "../plan/skip_tally.ts";
import { ColumnCache } from "../fs/column_cache.ts";
import {
  type BlockMeta,
  CorruptBlock,
  decodeBlock,
  type DecodedBlock,
  encodeBlock,
  encodeColumns,
  SAMPLE_BYTES,
  UNCACHED,
} from "../fs/column_block.ts";
import { ColumnSink, sinkVectors } from "../pattern/byte_scanner.ts";
import { rangeEntry } from "./parallel/shares.ts";
import { writtenColumns } from "./render_rows.ts";
import { crc32 } from "node:zlib";
import type { ColumnTest, ZoneTest } from "./zone_maps.ts";

export interface CachedRead {
  /** The reader and its specification as plain data (pattern text, JSON paths): part of the key. */
  readonly spec: unknown;
  /** The fields read (null: all): part of the key. */
  readonly fields: readonly string[] | null;
  /** Whether `file` holds one record per line. */
  readonly lines: (file: FileEntry, signal: AbortSignal) => Promise<boolean>;
  /** The source's reader over `files`, unfiltered, in the context given. */
  readonly raw: (files: readonly FileEntry[], ctx: ExecContext) => BatchStream;
  /**
   * The reader again, putting every record of `files` into `sink`'s columns of `names` as it
   * reads it (PARSE's byte scanner, READ_JSON's path reader), unfiltered, and giving no row: a
   * fill under a grouping uses it, and then filters and folds the block's columns as a read
   * from the cache does.
   */
  readonly columns?: {
    readonly names: readonly string[];
    readonly raw: (files: readonly FileEntry[], ctx: ExecContext, sink: ColumnSink) => BatchStream;
  } | undefined;
  /**
   * Nothing between the reader and its consumer reads its rows (PARSE's): a result rendered
   * right above may have them written from a block's columns (ExecContext.rendered).
   */
  readonly written?: boolean;
  /** The pushed filter: only the rows it keeps are handed out. */
  readonly keep?: ((row: Row) => boolean) | undefined;
  /** The fields `keep` reads: a cached block gives it a row of just those. */
  readonly reads?: ReadonlySet<string> | undefined;
  /** `keep`'s comparisons a cached block tests on its columns (zone_maps.ts's columnTest). */
  readonly test?: { readonly test: ColumnTest; readonly exact: boolean } | null | undefined;
  /** The one warning for the records skipped over all files (as the reader would give it). */
  readonly word: (
    files: readonly FileEntry[],
    tally: SkipTally,
    ctx: ExecContext,
  ) => Promise<Warning> | Warning;
  readonly zone?: ZoneTest | null | undefined;
}

/** The rows of `files` through the cache of `ctx` (read raw when it has none). */
export async function* cachedScan(
  files: AsyncIterable<FileEntry> | Iterable<FileEntry>,
  read: CachedRead,
  ctx: ExecContext,
): BatchStream {
  const cache = ctx.cache;
  if (!cache) {
    yield* filtered(read.raw([...await collect(files)], ctx), read.keep);
    return;
  }
  const list = await expectFiles(files, ctx.progress);
  const state: ScanState = { tally: null };
  for (const file of list) {
    checkCancelled(ctx.signal);
    yield* fileRows(file, read, ctx, cache, state);
  }
  // PARSE(unmatched: 'ignore'): records the pattern is not meant for give no warning.
  if (state.tally !== null && !ctx.ignoreUnmatched) {
    const warning = await read.word(list, state.tally, ctx);
    ctx.warn({ ...warning, tally: state.tally } as Warning);
  }
}

/** Files larger than this that are not cut into blocks by lines are not cached. */
export const WHOLE_FILE_BYTES = 64 << 20;

/** Blocks a scan has being written at once (cache.write never fails: it answers false). */
const WRITES_AHEAD = 4;

/** Bytes of the blocks a scan in the server's thread writes (one is encoded in one go). */
export const IN_THREAD_BLOCK_BYTES = 1 << 20;

interface ScanState {
  tally: SkipTally | null;
}

async function collect<T>(items: AsyncIterable<T> | Iterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of items) out.push(x);
  return out;
}

async function* filtered(
  input: BatchStream,
  keep: ((row: Row) => boolean) | undefined,
): BatchStream {
  for await (const batch of input) {
    const rows = keep ? batch.filter(keep) : batch;
    if (rows.length > 0) yield rows;
  }
}

/** Whether `tally` would be the first kept and names a line (its offset then needed). */
function needsLines(state: ScanState, tally: SkipTally | null): boolean {
  return state.tally === null && tally !== null && tally.count > 0 &&
    tally.first.line !== undefined;
}

function addTally(state: ScanState, tally: SkipTally | null, lineOffset: number): void {
  if (tally === null || tally.count === 0) return;
  if (state.tally === null) {
    const first = tally.first.line !== undefined
      ? { ...tally.first, line: tally.first.line + lineOffset }
      : tally.first;
    state.tally = { kind: tally.kind, count: tally.count, first };
  } else {
    state.tally = { ...state.tally, count: state.tally.count + tally.count };
  }
}

/** The rows of one file (or share of one), block by block. */
async function* fileRows(
  entry: FileEntry,
  read: CachedRead,
  ctx: ExecContext,
  cache: ColumnCache,
  state: ScanState,
): BatchStream {
  const base = entry.range?.file ?? entry;
  const start = entry.range?.start ?? 0;
  const end = entry.range?.end ?? base.size;
  // Files of line records that open at an offset are cut into blocks; any other file (a blob, a
  // cloud hour, a JSON array, records across lines) not too large is one block, whole.
  const byLines = base.identity !== undefined && base.openAt !== undefined &&
    await read.lines(base, ctx.signal).catch(() => false);
  const whole = !byLines && base.identity !== undefined && entry.range === undefined &&
    base.size <= WHOLE_FILE_BYTES;
  if (!byLines && !whole) {
    // Read as before, its rows streamed (a file of any size); only its tally is taken.
    const sub = subContext(ctx, true);
    // The reader expects the file's bytes again (its progress): counted once.
    ctx.progress.expect(-entry.size);
    yield* filtered(read.raw([entry], sub.ctx), read.keep);
    addTally(state, sub.tally(), 0);
    return;
  }
  const key = ColumnCache.key([read.spec, read.fields, base.uri]);
  let blocks = await cache.blocks(key);
  // In the server's thread (a slicer), smaller blocks: each is made and decoded in one go.
  const step = whole
    ? Infinity
    : ctx.slicer
    ? Math.min(cache.blockBytes, IN_THREAD_BLOCK_BYTES)
    : cache.blockBytes;
  const stats = ctx.stats;
  // Under a grouping or a result rendered from columns, the reader puts its records into
  // columns as it reads them (below): one sink for all the blocks of the file, emptied for each.
  const render = read.written ? ctx.rendered : undefined;
  const sink: ColumnSink | undefined = read.columns && (ctx.direct || render) && !whole
    ? new ColumnSink(read.columns.names.length)
    : undefined;
  // JSON lines name their line from the entry's start: "\n" in [first, countedTo) of the file,
  // where `first` is the entry's first byte read; counted on only where a block counted its own.
  let first = -1;
  let counted = 0;
  let countedTo = -1;
  const linesBefore = async (at: number): Promise<number> => {
    if (first < 0) return 0;
    if (countedTo < at) {
      counted += await countLines(base, countedTo, at, ctx.signal);
      countedTo = at;
    }
    return counted;
  };
  const advance = (from: number, to: number, n: number) => {
    if (first < 0) first = countedTo = from;
    if (n >= 0 && countedTo === from) {
      counted += n;
      countedTo = to;
    }
  };
  let p = start;
  // Blocks being written (each published whole): at most WRITES_AHEAD, so that a slow disk
  // holds up the scan only past that.
  const writing: Promise<unknown>[] = [];
  // With zone maps to test, a block's header is read first (its identity, its statistics): a
  // block they rule out is skipped having read only that; the others are then read whole. The next block is
  // read so while this one's rows are made (at most one ahead).
  type Loaded = { head: Promise<BlockMeta | null>; body: Promise<DecodedBlock | null> };
  const load = (path: string): Loaded => {
    // Without zone maps to test, every block is read whole: its header from those bytes.
    let head: Promise<BlockMeta | null>;
    let body: Promise<DecodedBlock | null>;
    if (!read.zone) {
      body = cache.read(path);
      head = body.then((block) => block?.meta ?? null);
    } else {
      head = cache.header(path);
      body = head.then((meta) =>
        meta === null || (read.zone && !read.zone(meta)) ? null : cache.read(path)
      );
    }
    // Their failures are met when they are awaited (or never, for a block not used).
    head.catch(() => {});
    body.catch(() => {});
    return { head, body };
  };
  let ahead: { path: string; loaded: Loaded } | null = null;
  const loadBlock = (path: string) => {
    const got = ahead?.path === path ? ahead.loaded : load(path);
    ahead = null;
    return got;
  };
  /** What a block used (read or skipped) counts: its lines, its tally, its records. */
  const account = async (meta: BlockMeta) => {
    const from = meta.end - meta.rawBytes;
    if (needsLines(state, meta.tally)) addTally(state, meta.tally, await linesBefore(from));
    else addTally(state, meta.tally, 0);
    advance(from, meta.end, meta.lines);
    ctx.progress.consume(meta.hi - meta.lo);
    if (stats) {
      stats.recordsRead += meta.records;
      stats.recordsUnmatched += meta.unmatched;
      stats.cacheBlocks++;
    }
  };
  try {
    while (p < end) {
      checkCancelled(ctx.signal);
      let used: BlockMeta | null = null;
      for (const b of blocks.get(p) ?? []) {
        if (b.hi > end) continue;
        let meta: BlockMeta | null;
        let block: DecodedBlock | null = null;
        try {
          const loaded = loadBlock(b.path);
          meta = await loaded.head;
          if (meta === null) continue;
          const same = await unchanged(meta, base, ctx.signal).catch(() => false) &&
            (meta.entire === true) === whole;
          if (!same) {
            await cache.drop(key);
            blocks = new Map();
            break;
          }
          if (!read.zone || read.zone(meta)) {
            block = await loaded.body;
            if (block === null) continue;
          }
        } catch (e) {
          // A block that cannot be read (rights, the disk) is left; its lines are read raw.
          if (!(e instanceof CorruptBlock)) continue;
          await cache.remove(b.path);
          ctx.warn({
            level: "INFO",
            message:
              `the column cache's block of '${base.uri}' at ${b.lo} was corrupt (${e.message}); removed, read from the file`,
          });
          continue;
        }
        used = meta;
        await account(meta);
        if (block === null) {
          // Ruled out by its zone maps: no row of it can pass the filter.
          if (stats) stats.cacheBlocksSkipped++;
          break;
        }
        const next = meta.hi < end ? blocks.get(meta.hi)?.find((x) => x.hi <= end) : undefined;
        if (next !== undefined) ahead = { path: next.path, loaded: load(next.path) };
        if (stats) stats.cacheBytes += meta.rawBytes;
        // A result rendered right above writes the rows from the columns (ExecContext.rendered).
        if (render && (yield* writtenBlock(block, read, render, ctx))) break;
        // The filter sees only the fields it reads; a grouping right above takes what it can
        // fold without a row (ExecContext.direct), the rest of the rows in order.
        const rows = block.scan({
          keep: read.keep,
          reads: read.reads,
          test: read.test,
          fold: ctx.direct,
        });
        yield* batches(rows, undefined, ctx);
        break;
      }
      if (used !== null) {
        p = used.hi;
        continue;
      }
      // Raw: up to the next block boundary, the next cached block, or the end.
      let q = Math.min(end, (Math.floor(p / step) + 1) * step);
      for (const lo of blocks.keys()) if (lo > p && lo < q) q = lo;
      // Under a grouping, the reader puts its records into columns as it reads them (no row
      // made), and the block's columns are then filtered and folded as a cached block's are.
      sink?.reset();
      const got = await rawSegment(base, p, q, ctx, read, whole, sink);
      if (got.first >= 0) {
        if (needsLines(state, got.tally)) addTally(state, got.tally, await linesBefore(got.first));
        else addTally(state, got.tally, 0);
        advance(got.first, got.end, got.lines);
      } else addTally(state, got.tally, 0);
      let rows: readonly Row[] | null = null;
      if (sink !== undefined) {
        // Cached if it may be (its bytes encoded from the columns)...
        const cached = got.meta !== null
          ? encodeColumns(got.meta, read.columns!.names, sink)
          : null;
        if (cached !== null) {
          if (writing.length >= WRITES_AHEAD) await writing.shift();
          writing.push(cache.write(key, p, q, cached));
        }
        // ...and without a filter, written from the reader's columns as they are.
        if (render && !read.keep) {
          const columns = sinkVectors(sink, read.columns!.names, render.fields);
          yield* writtenColumns(columns, null, sink.n, render, ctx);
          p = q;
          continue;
        }
        // Filtered and folded (or written) from its columns, as the block will be read from
        // the cache.
        const bytes = cached ?? encodeColumns(UNCACHED, read.columns!.names, sink);
        const block = decodeBlock(bytes, false);
        if (render && (yield* writtenBlock(block, read, render, ctx))) {
          p = q;
          continue;
        }
        rows = block.scan({
          keep: read.keep,
          reads: read.reads,
          test: read.test,
          fold: ctx.direct,
        });
      } else if (got.meta !== null) {
        const bytes = encodeBlock(got.meta, got.rows);
        // Written while the next blocks are read (up to WRITES_AHEAD at once).
        if (writing.length >= WRITES_AHEAD) await writing.shift();
        writing.push(cache.write(key, p, q, bytes));
        // A grouping right above folds the block's columns as it will from the cache, cheaper
        // than taking its rows one by one.
        if (ctx.direct) {
          const block = decodeBlock(bytes, false);
          if (!block.meta.whole) {
            if (!read.keep || read.test?.exact) {
              // As a cached block is read (its comparisons on the columns, the filter not
              // called): the same generated code, so that the next query finds it compiled.
              rows = block.scan({
                keep: read.keep,
                reads: read.reads,
                test: read.test,
                fold: ctx.direct,
              });
            } else {
              // The filter runs on the rows made (no row made again for it).
              const keep = read.keep;
              const select = new Uint8Array(got.rows.length);
              for (let i = 0; i < got.rows.length; i++) if (keep(got.rows[i]!)) select[i] = 1;
              rows = block.scan({ select, fold: ctx.direct });
            }
          }
        }
      }
      if (rows !== null) yield* batches(rows, undefined, ctx);
      else yield* batches(got.rows, read.keep, ctx);
      p = q;
    }
  } finally {
    await Promise.all(writing);
  }
}

/**
 * The rows of `block` that `read` keeps written from its columns by `render`, an empty batch
 * handed out after each WRITTEN_ROWS of them (so that their bytes are taken); false, and
 * nothing written, where a column or the filter needs rows.
 */
async function* writtenBlock(
  block: DecodedBlock,
  read: CachedRead,
  render: DirectRender,
  ctx: ExecContext,
): AsyncGenerator<readonly Row[], boolean> {
  const columns = block.vectors(render.fields);
  if (columns === null) return false;
  const picks = block.picks({ keep: read.keep, reads: read.reads, test: read.test });
  if (picks === null) return false;
  const list = picks === "all" ? null : picks;
  yield* writtenColumns(
    columns,
    list,
    list === null ? block.meta.rowCount : list.length,
    render,
    ctx,
  );
  return true;
}

async function* batches(
  rows: readonly Row[],
  keep: ((row: Row) => boolean) | undefined,
  ctx: ExecContext,
): BatchStream {
  const kept = keep ? rows.filter(keep) : rows;
  for (let i = 0; i < kept.length; i += BATCH_ROWS) {
    yield kept.slice(i, i + BATCH_ROWS);
    if (ctx.slicer) await ctx.slicer.check();
  }
}

/** Whether the bytes `meta` was read from are still those of `file`. */
async function unchanged(meta: BlockMeta, file: FileEntry, signal: AbortSignal): Promise<boolean> {
  const m = meta as BlockMeta & { identity?: string };
  if (m.identity !== file.identity) return false;
  if (file.size === meta.size && file.modified === meta.mtime) return true;
  // A whole file's block, or a file that cannot be read at an offset: only as it was.
  if (meta.entire || file.openAt === undefined) return false;
  // Shrunk, or rewritten in place: gone. Grown: the bytes read must still be there.
  if (file.size <= meta.size || file.size < meta.end) return false;
  // A timestamp written without its year takes it from the file's time (pattern/extractor.ts):
  // a file that grew into another year is read again.
  if (yearOf(file.modified) !== yearOf(meta.mtime)) return false;
  const first = meta.end - meta.rawBytes;
  const n = Math.min(SAMPLE_BYTES, meta.rawBytes);
  const head = await readAt(file, first, n, signal);
  const tail = await readAt(file, meta.end - n, n, signal);
  return head !== null && tail !== null && crc32(head) === meta.head && crc32(tail) === meta.tail;
}

/** The year of `ms`, or NaN within a day of a new year in some zone (never the same then). */
function yearOf(ms: number): number {
  const day = 86_400_000;
  const a = new Date(ms - day).getUTCFullYear();
  return a === new Date(ms + day).getUTCFullYear() ? a : NaN;
}

/** The "\n" in bytes [from, to) of `file`. */
async function countLines(
  file: FileEntry,
  from: number,
  to: number,
  signal: AbortSignal,
): Promise<number> {
  if (file.openAt === undefined || to <= from) return 0;
  const reader = (await file.openAt(signal, from)).getReader();
  let n = 0;
  let left = to - from;
  try {
    while (left > 0) {
      const { value, done } = await reader.read();
      if (done) break;
      const piece = value.length > left ? value.subarray(0, left) : value;
      for (let i = piece.indexOf(0x0a); i >= 0; i = piece.indexOf(0x0a, i + 1)) n++;
      left -= piece.length;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return n;
}

async function readAt(
  file: FileEntry,
  at: number,
  n: number,
  signal: AbortSignal,
): Promise<Uint8Array | null> {
  const out = new Uint8Array(n);
  let got = 0;
  const stream = await file.openAt!(signal, at);
  const reader = stream.getReader();
  try {
    while (got < n) {
      const { value, done } = await reader.read();
      if (done) break;
      const take = Math.min(value.length, n - got);
      out.set(value.subarray(0, take), got);
      got += take;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return got === n ? out : null;
}

interface RawRead {
  readonly rows: Row[];
  readonly tally: SkipTally | null;
  /** "\n" in the bytes read, or -1: not counted. */
  readonly lines: number;
  /** The first byte read and the one after the last (-1: none read). */
  readonly first: number;
  readonly end: number;
  /** The block to cache, or null when it may not be (an unfinished last line, a warning). */
  readonly meta: Omit<BlockMeta, "rowCount" | "columns" | "whole"> | null;
}

/**
 * A context of its own for the source's reader over one file or block: its stats and progress
 * are added to the query's when `done` (`live`: they are the query's), its skip tally kept
 * (`tally`), any other warning passed on (`other` then says the block may not be cached).
 * It has no grouping to fold into: a block's rows are folded once it is read.
 */
function subContext(ctx: ExecContext, live = false) {
  const stats = live && ctx.stats ? ctx.stats : newQueryStats();
  let tally: SkipTally | null = null;
  let other = false;
  const sub: ExecContext = {
    signal: ctx.signal,
    timeZone: ctx.timeZone,
    now: ctx.now,
    warn: (w) => {
      const t = (w as Warning & { tally?: SkipTally }).tally;
      if (t !== undefined) tally = t;
      else {
        other = true;
        ctx.warn(w);
      }
    },
    progress: live ? ctx.progress : new ProgressMeter(),
    memory: ctx.memory,
    stats,
    ...(ctx.slicer ? { slicer: ctx.slicer } : {}),
  };
  return {
    ctx: sub,
    stats,
    tally: () => tally,
    other: () => other,
    done(entry: FileEntry) {
      if (ctx.stats) {
        ctx.stats.bytesRead += stats.bytesRead;
        ctx.stats.recordsRead += stats.recordsRead;
        ctx.stats.recordsUnmatched += stats.recordsUnmatched;
      }
      ctx.progress.consume(entry.size);
    },
  };
}

/**
 * The rows of `entry` (one block's lines) by the source's reader, with what it told; with
 * `sink`, its records are put into the sink's columns instead (no rows).
 */
async function rawRows(
  entry: FileEntry,
  ctx: ExecContext,
  read: CachedRead,
  sink?: ColumnSink,
): Promise<
  { rows: Row[]; tally: SkipTally | null; other: boolean; records: number; unmatched: number }
> {
  // Into columns, the reader only stores each record's values (rawSegment's caller folds them).
  const sub = subContext(ctx, false);
  const rows: Row[] = [];
  const stream = sink !== undefined
    ? read.columns!.raw([entry], sub.ctx, sink)
    : read.raw([entry], sub.ctx);
  for await (const batch of stream) {
    for (const r of batch) rows.push(r);
  }
  sub.done(entry);
  return {
    rows,
    tally: sub.tally(),
    other: sub.other(),
    records: sub.stats.recordsRead,
    unmatched: sub.stats.recordsUnmatched,
  };
}

/** The lines starting in [lo, hi) of `file`, read raw, with what a block of them needs. */
async function rawSegment(
  file: FileEntry,
  lo: number,
  hi: number,
  ctx: ExecContext,
  read: CachedRead,
  whole: boolean,
  sink?: ColumnSink,
): Promise<RawRead> {
  let first = -1;
  let next = -1;
  let gap = false;
  const head = new Uint8Array(SAMPLE_BYTES);
  let headLen = 0;
  const tail = new Uint8Array(SAMPLE_BYTES);
  let tailLen = 0;
  const seen = (at: number, bytes: Uint8Array): boolean => {
    // A second look at bytes already read (PARSE's unmatched lines, sampled for the warning)
    // neither breaks the range nor changes its samples.
    if (first >= 0 && at < next) return false;
    if (first < 0) first = at;
    else if (at !== next) gap = true;
    next = at + bytes.length;
    if (headLen < SAMPLE_BYTES) {
      const take = Math.min(SAMPLE_BYTES - headLen, bytes.length);
      head.set(bytes.subarray(0, take), headLen);
      headLen += take;
    }
    // The last SAMPLE_BYTES: shifted in from the end of each piece.
    if (bytes.length >= SAMPLE_BYTES) {
      tail.set(bytes.subarray(bytes.length - SAMPLE_BYTES));
      tailLen = SAMPLE_BYTES;
    } else {
      const keep = Math.min(tailLen, SAMPLE_BYTES - bytes.length);
      tail.copyWithin(0, tailLen - keep, tailLen);
      tail.set(bytes, keep);
      tailLen = keep + bytes.length;
    }
    return true;
  };
  let lastByte = -1;
  const watched = (at: number, bytes: Uint8Array) => {
    if (seen(at, bytes) && bytes.length > 0) lastByte = bytes[bytes.length - 1]!;
  };
  const got = await rawRows(
    whole ? watchedEntry(file, watched) : rangeEntry(file, lo, hi, watched),
    ctx,
    read,
    sink,
  );
  const rawBytes = first < 0 ? 0 : next - first;
  const ok = !got.other && !gap && rawBytes > 0 &&
    (whole ? first === 0 && rawBytes === file.size : lastByte === 0x0a) &&
    headLen === Math.min(SAMPLE_BYTES, rawBytes) && tailLen === headLen;
  return {
    rows: got.rows,
    tally: got.tally,
    lines: -1,
    first: gap ? -1 : first,
    end: next,
    meta: ok
      ? {
        lo,
        hi,
        end: next,
        size: file.size,
        mtime: file.modified,
        identity: file.identity,
        head: crc32(head.subarray(0, headLen)),
        tail: crc32(tail.subarray(0, tailLen)),
        rawBytes,
        // Not counted (a search per line): fileRows counts them where a tally needs it.
        lines: -1,
        records: got.records,
        unmatched: got.unmatched,
        tally: got.tally,
        ...(whole ? { entire: true } : {}),
      } as Omit<BlockMeta, "rowCount" | "columns" | "whole">
      : null,
  };
}

/** The whole of `file` as its reader reads it, each piece told to `seen` with its offset. */
function watchedEntry(file: FileEntry, seen: (at: number, bytes: Uint8Array) => void): FileEntry {
  return {
    uri: file.uri,
    size: file.size,
    modified: file.modified,
    pathTime: file.pathTime,
    async open(signal) {
      let at = 0;
      return (await file.open(signal)).pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            seen(at, chunk);
            at += chunk.length;
            controller.enqueue(chunk);
          },
        }),
      );
    },
  };
}
