/**
 * The column cache on local disk (`<home>/engine_data/cache`): one folder per entry, named by a
 * hash of the file's identity (URI, device and inode) and the source's specification (reader,
 * pattern or JSON paths, the fields read); in it one file per block, `<lo>-<hi>.blk`
 * (engine/fs/column_block.ts), for the lines that start in bytes [lo, hi) of the file.
 *
 *   const cache = new ColumnCache(config);
 *   const blocks = await cache.blocks(key);         // lo → { hi, path, bytes } of what is there
 *   const block = await cache.read(path);           // null when gone; CorruptBlock when bad
 *   await cache.write(key, lo, hi, bytes);           // false when not written (full disk)
 *   await cache.drop(key);                           // the file changed: all its blocks go
 *
 * A block is written to a temporary file beside it (`.tmp-…`) and renamed into place: a reader
 * sees the whole block or none, and two writers of one block each rename a whole one (the same
 * rows: the last rename wins). A temporary file left by a crash is never read, and is removed
 * by the sweep once stale. The sweep also keeps the cache under `maxBytes`, removing the
 * entries used least recently (an entry's folder time is set when it is read or written).
 */

import { join } from "node:path";
import { createHash } from "node:crypto";
import type { ColumnCacheConfig } from "../contracts/column_cache.ts";
import { CACHE_BLOCK_BYTES } from "../contracts/column_cache.ts";
import {
  BLOCK_FORMAT,
  blockHeader,
  type BlockMeta,
  CorruptBlock,
  decodeBlock,
  type DecodedBlock,
  headerSpan,
} from "./column_block.ts";

/** Bytes read at first for a block's header (most headers fit; a longer one is read on). */
const HEADER_READ_BYTES = 16 << 10;

/** A temporary block older than this is a crashed writer's. */
export const STALE_CACHE_TEMP_MS = 10 * 60 * 1000;

const BLOCK_NAME = /^(\d+)-(\d+)\.blk$/;

export interface CachedBlockFile {
  readonly lo: number;
  readonly hi: number;
  readonly path: string;
}

export interface ColumnCacheOptions {
  /** The clock of the sweep (stale temporary files). */
  readonly now?: () => number;
  /** Write blocks by blocking calls (by default in a worker's thread, not in the server's). */
  readonly syncWrites?: boolean;
}

/** This is a worker's thread (a scan worker), not the server's. */
const IN_WORKER = "WorkerGlobalScope" in globalThis;

/** Whether `e` is the error of a full disk or quota. */
export function isDiskFull(e: unknown): boolean {
  const code = (e as { code?: string })?.code;
  return code === "ENOSPC" || code === "EDQUOT" ||
    (e instanceof Error && /ENOSPC|No space left/i.test(e.message));
}

export class ColumnCache {
  /** The settings as plain data, for a scan worker's task. */
  readonly config: ColumnCacheConfig;
  readonly dir: string;
  readonly maxBytes: number;
  readonly blockBytes: number;
  readonly #write: (path: string, bytes: Uint8Array) => Promise<void>;
  /** Blocks are written by blocking calls (a scan worker's thread: see `write`). */
  readonly #sync: boolean;
  readonly #now: () => number;
  /** Bytes written since the last sweep. */
  #written = 0;
  #sweeping: Promise<void> | null = null;
  /** Entry folders this cache made (each made once, again only when a write finds it gone). */
  readonly #made = new Set<string>();

  constructor(config: ColumnCacheConfig, options: ColumnCacheOptions = {}) {
    this.config = {
      dir: config.dir,
      maxBytes: config.maxBytes,
      ...(config.blockBytes !== undefined ? { blockBytes: config.blockBytes } : {}),
    };
    this.dir = config.dir;
    this.maxBytes = config.maxBytes;
    this.blockBytes = Math.max(1, config.blockBytes ?? CACHE_BLOCK_BYTES);
    this.#write = config.writeFile ?? ((path, bytes) => Deno.writeFile(path, bytes));
    this.#sync = config.writeFile === undefined && (options.syncWrites ?? IN_WORKER);
    this.#now = options.now ?? Date.now;
  }

