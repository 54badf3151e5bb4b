/**
 * The Deno KV backend of engine/contracts/storage.ts: state shared by every server opened on the same KV (a
 * local SQLite file with `kv:<path>`, or a remote KV with `kv:<url>`).
 *
 * Layout under the root `["trawl"]`:
 *
 *   ["trawl", "h", ...key]              the head of a value: { id, size, chunks, data? }
 *   ["trawl", "c", id, index]           chunk `index` of a value too large for its head
 *   ["trawl", "p", id]                  a write of chunks in progress (expires after PENDING_MS)
 *   ["trawl", "r", id]                  chunks of a replaced or deleted value: { chunks, at }
 *
 * KV takes values up to 64 KiB, 1000 mutations and 800 KiB per atomic commit (checked against
 * deno 2.9: "Value too large (max 65536 bytes)", "Total mutation size too large (max 819200
 * bytes)"). A value of up to INLINE_BYTES lives in its head. A larger one is written as chunks
 * under a fresh id first (in commits of at most BATCH_BYTES), invisible to readers, and then its
 * head is switched in one atomic commit that checks the version and marks the old value's chunks
 * retired; they are deleted by a later write (which looks at most once a minute) or the sweep at
 * start, once retired for `retireMs` (RETIRE_MS), so that a reader streaming the old value (a
 * table read while it is saved again) still finds the rest of it. A reader reads the head, then the chunks of its id;
 * when they are gone (a whole read: it reads the new head again; a stream outliving the
 * retirement: it fails saying so), it never sees half a value or two. The version of a
 * key is its head's versionstamp. With a retention (`expireInMs`) head and chunks get `expireIn`.
 *
 * A writer killed between its chunks and its head leaves chunks no head names: its pending mark
 * expires, and `sweepOrphanChunks()` (run by main.ts at start) removes them.
 */

import {
  checkCommit,
  checkKey,
  type CommitEntry,
  showKey,
  type Storage,
  StorageError,
  type StorageKey,
  type StoredStream,
  type StoredValue,
  type WriteOptions,
  type WriteResult,
} from "../../engine/contracts/storage.ts";

const ROOT = "trawl";
/** Values up to this size are kept in their head (the head's other fields take under 200 B). */
export const INLINE_BYTES = 60_000;
/** Size of one chunk of a larger value. */
export const CHUNK_BYTES = 60_000;
/** Bytes of chunks written per atomic commit (KV allows 819200 in total). */
const BATCH_BYTES = 12 * CHUNK_BYTES;
/** Keys deleted per commit (KV allows 1000 mutations). */
const DELETE_BATCH = 500;
/** How long a write of chunks may take before its chunks count as left by a dead writer. */
const PENDING_MS = 60 * 60 * 1000;
/** Reads retried when a writer replaced the value being read. */
const READ_ATTEMPTS = 5;
/** Unconditional writes retried when another writer came between their read and commit. */
const WRITE_ATTEMPTS = 20;
/** How long a call is tried again while another process holds the KV file's lock. */
const LOCKED_MS = 5_000;
/**
 * How long an open is tried again while the file is locked. An open first waits SQLite's own
 * busy timeout (5 s, its thread blocked) before it answers "database is locked".
 */
const LOCKED_OPEN_MS = 30_000;

/** SQLite's answer when another process holds the file's write lock (nothing was done). */
function isLocked(e: unknown): boolean {
  return e instanceof Error && !(e instanceof StorageError) &&
    /database is locked/i.test(e.message);
}

interface Head {
  readonly id: string;
  readonly size: number;
  readonly chunks: number;
  readonly data?: Uint8Array;
}

function isHead(value: unknown): value is Head {
  const head = value as Head;
  return typeof head === "object" && head !== null && typeof head.id === "string" &&
    typeof head.size === "number" && typeof head.chunks === "number";
}

