/**
 * The rows of one query's result. Items are either rows (the format is chosen when the result
 * is fetched) or serialised fragments (the format was fixed when the query was posted).
 *
 * The first SEGMENT_ITEMS items are kept as they came, so that a small result is never encoded.
 * Past them, items are encoded as they arrive into segments (result_segments.ts), kept in
 * memory while they take at most `memoryBytes` (query.resultMemoryBytes) and the server's pool for
 * all results has room (query.resultMemoryTotalBytes, actors/result_quota.ts), past that written to
 * one file, `engine_data/results/<queryId>`, with an index in memory so that a range is read
 * (result_read.ts) without decoding what precedes it.
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
  encodeRowObject,
  RenderedRows,
  type RowFrame,
  sameFrame,
  storageError,
} from "../engine/mod.ts";
import {
  addToRun,
  decodeRendered,
  type LaneRun,
  release,
  type ResultStoreOptions,
  roughBytes,
  RUN_BUFFER,
  RUN_BYTES,
  type Segment,
  SEGMENT_ITEMS,
  type StoredItem,
} from "./result_segments.ts";
import { readSegments, ResultDroppedError } from "./result_read.ts";

export type { ResultStoreOptions, StoredItem };
export { ResultDroppedError };

const encoder = new TextEncoder();

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
  /** Sealed: every item is placed (lanes one after the other); `follow` then reads by range. */
  #sealed = false;
  /**
   * Lanes told complete (`endLane`): every one of their items is in a segment, so a follower
   * may go on to the next lane before the seal.
   */
  readonly #endedLanes = new Set<number>();
  /** Followers (`follow`, `grown`) waiting for the next change: items, the seal, the drop. */
  #waiters: (() => void)[] = [];
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

  /** Whether every item is stored and placed (`seal`): the query is about to finish. */
  get sealed(): boolean {
    return this.#sealed;
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
    if (this.#inMemory(headBytes)) {
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
    this.#wake();
    // Every write is handed back, so that a failed one is heard (and never unhandled).
    return written(writes);
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
    addToRun(run, bytes, ends);
    // Copied: its memory goes now, not at a collection the thread seldom runs.
    release(bytes);
    if (run.bytes >= RUN_BYTES) {
      const flushed = this.#flushRun(lane);
      if (flushed) writes.push(flushed);
    }
    this.#count += n;
    if (lane === 0) this.#laneZero += n;
    this.#wake();
    return written(writes);
  }

  /**
   * Tells that `lane` has every one of its items: its last run is kept as a segment now (the
   * write returned, if any), and a follower that has given every lane before it and its items
   * goes on to the next lane without waiting for the seal (`follow`). Lanes never told end at
   * the seal, as before.
   */
  endLane(lane: number): Promise<void> {
    if (this.#dropped || this.#sealed) return Promise.resolve();
    const writes: Promise<void>[] = [];
    if (lane === 0 && this.#pendingCount > 0) {
      const cut = this.#cut();
      if (cut) writes.push(cut);
    }
    const kept = this.#flushRun(lane);
    if (kept) writes.push(kept);
    this.#endedLanes.add(lane);
    this.#wake();
    return written(writes);
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
      this.#sealed = true;
      this.#wake();
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
    try {
      await this.seal();
      last = Math.min(last, this.#count - 1);
      const head = this.#head;
      for (let i = first; i <= Math.min(last, head.length - 1); i += SEGMENT_ITEMS) {
        this.#checkDropped();
        yield head.slice(i, Math.min(last, head.length - 1, i + SEGMENT_ITEMS - 1) + 1);
      }
      // A copy: drop() empties the list, which must not end the loop as if it were done.
      yield* readSegments(
        [...this.#segments],
        first,
        last,
        this.path,
        (s) => this.#checkReadable(s),
      );
      this.#checkDropped();
    } finally {
      this.#readers--;
    }
  }

  /**
   * Items whose place in the result is already fixed while it is still being stored: the
   * first items, the segments of the lanes told ended (`endLane`) from lane 0 on, and the
   * segments and open run of the lane after them, in order (other lanes' segments wait for the
   * seal, which places them); every item once sealed. What `readPlaced` can give: a RUNNING
   * query's rows so far (GET of a range while it runs).
   */
  get placed(): number {
    if (this.#dropped) return 0;
    if (this.#sealed) return this.#count;
    const open = this.#openLane();
    let n = this.#head.length;
    for (const s of this.#segments) if (s.lane <= open) n += s.count;
    return n + this.#openTail(open).count;
  }

  /** The first lane not told ended: every lane before it has all its items in segments. */
  #openLane(): number {
    let lane = 0;
    while (this.#endedLanes.has(lane)) lane++;
    return lane;
  }

  /**
   * The items of `lane` stored after its last segment, not yet cut into one: its run of
   * rendered rows or, for lane 0, its pending fragments (at most one of them holds items).
   * Pending rows (not fragments) wait for their segment.
   */
  #openTail(
    lane: number,
  ): { readonly count: number; readonly run?: LaneRun; readonly texts?: string[] } {
    const run = this.#runs.get(lane);
    if (run && run.ends.length > 0) return { count: run.ends.length, run };
    if (lane === 0 && this.#pendingCount > 0 && this.#pendingEnds !== null) {
      return { count: this.#pendingCount, texts: this.#pendingTexts };
    }
    return { count: 0 };
  }

  /**
   * Items `first..last` (inclusive) of those `placed` now, as `readParts` gives them, without
   * waiting for the rest: whole items only (a segment is kept whole or not at all). Once
   * sealed, `readParts`. Throws (ResultDroppedError) when the result is dropped meanwhile.
   */
  async *readPlaced(
    first: number,
    last: number,
  ): AsyncGenerator<readonly StoredItem[] | RenderedRows> {
    if (this.#sealed) {
      yield* this.readParts(first, last);
      return;
    }
    this.#readers++;
    try {
      this.#checkDropped();
      // Taken now: what is stored meanwhile is for the next read.
      const head = this.#head.slice(0, Math.min(this.#head.length, last + 1));
      let at = this.#head.length;
      const segments: Segment[] = [];
      const open = this.#openLane();
      // The placed lanes' segments follow the first items, lane after lane, each lane's in the
      // order they came (a stable sort).
      const placed = this.#segments.filter((s) => s.lane <= open).sort((a, b) => a.lane - b.lane);
      for (const s of placed) {
        segments.push({ ...s, first: at });
        at += s.count;
      }
      const tail = this.#openTail(open);
      const tailFirst = at;
      at += tail.count;
      last = Math.min(last, at - 1);
      // The open tail's whole items, copied now (before any await): it grows meanwhile.
      let tailItems: readonly StoredItem[] | RenderedRows | undefined;
      if (tail.count > 0 && last >= tailFirst) {
        const to = last - tailFirst;
        if (tail.run) {
          const ends = Uint32Array.from(tail.run.ends.slice(0, to + 1));
          const bytes = tail.run.buffer.slice(0, ends[to]);
          tailItems = new RenderedRows(bytes, ends, tail.run.frame);
        } else tailItems = tail.texts!.slice(0, to + 1);
      }
      for (let i = first; i <= Math.min(last, head.length - 1); i += SEGMENT_ITEMS) {
        this.#checkDropped();
        yield head.slice(i, Math.min(last, head.length - 1, i + SEGMENT_ITEMS - 1) + 1);
      }
      // A spilled segment is read once its write (queued before now) is done.
      if (segments.some((s) => !s.bytes && s.first + s.count > first && s.first <= last)) {
        await this.#serial(() => Promise.resolve());
      }
      yield* readSegments(segments, first, last, this.path, (s) => this.#checkReadable(s));
      this.#checkDropped();
      if (tailItems) yield tailPart(tailItems, Math.max(0, first - tailFirst));
    } finally {
      this.#readers--;
    }
  }

  /** As `readPlaced`, rendered rows decoded (as `read` gives them). */
  async *readPlacedItems(first: number, last: number): AsyncGenerator<readonly StoredItem[]> {
    for await (const part of this.readPlaced(first, last)) {
      yield part instanceof RenderedRows ? decodeRendered(part.bytes, part.ends, part.frame) : part;
    }
  }

  /**
   * Resolves once the store holds at least `items` items, is sealed or dropped, or `ended`
   * settles: when a synchronous answer may start streaming.
   */
  async grown(items: number, ended: Promise<unknown>): Promise<void> {
    let over = false;
    ended.then(() => over = true, () => over = true).finally(() => this.#wake());
    while (!over && !this.#sealed && !this.#dropped && this.#count < items) {
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /**
   * Every item in order, read while they are still being stored: the items of lane 0 (the
   * first items, then its segments, read back once written) as they come; once lane 0 has
   * ended (`endLane`), lane 1's segments, stored meanwhile or still to come, and so on, lane
   * after lane; once the store is sealed, the rest by range (`readParts`). Ends only when the
   * store was sealed and every item was given; throws when `ended` settles (the query
   * finished: FAILED, CANCELLED) before the seal, or when the result is dropped: never a
   * shorter list that looks whole. Items stored but not yet cut into a segment (a lane's run,
   * the pending items) wait for their segment: the granularity of the stream is a segment
   * (1024 items or about 1 MiB).
   */
  async *follow(
    ended: Promise<unknown>,
    once = false,
  ): AsyncGenerator<readonly StoredItem[] | RenderedRows> {
    this.#readers++;
    let over = false;
    ended.then(() => over = true, () => over = true).finally(() => this.#wake());
    try {
      /** Items given so far: the first `at` items of the result in its final order. */
      let at = 0;
      /** The lane being given: every lane before it was given whole. */
      let lane = 0;
      /** Segments (in the order kept, before the seal) looked at so far for `lane`. */
      let k = 0;
      while (!this.#sealed) {
        this.#checkDropped();
        const head = this.#head;
        if (at < head.length) {
          // The first items, as they came (still growing while lane 0 has no segment).
          const to = Math.min(head.length, at + SEGMENT_ITEMS);
          const items = head.slice(at, to);
          at = to;
          yield items;
          continue;
        }
        const segments = this.#segments;
        while (k < segments.length && segments[k]!.lane !== lane) k++;
        if (k < segments.length) {
          const segment = segments[k++]!;
          // The lane's segments come in order after the items given: it begins at `at`.
          const placed = { ...segment, first: at };
          // A spilled segment is read once its write (queued before now) is done.
          if (!segment.bytes) await this.#serial(() => Promise.resolve());
          if (this.#sealed) {
            // Sealed meanwhile: the rest by range, this segment included.
            break;
          }
          yield* readSegments(
            [placed],
            at,
            at + segment.count - 1,
            this.path,
            (s) => this.#checkReadable(s),
          );
          // Asked for the next part: this one was taken.
          if (once) this.#consume(segment);
          at += segment.count;
          continue;
        }
        if (this.#endedLanes.has(lane)) {
          // Every segment of this lane was given (it was kept before the lane was told ended).
          lane++;
          k = 0;
          continue;
        }
        if (over) {
          throw new ResultDroppedError(this.queryId, "ended before it was whole");
        }
        await new Promise<void>((resolve) => this.#waiters.push(resolve));
      }
      this.#checkDropped();
      if (at < this.#count) yield* this.readParts(at, this.#count - 1);
    } finally {
      this.#readers--;
    }
  }

  /**
   * A segment kept in memory that the one reader of a result read once has taken: its bytes
   * let go of (at once when no other read holds them) and its memory given back, so that the
   * segments after it stay in memory too while the reader keeps up, rather than being written
   * to the spill file and read back. No other read may give it any more.
   */
  #consume(segment: Segment): void {
    const bytes = segment.bytes;
    if (bytes === undefined || this.#dropped) return;
    segment.bytes = undefined;
    segment.consumed = true;
    this.#memoryBytes -= segment.length;
    this.options.account?.unkeep?.(segment.length);
    if (this.#readers === 1) release(bytes);
  }

  /** Wakes every follower: something changed. */
  #wake(): void {
    if (this.#waiters.length === 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  /**
   * Whether `bytes` more may be kept in memory: under the result's own budget and, when it has
   * an account, taken from the server's pool for all results (actors/result_quota.ts).
   */
  #inMemory(bytes: number): boolean {
    if (this.#memoryBytes + bytes > this.options.memoryBytes) return false;
    return this.options.account?.keep?.(bytes) ?? true;
  }

  /** Forgets every item and removes the spill file. */
  drop(): Promise<void> {
    if (!this.#dropped) this.options.account?.close();
    this.#dropped = true;
    this.#wake();
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
    if (this.#inMemory(length)) {
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

  #checkDropped(): void {
    if (this.#dropped) throw new ResultDroppedError(this.queryId);
  }

  /** Throws when `segment` may not be read: the result dropped, or the segment consumed. */
  #checkReadable(segment: Segment): void {
    this.#checkDropped();
    if (segment.consumed) throw new ResultDroppedError(this.queryId, "was read once by its answer");
  }

  #serial(work: () => Promise<void>): Promise<void> {
    const next = this.#queue.then(work);
    this.#queue = next.catch(() => {});
    return next;
  }
}

/** The items of an open tail (ResultStore.readPlaced) from its `from`th on. */
function tailPart(
  items: readonly StoredItem[] | RenderedRows,
  from: number,
): readonly StoredItem[] | RenderedRows {
  if (from === 0) return items;
  if (!(items instanceof RenderedRows)) return items.slice(from);
  const start = items.ends[from - 1]!;
  const ends = items.ends.slice(from).map((e) => e - start);
  return new RenderedRows(items.bytes.slice(start), ends, items.frame);
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

/** Settles when every one of `writes` has (at once for none), failing with the first that fails. */
function written(writes: readonly Promise<void>[]): Promise<void> {
  if (writes.length === 0) return Promise.resolve();
  return writes.length === 1 ? writes[0]! : Promise.all(writes).then(() => {});
}