  /**
   * The entry's name for a file's identity and a source's specification, and the blocks'
   * format (BLOCK_FORMAT): a server of another format finds none of them, and the sweep ages
   * them out.
   */
  static key(parts: readonly unknown[]): string {
    return createHash("sha256").update(JSON.stringify([BLOCK_FORMAT, ...parts])).digest("hex")
      .slice(0, 40);
  }

  /** The blocks of entry `key`, by their `lo`, the longest first where two start alike. */
  async blocks(key: string): Promise<Map<number, CachedBlockFile[]>> {
    const dir = join(this.dir, key);
    const out = new Map<number, CachedBlockFile[]>();
    try {
      for await (const e of Deno.readDir(dir)) {
        const m = BLOCK_NAME.exec(e.name);
        if (!m || !e.isFile) continue; // temporary files of writers, finished or not
        const lo = Number(m[1]);
        const hi = Number(m[2]);
        if (!(hi > lo)) continue;
        const list = out.get(lo) ?? [];
        list.push({ lo, hi, path: join(dir, e.name) });
        out.set(lo, list);
      }
    } catch {
      // None yet (NotFound), or a folder that cannot be read: the file is read raw.
      return new Map();
    }
    for (const list of out.values()) list.sort((a, b) => b.hi - a.hi);
    if (out.size > 0) this.#touch(dir);
    return out;
  }