const headKey = (key: StorageKey): Deno.KvKey => [ROOT, "h", ...key];
const chunkPrefix = (id: string): Deno.KvKey => [ROOT, "c", id];
const pendingKey = (id: string): Deno.KvKey => [ROOT, "p", id];
const retiredKey = (id: string): Deno.KvKey => [ROOT, "r", id];

interface Retired {
  readonly chunks: number;
  /** When the value was replaced or deleted (ms since the epoch). */
  readonly at: number;
}

/**
 * How long the chunks of a replaced value stay for the readers streaming it. A table is read
 * into a query's result at the speed of the scan (a GB in tens of seconds); a reader slower than
 * this fails saying the value was replaced. The cost: a value replaced more often keeps several
 * old versions for that long.
 */
export const RETIRE_MS = 5 * 60 * 1000;

/** What opens a KV: Deno.openKv, or a test's stand-in that fails as a busy file does. */
export type KvOpener = (where: string) => Promise<Deno.Kv>;

/**
 * Opens `kv:<path or url>` (the value of the `storage` setting after `kv:`). Opening a local
 * file sets up its journal, which needs the write lock: while another process holds it (several
 * servers on one file, one of them committing) the open fails "database is locked" having done
 * nothing, after waiting SQLite's busy timeout; it is tried again for up to LOCKED_OPEN_MS.
 */
export async function openKvStorage(
  where: string,
  open: KvOpener | undefined = typeof Deno.openKv === "function" ? Deno.openKv : undefined,
): Promise<KvStorage> {
  const shown = /^https?:/i.test(where) ? where.replace(/[?#].*$/, "") : where;
  if (open === undefined) {
    throw new StorageError(`cannot open the KV '${shown}': run Deno with --unstable-kv`);
  }
  const started = Date.now();
  for (let attempt = 1;; attempt++) {
    try {
      return new KvStorage(await open(where), shown);
    } catch (e) {
      if (isLocked(e) && Date.now() - started <= LOCKED_OPEN_MS) {
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(5 * attempt, 50)));
        continue;
      }
      const message = `cannot open the KV '${shown}': ${(e as Error).message}`;
      throw new StorageError(message, { cause: e });
    }
  }
}

export class KvStorage implements Storage {
  readonly kind = "kv";

  readonly #retireMs: number;
  /** When a write next looks for retired chunks to drop (a KV list: not at every write). */
  #nextDrop = 0;

  /** `where` names the KV in messages; `retireMs`: RETIRE_MS unless a test wants it shorter. */
  constructor(
    readonly kv: Deno.Kv,
    readonly where: string = "KV",
    options: { readonly retireMs?: number } = {},
  ) {
    this.#retireMs = options.retireMs ?? RETIRE_MS;
  }

