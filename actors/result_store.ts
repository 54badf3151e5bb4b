/**
 * The rows of one query's result. Kept in memory up to a byte budget (query.resultMemoryBytes);
 * past it, items go to one file, `engine_data/results/<queryId>`, in segments of JSON lines with
 * an index in memory, so that a range is read without parsing what precedes it. Items are
 * either rows (the format is chosen when the result is fetched) or serialised fragments (the
 * format was fixed when the query was posted).
 */

import { join } from "node:path";
import type { Row } from "../engine/values.ts";
import { decodeRow, encodeRow, estimateBytes } from "./row_codec.ts";

export type StoredItem = Row | string;

export interface ResultStoreOptions {
  /** Bytes the in-memory part may take before items spill to disk. */
  readonly memoryBytes: number;
  /** `<home>/engine_data/results`; the spill file is `<dir>/<queryId>`. */
  readonly spillDir: string;
}

interface Segment {
  readonly first: number;
  readonly count: number;
  readonly offset: number;
  readonly length: number;
}

/** Items per spilled segment: the unit read back for a range. */
const SEGMENT_ITEMS = 2048;

export class ResultStore {
  readonly #memory: StoredItem[] = [];
  #memoryBytes = 0;
  #count = 0;
  #pending: StoredItem[] = [];
  readonly #segments: Segment[] = [];
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
    return this.#file !== undefined;
  }

  /** Adds items at the end; resolves once they are stored (written, when spilling). */
  append(items: readonly StoredItem[]): Promise<void> {
    if (this.#dropped) return Promise.resolve();
    let i = 0;
    if (this.#file === undefined && this.#pending.length === 0) {
      for (; i < items.length; i++) {
        const size = sizeOf(items[i]);
        if (this.#memoryBytes + size > this.options.memoryBytes) break;
        this.#memoryBytes += size;
        this.#memory.push(items[i]);
      }
    }
    this.#count += items.length;
    for (; i < items.length; i++) this.#pending.push(items[i]);
    if (this.#pending.length >= SEGMENT_ITEMS) return this.#serial(() => this.#flush(false));
    return Promise.resolve();
  }

  /** Writes what waits for a full segment; called once the query has finished. */
  seal(): Promise<void> {
    return this.#serial(() => this.#flush(true));
  }

  /**
   * Items `first..last` (inclusive) in batches, from memory then from disk.
   * `for await (const batch of store.read(0, store.count - 1)) ...`
   */
  async *read(first: number, last: number): AsyncGenerator<readonly StoredItem[]> {
    await this.seal();
    last = Math.min(last, this.#count - 1);
    const inMemory = this.#memory.length;
    for (let i = first; i <= Math.min(last, inMemory - 1); i += SEGMENT_ITEMS) {
      yield this.#memory.slice(i, Math.min(last, inMemory - 1, i + SEGMENT_ITEMS - 1) + 1);
    }
    if (last < inMemory) return;
    const file = await Deno.open(this.path, { read: true });
    try {
      for (const s of this.#segments) {
        if (s.first + s.count <= first || s.first > last) continue;
        if (this.#dropped) return;
        const bytes = new Uint8Array(s.length);
        await file.seek(s.offset, Deno.SeekMode.Start);
        let got = 0;
        while (got < s.length) {
          const n = await file.read(bytes.subarray(got));
          if (n === null) throw new Error(`spill file ${this.path} is shorter than its index`);
          got += n;
        }
        const lines = new TextDecoder().decode(bytes).split("\n");
        const from = Math.max(first, s.first) - s.first;
        const to = Math.min(last, s.first + s.count - 1) - s.first;
        const out: StoredItem[] = [];
        for (let k = from; k <= to; k++) out.push(decodeItem(lines[k]));
        yield out;
      }
    } finally {
      file.close();
    }
  }

  /** Forgets every item and removes the spill file. */
  drop(): Promise<void> {
    this.#dropped = true;
    this.#memory.length = 0;
    this.#pending = [];
    return this.#serial(async () => {
      if (this.#file) {
        this.#file.close();
        this.#file = undefined;
        await Deno.remove(this.path).catch(() => {});
      }
    });
  }

  #serial(work: () => Promise<void>): Promise<void> {
    const next = this.#queue.then(work);
    this.#queue = next.catch(() => {});
    return next;
  }

  async #flush(all: boolean): Promise<void> {
    while (this.#pending.length >= SEGMENT_ITEMS || (all && this.#pending.length > 0)) {
      if (this.#dropped) return;
      const take = this.#pending.splice(0, SEGMENT_ITEMS);
      const first = this.#count - this.#pending.length - take.length;
      if (!this.#file) {
        await Deno.mkdir(this.options.spillDir, { recursive: true });
        this.#file = await Deno.open(this.path, { write: true, create: true, truncate: true });
      }
      const text = take.map(encodeItem).join("\n") + "\n";
      const bytes = new TextEncoder().encode(text);
      let written = 0;
      while (written < bytes.length) written += await this.#file.write(bytes.subarray(written));
      this.#segments.push({
        first,
        count: take.length,
        offset: this.#fileBytes,
        length: bytes.length,
      });
      this.#fileBytes += bytes.length;
    }
  }
}

function sizeOf(item: StoredItem): number {
  if (typeof item === "string") return 16 + 2 * item.length;
  let n = 48;
  for (const k in item) n += 16 + estimateBytes(item[k]);
  return n;
}

// Fragments are JSON strings, rows JSON objects: the first character tells them apart.
function encodeItem(item: StoredItem): string {
  return typeof item === "string" ? JSON.stringify(item) : encodeRow(item);
}

function decodeItem(line: string): StoredItem {
  return line.startsWith('"') ? JSON.parse(line) as string : decodeRow(line);
}
