/**
 * The rows of one query's result. Items are either rows (the format is chosen when the result
 * is fetched) or serialised fragments (the format was fixed when the query was posted).
 *
 * The first SEGMENT_ITEMS items are kept as they came, so that a small result is never encoded.
 * Past them, items are encoded as they arrive into segments of SEGMENT_ITEMS, each the UTF-8
 * bytes of one JSON array (rows in the lossless form of engine/table/sxt_values.ts): kept in memory while the
 * segments take at most `memoryBytes` (query.resultMemoryBytes), past that written to one file,
 * `engine_data/results/<queryId>`, with an index in memory so that a range is read without
 * decoding what precedes it.
 *
 * Why bytes rather than the row objects: a row object took about 140 bytes of heap for 60 bytes
 * of JSON, the budget was an estimate, and hundreds of thousands of long-lived small objects
 * let the garbage collector grow the heap to several times their size. The server's peak for a
 * 2-million-row result with the default 64 MiB went from about 370 MB to about 290 MB (the
 * engine producing those rows and dropping them at once peaks near 225 MB); see
 * bench/api_bench.ts.
 */

import { join } from "node:path";
import {
  decodeParsedRow,
  encodeRowObject,
  RenderedRows,
  type Row,
  type RowFrame,
  sameFrame,
  storageError,
} from "../engine/mod.ts";

export type StoredItem = Row | string;

export interface ResultStoreOptions {
  /** Bytes the items kept in memory may take before further ones go to disk. */
  readonly memoryBytes: number;
  /** `<home>/engine_data/results`; the spill file is `<dir>/<queryId>`. */
  readonly spillDir: string;
  /**
   * Charged with every byte stored (in memory or on disk), released when the store is dropped:
   * the owner's share of results (actors/result_quota.ts). Its `charge` throws to refuse.
   */
  readonly account?: { charge(bytes: number): void; close(): void } | undefined;
}

/** A read cut short because the result was dropped (freed) meanwhile: the body must break. */
export class ResultDroppedError extends Error {
  constructor(queryId: string) {
    super(`the result of query ${queryId} was freed while it was being read`);
    this.name = "ResultDroppedError";
  }
}

/** A run of SEGMENT_ITEMS items (the last one may be shorter), in memory or in the file. */
interface Segment {
  /** Its first item's index: set when the segments are placed (seal), lane after lane. */
  first: number;
  /** The lane it came in (appendRendered): lanes are placed one after the other. */
  readonly lane: number;
  readonly count: number;
  /** The encoded items when kept in memory. */
  readonly bytes?: Uint8Array;
  /** Where they are in the spill file otherwise. */
  readonly offset: number;
  readonly length: number;
  /**
   * For a segment of fragments: where each ends in the segment's decoded text (UTF-16 units),
   * the fragments being stored back to back as they are; absent for a segment of rows.
   */
  readonly ends?: Uint32Array;
  /** For a segment of rendered rows (appendRendered): where each ends in its bytes. */
  readonly byteEnds?: Uint32Array;
  /** For a segment of rendered rows: the frame each row was rendered with, if any. */
  readonly frame?: RowFrame;
}

/** Items per segment: the unit encoded, spilled and read back. */
const SEGMENT_ITEMS = 1024;

/** Spilled rendered segments are read back in runs of about this many bytes. */
const READ_BYTES = 1 << 20;

/** Rendered batches of a lane are gathered into segments of about this many bytes. */
const RUN_BYTES = 1 << 20;
/** The buffer of a run: room for the batch that takes it past RUN_BYTES. */
const RUN_BUFFER = RUN_BYTES + 64 * 1024;