  /** The block at `path`, or null when it is gone; throws CorruptBlock when its bytes are bad. */
  async read(path: string): Promise<DecodedBlock | null> {
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw e;
    }
    return decodeBlock(bytes);
  }

  /**
   * The header of the block at `path` (its statistics: zone maps), reading only the file's
   * first bytes up to the header's end; null when it is gone; throws CorruptBlock when they
   * are not a block's header (its own checksum fails). The body is not read, nor checked.
   */
  async header(path: string): Promise<BlockMeta | null> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw e;
    }
    try {
      const first = new Uint8Array(HEADER_READ_BYTES);
      const got = await readFull(file, first);
      const span = headerSpan(first.subarray(0, got));
      if (span <= got) return blockHeader(first.subarray(0, span));
      if (got < first.length) throw new CorruptBlock("header past the end");
      const all = new Uint8Array(span);
      all.set(first);
      if (await readFull(file, all.subarray(got)) < span - got) {
        throw new CorruptBlock("header past the end");
      }
      return blockHeader(all);
    } finally {
      file.close();
    }
  }

  /** Removes one block (found corrupt). */
  async remove(path: string): Promise<void> {
    await Deno.remove(path).catch(() => {});
  }

  /**
   * Publishes a block: written to a temporary file, then renamed. Returns false, leaving
   * nothing behind, when it could not be written (a full disk: the cache is off for this write).
   */
  async write(key: string, lo: number, hi: number, bytes: Uint8Array): Promise<boolean> {
    const dir = join(this.dir, key);
    const random = crypto.getRandomValues(new Uint8Array(6));
    const suffix = Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
    const temp = join(dir, `.tmp-${lo}-${hi}-${suffix}`);
    try {
      if (this.#sync) {
        this.#writeSync(dir, temp, bytes);
        Deno.renameSync(temp, join(dir, `${lo}-${hi}.blk`));
        return this.#wrote(bytes.length);
      }
      if (!this.#made.has(dir)) {
        await Deno.mkdir(dir, { recursive: true });
        this.#made.add(dir);
      }
      try {
        await this.#write(temp, bytes);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
        // The entry was dropped (or swept) since its folder was made.
        this.#made.delete(dir);
        await Deno.mkdir(dir, { recursive: true });
        this.#made.add(dir);
        await this.#write(temp, bytes);
      }
      await Deno.rename(temp, join(dir, `${lo}-${hi}.blk`));
    } catch (e) {
      await Deno.remove(temp).catch(() => {});
      if (isDiskFull(e) || e instanceof Deno.errors.NotFound) return false;
      // Any other failure of a cache write (rights on the folder, a dropped entry) loses only
      // the cache: the query has its rows.
      return false;
    }
    return this.#wrote(bytes.length);
  }

  /**
   * `write`'s temporary file by blocking calls: in a scan worker's thread, a block of a few
   * hundred kilobytes goes to the page cache in well under a millisecond, less than the
   * hand-offs of the asynchronous calls to the runtime's threads (and their waits on a busy
   * machine), which held up the scan when blocks queued behind them.
   */
  #writeSync(dir: string, temp: string, bytes: Uint8Array): void {
    if (!this.#made.has(dir)) {
      Deno.mkdirSync(dir, { recursive: true });
      this.#made.add(dir);
    }
    try {
      Deno.writeFileSync(temp, bytes);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      // The entry was dropped (or swept) since its folder was made.
      this.#made.delete(dir);
      Deno.mkdirSync(dir, { recursive: true });
      this.#made.add(dir);
      Deno.writeFileSync(temp, bytes);
    }
  }

  /** Counts a block written; starts a sweep when enough was written since the last. */
  #wrote(n: number): true {
    this.#written += n;
    if (this.#written * 16 >= this.maxBytes) {
      this.#written = 0;
      // A sweep that fails (the folder's rights) loses nothing: the next write tries again.
      this.#sweeping ??= this.sweep().catch(() => {}).finally(() => this.#sweeping = null);
    }
    return true;
  }

  /** Removes every block of entry `key` (its file changed). */
  async drop(key: string): Promise<void> {
    const dir = join(this.dir, key);
    const random = crypto.getRandomValues(new Uint8Array(6));
    const gone = join(this.dir, `.drop-${Array.from(random, (b) => b.toString(16)).join("")}`);
    try {
      // Renamed first: no reader finds a half-removed entry.
      await Deno.rename(dir, gone);
    } catch {
      return;
    }
    await Deno.remove(gone, { recursive: true }).catch(() => {});
  }

  /**
   * Removes stale temporary files and dropped entries, then the least recently used entries
   * while the cache holds more than `maxBytes`. Returns when done.
   */
  async sweep(): Promise<void> {
    const now = this.#now();
    const entries: { dir: string; bytes: number; used: number }[] = [];
    let total = 0;
    try {
      for await (const e of Deno.readDir(this.dir)) {
        const dir = join(this.dir, e.name);
        if (e.name.startsWith(".drop-")) {
          await Deno.remove(dir, { recursive: true }).catch(() => {});
          continue;
        }
        if (!e.isDirectory) continue;
        let bytes = 0;
        let used = 0;
        try {
          used = (await Deno.stat(dir)).mtime?.getTime() ?? 0;
          for await (const f of Deno.readDir(dir)) {
            const path = join(dir, f.name);
            const info = await Deno.stat(path).catch(() => null);
            if (!info) continue;
            if (f.name.startsWith(".tmp-")) {
              if (now - (info.mtime?.getTime() ?? 0) > STALE_CACHE_TEMP_MS) {
                await Deno.remove(path).catch(() => {});
              }
              continue;
            }
            bytes += info.size;
          }
        } catch {
          continue; // dropped meanwhile
        }
        entries.push({ dir, bytes, used });
        total += bytes;
      }
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return;
      throw e;
    }
    entries.sort((a, b) => a.used - b.used);
    for (const e of entries) {
      if (total <= this.maxBytes) break;
      await Deno.remove(e.dir, { recursive: true }).catch(() => {});
      total -= e.bytes;
    }
  }

  /** The bytes the cache holds now (its blocks). */
  async size(): Promise<number> {
    let total = 0;
    try {
      for await (const e of Deno.readDir(this.dir)) {
        if (!e.isDirectory || e.name.startsWith(".")) continue;
        for await (const f of Deno.readDir(join(this.dir, e.name))) {
          if (!BLOCK_NAME.test(f.name)) continue;
          total += (await Deno.stat(join(this.dir, e.name, f.name)).catch(() => ({ size: 0 })))
            .size;
        }
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    return total;
  }

  #touch(dir: string): void {
    const t = new Date(this.#now());
    Deno.utime(dir, t, t).catch(() => {});
  }
}

/** Reads into `buf` until it is full or the file ends; the bytes read. */
async function readFull(file: Deno.FsFile, buf: Uint8Array): Promise<number> {
  let got = 0;
  while (got < buf.length) {
    const n = await file.read(buf.subarray(got));
    if (n === null) break;
    got += n;
  }
  return got;
}
