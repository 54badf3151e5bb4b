/**
 * The one interface through which the server keeps its state: key-addressed values with versions.
 * Owned by the engine (like datastore.ts), implemented by the backends of home/storage/: local
 * files (the default, today's layout of the home) and Deno KV (state shared by several servers).
 *
 * A key is a path of parts (`["conf", "users.json"]`); a value is bytes, as large as it needs to
 * be (a backend with a value limit chunks it, and a reader never sees half of a value). Every
 * stored value has a version, an opaque string that changes on every write; writes may name the
 * version they expect (compare-and-swap), so concurrent writers of one key resolve by version
 * (the ETag of the management API), not by the last write.
 */

import type { Diagnostic } from "../front/diagnostics.ts";

/** A key: 1 or more parts, each a non-empty name without `/`, `\`, NUL, and not starting with `.`. */
export type StorageKey = readonly string[];

export interface StoredValue {
  readonly value: Uint8Array;
  /** Opaque; changes on every write of the key. */
  readonly version: string;
}

/** A value read a piece at a time (`Storage.stream`). */
export interface StoredStream {
  /** The whole value's size in bytes. */
  readonly size: number;
  readonly version: string;
  /**
   * The bytes from the offset asked for to the end, in order, a piece at a time. When the value
   * is replaced while it is read and the rest is gone, it throws a StorageError saying so
   * (never a piece of another version).
   */
  readonly pieces: AsyncIterable<Uint8Array>;
}

export interface WriteOptions {
  /**
   * The version the key must have for the write to happen; `null`: the key must not exist.
   * Absent: write whatever is there.
   */
  readonly expectedVersion?: string | null | undefined;
  /**
   * A retention: the backend may drop the value this long after the write (Deno KV's
   * `expireIn`). A hint: the files backend keeps it until its owner removes it.
   */
  readonly expireInMs?: number;
}

/** A write that happened (with the new version; `null` after a delete), or a version conflict. */
export type WriteResult =
  | { readonly ok: true; readonly version: string | null }
  | { readonly ok: false; readonly conflict: StorageKey };

/** One key of an atomic commit: `value` set, or `null` to delete. */
export interface CommitEntry extends WriteOptions {
  readonly key: StorageKey;
  readonly value: Uint8Array | null;
}

/** At most this many keys in one `commit()` (Deno KV's remote limit on checks is 10). */
export const MAX_COMMIT_KEYS = 10;

export interface Storage {
  /** `"files"`, `"kv"` or `"pg"`: for messages and the health page. */
  readonly kind: string;
  /** The value and its version, or null when the key does not exist. */
  get(key: StorageKey): Promise<StoredValue | null>;
  /**
   * The value from byte `from` on (default 0), read a piece at a time so that a large value is
   * never whole in memory; null when the key does not exist.
   */
  stream(key: StorageKey, from?: number): Promise<StoredStream | null>;
  /** The version alone (cheap: no value read), or null when the key does not exist. */
  version(key: StorageKey): Promise<string | null>;
  put(key: StorageKey, value: Uint8Array, options?: WriteOptions): Promise<WriteResult>;
  /** Deletes the key; deleting a missing key without an expected version is a success. */
  delete(key: StorageKey, options?: Pick<WriteOptions, "expectedVersion">): Promise<WriteResult>;
  /** The keys under `prefix` (not `prefix` itself), in order of their parts. */
  list(prefix: StorageKey): AsyncIterable<StorageKey>;
  /**
   * Writes up to MAX_COMMIT_KEYS keys at once: when one expected version does not hold, nothing
   * is written and the result names that key.
   */
  commit(entries: readonly CommitEntry[]): Promise<WriteResult>;
  /**
   * What a backend with locks and notifications (PostgreSQL) offers servers coordinating through
   * it; absent on the others, which are polled.
   */
  readonly coordination?: StorageCoordination;
  /**
   * Releases the backend (a KV connection, a PostgreSQL pool); the storage is unusable
   * afterwards. A backend whose release takes time returns a promise of its end.
   */
  close(): void | Promise<void>;
}

/** Locked updates and notifications between the servers of one storage (Storage.coordination). */
export interface StorageCoordination {
  /**
   * A read-modify-write of `key` that never conflicts on it: every other `update` of `key` waits
   * while `decide` sees its value and the entries it returns (up to MAX_COMMIT_KEYS, `key` among
   * them or not; their expected versions are checked as in `commit`) are written, all in one
   * transaction. `decide` may be called again (the database broke a deadlock); undefined:
   * nothing is written and the answer is null.
   */
  update(
    key: StorageKey,
    decide: (current: StoredValue | null) => readonly CommitEntry[] | undefined,
  ): Promise<WriteResult | null>;
  /** Signals `channel` to the listeners of every server (this one's included). */
  notify(channel: string): Promise<void>;
  /**
   * Calls `listener` on each signal of `channel`, and once more when a lost connection to the
   * storage is back (signals meanwhile may be lost); resolves to the function that stops it.
   */
  listen(channel: string, listener: () => void): Promise<() => Promise<void>>;
}

/**
 * The storage cannot do what was asked: unreachable, full, refused, or a bad key. The message
 * names the operation and the key, never a credential; `publicMessage` is the same without any
 * host path or address (what an API client may be told).
 */
export class StorageError extends Error {
  readonly publicMessage: string;

  constructor(message: string, options?: ErrorOptions & { readonly publicMessage?: string }) {
    super(message, options);
    this.name = "StorageError";
    this.publicMessage = options?.publicMessage ?? message;
  }

  /**
   * What a query that failed through it reports: the public message, never where the storage is
   * (actors/engine_work.ts's failureOf, engine/share_run.ts's workers).
   */
  get diagnostic(): Diagnostic {
    return { code: "RUNTIME_ERROR", message: this.publicMessage };
  }
}

const BAD_PART = /[/\\\0]/;

/** Throws StorageError for a key no backend may hold (so both backends refuse the same keys). */
export function checkKey(key: StorageKey, allowEmpty = false): void {
  if (key.length === 0 && !allowEmpty) {
    throw new StorageError("a storage key needs 1 or more parts");
  }
  for (const part of key) {
    if (typeof part !== "string" || part === "" || part.startsWith(".") || BAD_PART.test(part)) {
      throw new StorageError(
        `storage key ${
          showKey(key)
        } is not valid: a part must be a non-empty name without / \\ or NUL, not starting with '.'`,
      );
    }
    if (new TextEncoder().encode(part).length > 255) {
      throw new StorageError(`storage key ${showKey(key)} is not valid: a part is over 255 bytes`);
    }
  }
}

/** `conf/users.json`, for messages. */
export function showKey(key: StorageKey): string {
  const printable = (part: string) =>
    [...String(part)].map((c) => c.charCodeAt(0) < 0x20 ? "?" : c).join("");
  return `'${key.map(printable).join("/")}'`;
}

/** Checks a commit's size and keys; a key named twice would make the result depend on order. */
export function checkCommit(entries: readonly CommitEntry[]): void {
  if (entries.length > MAX_COMMIT_KEYS) {
    throw new StorageError(
      `an atomic commit may write at most ${MAX_COMMIT_KEYS} keys, not ${entries.length}`,
    );
  }
  const seen = new Set<string>();
  for (const { key } of entries) {
    checkKey(key);
    const id = key.join("/");
    if (seen.has(id)) throw new StorageError(`an atomic commit names ${showKey(key)} twice`);
    seen.add(id);
  }
}