/** Rendered batches of one lane gathered before they are kept as one segment. */
interface LaneRun {
  buffer: Uint8Array<ArrayBuffer>;
  bytes: number;
  readonly ends: number[];
  readonly frame: RowFrame | undefined;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class ResultStore {
  #count = 0;
  /** Items of lane 0 (every item not given a lane): the first of them are kept as they came. */
  #laneZero = 0;
  /** Per lane, rendered batches not yet kept as a segment. */
  readonly #runs = new Map<number, LaneRun>();
  /** The first items as they came, while there are at most SEGMENT_ITEMS. */
  #head: StoredItem[] = [];
  /** Reads in progress: a result being read is not dropped when its retention runs out. */
  #readers = 0;
  readonly #segments: Segment[] = [];
  /** Items since the last segment was cut: `#pendingCount` of them, as texts to encode. */
  #pendingTexts: string[] = [];
  #pendingCount = 0;
  /** The buffer a segment is encoded into when cut; `#pendingBytes` of it are used. */
  #pending: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  #pendingBytes = 0;
  /** For pending fragments: where each ends in their text; null while rows are pending. */
  #pendingEnds: number[] | null = null;
  #pendingChars = 0;
  /** A pending buffer back from its write, for the next segment. */
  #spare: Uint8Array<ArrayBuffer> | undefined;
  /** A lane's run buffer back from its write, for the next run (no megabyte a run to free). */
  #runSpare: Uint8Array<ArrayBuffer> | undefined;
  #memoryBytes = 0;
  #file: Deno.FsFile | undefined;
  #fileBytes = 0;
  #dropped = false;
  #queue: Promise<void> = Promise.resolve();
  readonly path: string;

  constructor(readonly queryId: string, private readonly options: ResultStoreOptions) {
    this.path = join(options.spillDir, queryId);
  }

  /** Items stored so far. */
  get count(): number {
    return this.#count;
  }

  /** Whether some items live on disk. */
  get spilled(): boolean {
    return this.#fileBytes > 0;
  }

  /** Whether a read is in progress (see `read`). */
  get reading(): boolean {
    return this.#readers > 0;
  }

  /** Bytes the result takes, in memory and on disk (the first items estimated). */
  get bytes(): number {
    return this.#memoryBytes + this.#fileBytes;
  }

  /** Adds items at the end; resolves once they are stored (written, when spilling). */
  append(items: readonly StoredItem[]): Promise<void> {
    if (this.#dropped || items.length === 0) return Promise.resolve();
    const writes: Promise<void>[] = [];
    const headBytes = this.#laneZero === this.#head.length &&
        this.#laneZero + items.length <= SEGMENT_ITEMS
      ? roughBytes(items)
      : Infinity;
    // The first items count against the memory budget too: a thousand rows may be large.
    if (this.#memoryBytes + headBytes <= this.options.memoryBytes) {
      this.#charge(headBytes);
      this.#memoryBytes += headBytes;
      for (let i = 0; i < items.length; i++) this.#head.push(items[i]!);
    } else {
      // Rendered rows of lane 0 before these go first.
      const run = this.#flushRun(0);
      if (run) writes.push(run);
      // Encoded at once, so that the rows die young (see the file's comment).
      for (let i = 0; i < items.length; i++) {
        const cut = this.#encode(items[i]!);
        if (cut) writes.push(cut);
        if (this.#pendingCount === SEGMENT_ITEMS) {
          const write = this.#cut();
          if (write) writes.push(write);
        }
      }
    }
    this.#count += items.length;
    this.#laneZero += items.length;
    // Every write is handed back, so that a failed one is heard (and never unhandled).
    if (writes.length === 0) return Promise.resolve();
    return writes.length === 1 ? writes[0]! : Promise.all(writes).then(() => {});
  }

  /**
   * Adds rows rendered as bytes (engine/render/render_bytes.ts) at the end of `lane`: row i is
   * `bytes[ends[i - 1], ends[i])`. Read back as fragments, like `append` of their texts, but
   * stored as they are: batches of a lane are gathered (copied once) into segments of about
   * RUN_BYTES, never decoded. The store owns `bytes` from now on (its buffer is let go of).
   * The first items of lane 0 are still kept as texts, so that a small result is answered
   * without a stream.
   *
   * Lanes (the shares of a scan, which come in any order) are placed one after the other when
   * the store is sealed: items of lane 1 follow all of lane 0's, whenever they came. Items
   * given without a lane (`append`) are lane 0's.
   */
  appendRendered(
    bytes: Uint8Array<ArrayBuffer>,
    ends: Uint32Array,
    frame?: RowFrame,
    lane = 0,
  ): Promise<void> {
    const n = ends.length;
    if (this.#dropped || n === 0) return Promise.resolve();
    if (
      lane === 0 && this.#laneZero === this.#head.length &&
      this.#laneZero + n <= SEGMENT_ITEMS
    ) {
      return this.append(decodeRendered(bytes.subarray(0, ends[n - 1]), ends, frame));
    }
    const writes: Promise<void>[] = [];
    if (lane === 0 && this.#pendingCount > 0) {
      const cut = this.#cut();
      if (cut) writes.push(cut);
    }
    const length = ends[n - 1]!;
    // Counted now, not when its run is kept: the owner's share counts every byte held.
    this.#charge(length);
    let run = this.#runs.get(lane);
    if (run && !sameFrame(run.frame, frame)) {
      const flushed = this.#flushRun(lane);
      if (flushed) writes.push(flushed);
      run = undefined;
    }
    if (!run) {
      run = { buffer: this.#runSpare ?? new Uint8Array(RUN_BUFFER), bytes: 0, ends: [], frame };
      this.#runSpare = undefined;
      this.#runs.set(lane, run);
    }
    if (run.bytes + length > run.buffer.length) {
      const grown = new Uint8Array(Math.max(2 * run.buffer.length, run.bytes + length));
      grown.set(run.buffer.subarray(0, run.bytes));
      release(run.buffer);
      run.buffer = grown;
    }
    run.buffer.set(bytes.subarray(0, length), run.bytes);
    for (let i = 0; i < n; i++) run.ends.push(run.bytes + ends[i]!);
    run.bytes += length;
    // Copied: its memory goes now, not at a collection the thread seldom runs.
    release(bytes);
    if (run.bytes >= RUN_BYTES) {
      const flushed = this.#flushRun(lane);
      if (flushed) writes.push(flushed);
    }
    this.#count += n;
    if (lane === 0) this.#laneZero += n;
    if (writes.length === 0) return Promise.resolve();
    return writes.length === 1 ? writes[0]! : Promise.all(writes).then(() => {});
  }

  /**
   * Stores the last, partial segments, places the lanes one after the other, and resolves
   * once every segment is written.
   */
  seal(): Promise<void> {
    const writes: Promise<void>[] = [];
    if (!this.#dropped) {
      if (this.#pendingCount > 0) {
        const cut = this.#cut();
        if (cut) writes.push(cut);
      }
      for (const lane of [...this.#runs.keys()]) {
        const flushed = this.#flushRun(lane);
        if (flushed) writes.push(flushed);
      }
      this.#place();
    }
    writes.push(this.#serial(() => Promise.resolve()));
    return Promise.all(writes).then(() => {});
  }

  /** Orders the segments lane after lane (as they came within a lane) and numbers their items. */
  #place(): void {
    const segments = this.#segments;
    if (segments.some((s, i) => i > 0 && s.lane < segments[i - 1]!.lane)) {
      // A stable sort: within a lane, the order they came in.
      segments.sort((a, b) => a.lane - b.lane);
    }
    let first = this.#head.length;
    for (const s of segments) {
      s.first = first;
      first += s.count;
    }
  }

  /** Keeps the gathered batches of `lane` as one segment (the write returned, if any). */
  #flushRun(lane: number): Promise<void> | undefined {
    const run = this.#runs.get(lane);
    if (!run) return undefined;
    this.#runs.delete(lane);
    if (run.ends.length === 0) {
      release(run.buffer);
      return undefined;
    }
    return this.#keep(
      run.buffer,
      run.bytes,
      run.ends.length,
      undefined,
      Uint32Array.from(run.ends),
      run.frame,
      lane,
      true,
    );
  }

  /**
   * Items `first..last` (inclusive) when they are all among the first items, which are kept as
   * they came, else undefined: lets a small result be answered without a stream.
   */
  inMemory(first: number, last: number): readonly StoredItem[] | undefined {
    if (this.#dropped || last >= this.#head.length) return undefined;
    return this.#head.slice(first, last + 1);
  }

  /**
   * Items `first..last` (inclusive) in batches of at most a segment.
   * `for await (const batch of store.read(0, store.count - 1)) ...`
   */
  async *read(first: number, last: number): AsyncGenerator<readonly StoredItem[]> {
    for await (const part of this.readParts(first, last)) {
      yield part instanceof RenderedRows ? decodeRendered(part.bytes, part.ends, part.frame) : part;
    }
  }

  /**
   * As `read`, but rows stored rendered (appendRendered) come as their bytes, a segment (or the
   * part of it in range) at a time, or, from the spill file, runs of whole segments read in one
   * go (about READ_BYTES): a body copies them out as they are. A part's bytes are good until
   * the next part is asked for (reads from the file reuse one buffer).
   */
  async *readParts(
    first: number,
    last: number,
  ): AsyncGenerator<readonly StoredItem[] | RenderedRows> {
    // Counted from the first batch asked for to the end, the client's leaving, or an error.
    this.#readers++;
    let file: Deno.FsFile | undefined;
    /** One buffer for every read from the file: a part is copied out before the next. */
    let buffer: Uint8Array<ArrayBuffer> | undefined;
    try {
      await this.seal();
      last = Math.min(last, this.#count - 1);
      const head = this.#head;
      for (let i = first; i <= Math.min(last, head.length - 1); i += SEGMENT_ITEMS) {
        if (this.#dropped) throw new ResultDroppedError(this.queryId);
        yield head.slice(i, Math.min(last, head.length - 1, i + SEGMENT_ITEMS - 1) + 1);
      }
      // A copy: drop() empties the list, which must not end the loop as if it were done.
      const segments = [...this.#segments];
      /** Where the file's position is (a read goes on from where the last ended: no seek). */
      let position = -1;
      for (let k = 0; k < segments.length; k++) {
        const s = segments[k]!;
        if (s.first + s.count <= first || s.first > last) continue;
        // Never a shorter document that looks whole: the body breaks instead.
        if (this.#dropped) throw new ResultDroppedError(this.queryId);
        const from = Math.max(first, s.first) - s.first;
        const to = Math.min(last, s.first + s.count - 1) - s.first;
        if (s.byteEnds && !s.bytes) {
          // Rendered segments that follow each other in the file and in the range are read in
          // one go, up to READ_BYTES: a read (and a part) per 64 KiB segment cost more than
          // the copy.
          let end = k;
          let length = s.length;
          while (
            end + 1 < segments.length && from === 0 && to === s.count - 1 && length < READ_BYTES &&
            isNextInFile(segments[end]!, segments[end + 1]!) &&
            segments[end + 1]!.first + segments[end + 1]!.count - 1 <= last
          ) {
            end++;
            length += segments[end]!.length;
          }
          file ??= await Deno.open(this.path, { read: true });
          if (!buffer || buffer.length < length) {
            buffer = new Uint8Array(Math.max(length, READ_BYTES + 64 * 1024));
          }
          const bytes = buffer.subarray(0, length);
          await readAt(file, s.offset, bytes, this.path, position);
          position = s.offset + length;
          yield end === k
            ? renderedPart(bytes, s.byteEnds, from, to, s.frame)
            : joinedPart(bytes, segments.slice(k, end + 1));
          k = end;
          continue;
        }
        let bytes = s.bytes;
        if (!bytes) {
          file ??= await Deno.open(this.path, { read: true });
          bytes = new Uint8Array(s.length);
          await readAt(file, s.offset, bytes, this.path, position);
          position = s.offset + s.length;
        }
        if (s.byteEnds) {
          yield renderedPart(bytes, s.byteEnds, from, to, s.frame);
          continue;
        }
        const items = decodeSegment(bytes, s.ends);
        yield from === 0 && to === items.length - 1 ? items : items.slice(from, to + 1);
      }
      if (this.#dropped) throw new ResultDroppedError(this.queryId);
    } finally {
      this.#readers--;
      file?.close();
      release(buffer);
    }
  }

  /** Forgets every item and removes the spill file. */
  drop(): Promise<void> {
    if (!this.#dropped) this.options.account?.close();
    this.#dropped = true;
    this.#pendingTexts = [];
    this.#head = [];
    // The segments' memory is given back now, not at the next garbage collection: an idle
    // server runs none, and a dropped result kept its megabytes of RSS for minutes.
    for (const segment of this.#segments) release(segment.bytes);
    this.#segments.length = 0;
    for (const run of this.#runs.values()) release(run.buffer);
    this.#runs.clear();
    release(this.#pending);
    release(this.#spare);
    release(this.#runSpare);
    this.#runSpare = undefined;
    this.#pending = new Uint8Array(0);
    this.#spare = undefined;
    this.#pendingBytes = this.#pendingCount = 0;
    return this.#serial(async () => {
      if (this.#file) {
        this.#file.close();
        this.#file = undefined;
        await Deno.remove(this.path).catch(() => {});
      }
    });
  }

  /**
   * Appends one item to the pending segment: a fragment as it is (its end noted), a row as an
   * element of the segment's JSON array. A segment holds one kind; the other kind cuts it (the
   * write of that cut, if any, is returned). The texts are encoded to UTF-8 together when the
   * segment is cut: one call per segment, not one per item.
   */
  #encode(item: StoredItem): Promise<void> | undefined {
    const fragment = typeof item === "string";
    let cut: Promise<void> | undefined;
    if (this.#pendingCount > 0 && fragment !== (this.#pendingEnds !== null)) cut = this.#cut();
    if (this.#pendingCount === 0) {
      this.#pendingEnds = fragment ? [] : null;
      this.#pendingChars = 0;
    }
    if (fragment) {
      this.#pendingTexts.push(item);
      this.#pendingChars += item.length;
      this.#pendingEnds!.push(this.#pendingChars);
    } else this.#pendingTexts.push((this.#pendingCount === 0 ? "[" : ",") + encodeRowObject(item));
    this.#pendingCount++;
    return cut;
  }

  /** Closes the pending segment and keeps it in memory, or queues its write (returned). */
  #cut(): Promise<void> | undefined {
    const ends = this.#pendingEnds === null ? undefined : Uint32Array.from(this.#pendingEnds);
    if (ends === undefined) this.#pendingTexts.push("]");
    const text = this.#pendingTexts.join("");
    this.#pendingTexts = [];
    this.#pendingEnds = null;
    // A UTF-16 code unit takes at most 3 bytes of UTF-8.
    if (3 * text.length > this.#pending.length) {
      // Made on first use: most results never get here, and each query has its own store.
      this.#pending = new Uint8Array(Math.max(3 * text.length, 64 * 1024));
    }
    this.#pendingBytes = encoder.encodeInto(text, this.#pending).written;
    const length = this.#pendingBytes;
    const count = this.#pendingCount;
    this.#pendingBytes = this.#pendingCount = 0;
    return this.#keep(this.#pending, length, count, ends, undefined);
  }

  /**
   * Keeps `length` bytes of `buffer` as the next segment, of `count` items: in memory (a copy
   * when the buffer is the pending one), or queued for writing to the spill file (returned).
   */
  #keep(
    buffer: Uint8Array<ArrayBuffer>,
    length: number,
    count: number,
    ends: Uint32Array | undefined,
    byteEnds: Uint32Array | undefined,
    frame?: RowFrame,
    lane = 0,
    charged = false,
  ): Promise<void> | undefined {
    // Where it goes if lanes come in order; placed again when sealed (#place).
    const first = this.#segments.length > 0
      ? this.#segments.at(-1)!.first + this.#segments.at(-1)!.count
      : this.#head.length;
    const pending = buffer === this.#pending;
    const cuts = {
      ...(ends ? { ends } : {}),
      ...(byteEnds ? { byteEnds } : {}),
      ...(frame ? { frame } : {}),
    };
    if (!charged) this.#charge(length);
    if (this.#memoryBytes + length <= this.options.memoryBytes) {
      this.#memoryBytes += length;
      const bytes = pending || buffer.length !== length ? buffer.slice(0, length) : buffer;
      if (bytes !== buffer && charged) this.#spareRun(buffer);
      else if (bytes !== buffer && !pending) release(buffer);
      this.#segments.push({ first, lane, count, bytes, offset: 0, length, ...cuts });
      return undefined;
    }
    const offset = this.#fileBytes;
    this.#fileBytes += length;
    this.#segments.push({ first, lane, count, offset, length, ...cuts });
    // The pending buffer itself goes to the write and comes back as the spare when written: a
    // fresh buffer per spilled segment was megabytes of garbage a second.
    if (pending) {
      this.#pending = this.#spare ?? new Uint8Array(buffer.length);
      this.#spare = undefined;
    }
    return this.#serial(async () => {
      if (this.#dropped) return;
      try {
        await this.#write(buffer, length, pending ? "pending" : charged ? "run" : undefined);
      } catch (e) {
        // A full disk is the machine's state, not a bug: the query fails saying so.
        throw storageError(e, "spilling the result to disk");
      }
    });
  }

  /**
   * Writes `length` bytes of `buffer` at the end of the spill file; then the buffer is kept as
   * the spare of its kind (`spare`), or freed.
   */
  async #write(
    buffer: Uint8Array<ArrayBuffer>,
    length: number,
    spare: "pending" | "run" | undefined,
  ): Promise<void> {
    if (!this.#file) {
      await Deno.mkdir(this.options.spillDir, { recursive: true });
      this.#file = await Deno.open(this.path, { write: true, create: true, truncate: true });
    }
    let written = 0;
    while (written < length) written += await this.#file.write(buffer.subarray(written, length));
    if (spare === "pending") this.#spare = buffer;
    else if (spare === "run") this.#spareRun(buffer);
    // A rendered segment's own buffer is done with: freed now, not at a garbage collection
    // that a thread making no garbage of its own (its rows rendered by workers) seldom runs.
    else release(buffer);
  }

  /** Keeps a run's buffer for the next run (one of the usual size), else frees it. */
  #spareRun(buffer: Uint8Array<ArrayBuffer>): void {
    if (this.#dropped || buffer.length !== RUN_BUFFER || this.#runSpare) release(buffer);
    else this.#runSpare = buffer;
  }

  /** Charges the owner's account; when it refuses, the result goes at once (the query fails). */
  #charge(bytes: number): void {
    try {
      this.options.account?.charge(bytes);
    } catch (e) {
      this.drop().catch(() => {});
      throw e;
    }
  }

  #serial(work: () => Promise<void>): Promise<void> {
    const next = this.#queue.then(work);
    this.#queue = next.catch(() => {});
    return next;
  }
}

/**
 * About what `items` take as they came (objects on the heap): their strings and a little per
 * value and per item. Cheap, since the first items are kept to spare encoding them.
 */
function roughBytes(items: readonly StoredItem[]): number {
  let bytes = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item === "string") {
      bytes += 32 + item.length;
      continue;
    }
    bytes += 64;
    for (const key in item) {
      const value = item[key];
      bytes += 16 + (typeof value === "string" ? value.length : 8);
    }
  }
  return bytes;
}

/**
 * Removes every spill file left in `spillDir` (`<home>/engine_data/results`) by a server that
 * was killed: results live no longer than the process that made them. Returns how many went;
 * a file it cannot remove is passed over, so a sweep never stops a start.
 *
 * @example await sweepSpillFiles(layout.resultsDir) // in main.ts, before serving
 */
export async function sweepSpillFiles(spillDir: string): Promise<number> {
  let removed = 0;
  try {
    for await (const entry of Deno.readDir(spillDir)) {
      if (!entry.isFile) continue;
      try {
        await Deno.remove(join(spillDir, entry.name));
        removed++;
      } catch {
        // Someone else's file, or gone already.
      }
    }
  } catch {
    // No folder yet: nothing to sweep.
  }
  return removed;
}

/**
 * Frees the memory of bytes no longer needed at once: a detached ArrayBuffer lets go of its
 * backing store, which the garbage collector would otherwise keep until it next runs.
 */
function release(bytes: Uint8Array | undefined): void {
  const buffer = bytes?.buffer;
  if (buffer instanceof ArrayBuffer && !buffer.detached) buffer.transfer(0);
}

/** Rows `from..to` (inclusive) of a segment of rendered rows, their ends made relative. */
function renderedPart(
  bytes: Uint8Array,
  ends: Uint32Array,
  from: number,
  to: number,
  frame: RowFrame | undefined,
) {
  const start = from === 0 ? 0 : ends[from - 1]!;
  const part = ends.slice(from, to + 1);
  if (start > 0) { for (let i = 0; i < part.length; i++) part[i]! -= start; }
  // A view, not a copy: the part is written out at once.
  return new RenderedRows(bytes.subarray(start, ends[to]) as Uint8Array<ArrayBuffer>, part, frame);
}

/** The UTF-8 length of a text. */
function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/**
 * Rendered rows as texts: each without its frame (the text a row writer gives), as `append`
 * would have stored it.
 */
function decodeRendered(
  bytes: Uint8Array,
  ends: Uint32Array,
  frame: RowFrame | undefined,
): string[] {
  if (!frame) return decodeSegment(bytes, undefined, ends) as string[];
  const lead = utf8Length(frame.separator + frame.before);
  const trail = utf8Length(frame.after);
  const text = decoder.decode(bytes);
  const out = new Array<string>(ends.length);
  let start = 0;
  if (text.length === bytes.length) {
    // ASCII: byte offsets are the text's.
    for (let i = 0; i < ends.length; i++) {
      out[i] = text.slice(start + lead, ends[i]! - trail);
      start = ends[i]!;
    }
    return out;
  }
  for (let i = 0; i < ends.length; i++) {
    out[i] = decoder.decode(bytes.subarray(start + lead, ends[i]! - trail));
    start = ends[i]!;
  }
  return out;
}

/** Where each of the UTF-8 texts ending at `byteEnds` in `bytes` ends in their decoded text. */
function utf16Ends(bytes: Uint8Array, byteEnds: Uint32Array): Uint32Array {
  const out = new Uint32Array(byteEnds.length);
  let units = 0;
  let at = 0;
  for (let i = 0; i < byteEnds.length; i++) {
    for (const end = byteEnds[i]!; at < end; at++) {
      const b = bytes[at]!;
      // A lead byte starts a character: one unit, two for a 4-byte one (a surrogate pair).
      if ((b & 0xc0) !== 0x80) units += b >= 0xf0 ? 2 : 1;
    }
    out[i] = units;
  }
  return out;
}

/**
 * Fills `bytes` from `offset` of the file, whose position is `position` (-1: unknown); a seek
 * only when they differ.
 */
async function readAt(
  file: Deno.FsFile,
  offset: number,
  bytes: Uint8Array,
  path: string,
  position: number,
): Promise<void> {
  // An lseek never waits for the disk: done in place, not as an async op on the thread pool,
  // which cost ~50 µs or more a call on a loaded machine (the lanes interleave in the file).
  if (offset !== position) file.seekSync(offset, Deno.SeekMode.Start);
  let got = 0;
  while (got < bytes.length) {
    const n = await file.read(bytes.subarray(got));
    if (n === null) throw new Error(`spill file ${path} is shorter than its index`);
    got += n;
  }
}

/** Whether segment `b` follows `a` in the spill file, both rendered rows. */
function isNextInFile(a: Segment, b: Segment): boolean {
  return !a.bytes && !b.bytes && a.byteEnds !== undefined && b.byteEnds !== undefined &&
    b.offset === a.offset + a.length && sameFrame(a.frame, b.frame);
}

/** Whole rendered segments read in one go as one part: their ends joined. */
function joinedPart(bytes: Uint8Array<ArrayBuffer>, segments: readonly Segment[]): RenderedRows {
  const ends = new Uint32Array(segments.reduce((n, s) => n + s.count, 0));
  let at = 0;
  let base = 0;
  for (const s of segments) {
    const own = s.byteEnds!;
    for (let i = 0; i < own.length; i++) ends[at++] = base + own[i]!;
    base += s.length;
  }
  return new RenderedRows(bytes, ends, segments[0]!.frame);
}

// A segment of fragments is their text back to back, cut where `ends` says (or `byteEnds`, in
// bytes); a segment of rows is one JSON array of them.
function decodeSegment(
  bytes: Uint8Array,
  ends: Uint32Array | undefined,
  byteEnds?: Uint32Array,
): string[] | StoredItem[] {
  if (byteEnds !== undefined) {
    const text = decoder.decode(bytes);
    ends = text.length === bytes.length ? byteEnds : utf16Ends(bytes, byteEnds);
  }
  if (ends !== undefined) {
    const text = decoder.decode(bytes);
    const fragments = new Array<string>(ends.length);
    let start = 0;
    for (let i = 0; i < ends.length; i++) {
      fragments[i] = text.slice(start, ends[i]);
      start = ends[i]!;
    }
    return fragments;
  }
  const items = JSON.parse(decoder.decode(bytes)) as unknown[];
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item !== "string") items[i] = decodeParsedRow(item as Record<string, unknown>);
  }
  return items as StoredItem[];
}