  /**
   * Runs a KV call, turning its failures into StorageErrors naming what was being done. A call
   * that found the file locked by another process (SQLite's "database is locked": several
   * servers on one KV file write at once, and the local backend does not wait) did nothing and
   * is run again, for up to LOCKED_MS.
   */
  async #call<T>(doing: string, work: () => Promise<T>): Promise<T> {
    const started = Date.now();
    for (let attempt = 1;; attempt++) {
      try {
        return await work();
      } catch (e) {
        if (!isLocked(e) || Date.now() - started > LOCKED_MS) return this.#failed(doing, e);
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(2 * attempt, 20)));
      }
    }
  }

  #failed(doing: string, e: unknown): never {
    if (e instanceof StorageError) throw e;
    throw new StorageError(
      `the KV '${this.where}' failed while ${doing}: ${(e as Error).message}`,
      { cause: e, publicMessage: `the server's storage failed while ${doing}` },
    );
  }

  async version(key: StorageKey): Promise<string | null> {
    checkKey(key);
    const entry = await this.#call(`reading ${showKey(key)}`, () => this.kv.get(headKey(key)));
    return entry.versionstamp;
  }

  async get(key: StorageKey): Promise<StoredValue | null> {
    checkKey(key);
    const doing = `reading ${showKey(key)}`;
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const entry = await this.#call(doing, () => this.kv.get(headKey(key)));
      if (entry.versionstamp === null) return null;
      if (!isHead(entry.value)) throw new StorageError(`${showKey(key)} in the KV is not a value`);
      const head = entry.value;
      if (head.data !== undefined) return { value: head.data, version: entry.versionstamp };
      const value = await this.#readChunks(head, doing);
      if (value !== null) return { value, version: entry.versionstamp };
      // The chunks went away: a writer replaced the value between our two reads.
    }
    throw new StorageError(`${doing}: it kept changing while being read`);
  }

  async stream(key: StorageKey, from = 0): Promise<StoredStream | null> {
    checkKey(key);
    const doing = `reading ${showKey(key)}`;
    const entry = await this.#call(doing, () => this.kv.get(headKey(key)));
    if (entry.versionstamp === null) return null;
    if (!isHead(entry.value)) throw new StorageError(`${showKey(key)} in the KV is not a value`);
    const head = entry.value;
    const start = Math.max(0, Math.min(from, head.size));
    const pieces = head.data !== undefined
      ? (async function* (data: Uint8Array) {
        if (start < data.length) yield data.subarray(start);
      })(head.data)
      : this.#streamChunks(head, start, doing);
    return { size: head.size, version: entry.versionstamp, pieces };
  }

  /**
   * The chunks of a head from the one holding byte `from`, listed a few at a time. A writer
   * that replaced the value deletes these chunks after its switch: a chunk missing (or not the
   * size it must have) means the rest is gone, and the read fails saying so rather than end
   * short. A list refused because another process holds the file goes on from where it was.
   */
  async *#streamChunks(head: Head, from: number, doing: string): AsyncGenerator<Uint8Array> {
    let index = Math.floor(from / CHUNK_BYTES);
    let skip = from - index * CHUNK_BYTES;
    const changed = () => new StorageError(`${doing}: it was replaced while being read`);
    const started = Date.now();
    while (index < head.chunks) {
      const chunks = this.kv.list<Uint8Array>({
        start: [...chunkPrefix(head.id), index],
        end: [...chunkPrefix(head.id), head.chunks],
      }, { batchSize: 16 });
      try {
        for await (const chunk of chunks) {
          const size = index === head.chunks - 1 ? head.size - index * CHUNK_BYTES : CHUNK_BYTES;
          if (chunk.key.at(-1) !== index || chunk.value.length !== size) throw changed();
          index++;
          const piece = skip > 0 ? chunk.value.subarray(skip) : chunk.value;
          skip = 0;
          yield piece;
        }
      } catch (e) {
        if (!isLocked(e) || Date.now() - started > LOCKED_MS) this.#failed(doing, e);
        continue; // listed again from `index`
      }
      if (index < head.chunks) throw changed();
    }
  }

  /** The chunks of a head, or null when some are gone. */
  async #readChunks(head: Head, doing: string): Promise<Uint8Array | null> {
    const value = new Uint8Array(head.size);
    let index = 0;
    let offset = 0;
    const ok = await this.#call(doing, async () => {
      index = 0; // a call run again after a locked file starts over
      offset = 0;
      for await (const chunk of this.kv.list<Uint8Array>({ prefix: chunkPrefix(head.id) })) {
        if (chunk.key.at(-1) !== index || offset + chunk.value.length > head.size) return false;
        value.set(chunk.value, offset);
        offset += chunk.value.length;
        index++;
      }
      return true;
    });
    return ok && index === head.chunks && offset === head.size ? value : null;
  }

  put(key: StorageKey, value: Uint8Array, options: WriteOptions = {}): Promise<WriteResult> {
    return this.commit([{ key, value, ...options }]);
  }

  delete(
    key: StorageKey,
    options: Pick<WriteOptions, "expectedVersion"> = {},
  ): Promise<WriteResult> {
    return this.commit([{ key, value: null, expectedVersion: options.expectedVersion }]);
  }

  async *list(prefix: StorageKey): AsyncIterable<StorageKey> {
    checkKey(prefix, true);
    const iterator = this.kv.list({ prefix: headKey(prefix) });
    const doing = `listing ${showKey(prefix)}`;
    while (true) {
      const next = await this.#call(doing, () => iterator.next());
      if (next.done) return;
      yield (next.value.key.slice(2) as string[]);
    }
  }

  async commit(entries: readonly CommitEntry[]): Promise<WriteResult> {
    checkCommit(entries);
    const doing = `writing ${entries.map((e) => showKey(e.key)).join(", ")}`;
    // Large values go first as chunks under fresh ids: nobody reads them before the switch.
    const fresh = await Promise.all(
      entries.map((entry) => this.#prepare(entry, doing)),
    );
    try {
      for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
        const heads = await this.#call(
          doing,
          () => this.kv.getMany(entries.map((e) => headKey(e.key))),
        );
        const atomic = this.kv.atomic();
        for (const [i, entry] of entries.entries()) {
          const expected = entry.expectedVersion === undefined
            ? heads[i]!.versionstamp
            : entry.expectedVersion;
          if (entry.expectedVersion !== undefined && heads[i]!.versionstamp !== expected) {
            return { ok: false, conflict: entry.key };
          }
          atomic.check({ key: headKey(entry.key), versionstamp: expected });
          const head = fresh[i]!;
          if (head !== null && head.chunks > 0) atomic.delete(pendingKey(head.id));
          // The value replaced: its chunks stay a while for the readers streaming it.
          const old = heads[i]!.value;
          if (isHead(old) && old.chunks > 0) {
            atomic.set(
              retiredKey(old.id),
              { chunks: old.chunks, at: Date.now() } satisfies Retired,
            );
          }
          if (entry.value === null) atomic.delete(headKey(entry.key));
          else {
            atomic.set(
              headKey(entry.key),
              fresh[i]!,
              entry.expireInMs === undefined ? {} : { expireIn: entry.expireInMs },
            );
          }
        }
        const result = await this.#call(doing, () => atomic.commit());
        if (!result.ok) {
          const lost = entries.find((e) => e.expectedVersion !== undefined);
          // With an expected version a failed check is a conflict; without, someone came between.
          if (lost !== undefined) {
            const now = await this.#call(
              doing,
              () => this.kv.getMany(entries.map((e) => headKey(e.key))),
            );
            const index = entries.findIndex((e, i) =>
              e.expectedVersion !== undefined && now[i]!.versionstamp !== e.expectedVersion
            );
            if (index >= 0) return { ok: false, conflict: entries[index]!.key };
          }
          continue;
        }
        fresh.length = 0; // switched: the new chunks are in use
        if (Date.now() >= this.#nextDrop) {
          this.#nextDrop = Date.now() + Math.min(this.#retireMs, 60_000);
          await this.#dropRetired(doing);
        }
        const last = entries.at(-1)!;
        return { ok: true, version: last.value === null ? null : result.versionstamp };
      }
      throw new StorageError(`${doing}: too many concurrent writers, try again`);
    } finally {
      // Not switched (a conflict or a failure): the chunks written for it are nobody's.
      await this.#dropChunks(fresh, doing).catch(() => {});
    }
  }

  /** Writes the chunks of a large value; returns the head to switch to (null for a delete). */
  async #prepare(entry: CommitEntry, doing: string): Promise<Head | null> {
    const { value } = entry;
    if (value === null) return null;
    const id = crypto.randomUUID();
    if (value.length <= INLINE_BYTES) return { id, size: value.length, chunks: 0, data: value };
    const chunks = Math.ceil(value.length / CHUNK_BYTES);
    const options = entry.expireInMs === undefined ? {} : { expireIn: entry.expireInMs };
    const head: Head = { id, size: value.length, chunks };
    // Marked before the first chunk, so a sweep never takes the chunks of a write in progress.
    await this.#call(
      doing,
      () => this.kv.set(pendingKey(id), Date.now(), { expireIn: PENDING_MS }),
    );
    try {
      for (let first = 0; first < chunks; first += BATCH_BYTES / CHUNK_BYTES) {
        const atomic = this.kv.atomic();
        const end = Math.min(chunks, first + BATCH_BYTES / CHUNK_BYTES);
        for (let i = first; i < end; i++) {
          const part = value.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES);
          atomic.set([...chunkPrefix(id), i], part, options);
        }
        await this.#call(doing, () => atomic.commit());
      }
    } catch (e) {
      await this.#dropChunks([head], doing).catch(() => {});
      throw e;
    }
    return head;
  }

  /** Deletes the chunks of the given heads (inline ones have none). */
  async #dropChunks(heads: readonly unknown[], doing: string): Promise<void> {
    for (const head of heads) {
      if (!isHead(head) || head.chunks === 0) continue;
      for (let first = 0; first < head.chunks; first += DELETE_BATCH) {
        const atomic = this.kv.atomic();
        for (let i = first; i < Math.min(head.chunks, first + DELETE_BATCH); i++) {
          atomic.delete([...chunkPrefix(head.id), i]);
        }
        await this.#call(doing, () => atomic.commit());
      }
      await this.#call(doing, () => this.kv.delete(pendingKey(head.id)));
    }
  }

  /** Deletes the chunks retired at least `retireMs` ago, and their marks. */
  async #dropRetired(doing: string): Promise<void> {
    const before = Date.now() - this.#retireMs;
    const marks = await this.#call(
      doing,
      () => Array.fromAsync(this.kv.list<Retired>({ prefix: [ROOT, "r"] })),
    );
    for (const { key, value } of marks) {
      if (typeof value?.at !== "number" || value.at > before) continue;
      const id = key[2] as string;
      await this.#dropChunks([{ id, size: 0, chunks: value.chunks }], doing);
      await this.#call(doing, () => this.kv.delete(key));
    }
  }

  /**
   * Removes chunks that no head names and no write in progress owns (left by a writer killed
   * between its chunks and its head); returns how many values' chunks went. Drops the chunks
   * retired long enough, then lists the chunks, the pending marks, the heads and the retired
   * marks, in that order: a write switching meanwhile is seen in one of the last three lists.
   */
  async sweepOrphanChunks(): Promise<number> {
    const doing = "sweeping chunks left by interrupted writes";
    await this.#dropRetired(doing);
    const list = <T>(prefix: Deno.KvKey) =>
      this.#call(doing, () => Array.fromAsync(this.kv.list<T>({ prefix })));
    const chunkIds = new Map<string, number>();
    for (const { key } of await list<Uint8Array>([ROOT, "c"])) {
      const id = key[2] as string;
      chunkIds.set(id, Math.max(chunkIds.get(id) ?? 0, (key[3] as number) + 1));
    }
    if (chunkIds.size === 0) return 0;
    for (const { key } of await list<number>([ROOT, "p"])) chunkIds.delete(key[2] as string);
    for (const { value } of await list<unknown>([ROOT, "h"])) {
      if (isHead(value)) chunkIds.delete(value.id);
    }
    // Retired less than retireMs ago: a reader may still stream them. Listed last: a switch
    // after the heads were listed marks the chunks it replaced before this list.
    for (const { key } of await list<Retired>([ROOT, "r"])) chunkIds.delete(key[2] as string);
    for (const [id, chunks] of chunkIds) {
      await this.#dropChunks([{ id, size: 0, chunks }], doing);
    }
    return chunkIds.size;
  }

  close(): void {
    this.kv.close();
  }
}
