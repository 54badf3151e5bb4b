/**
 * The PostgreSQL backend of engine/contracts/storage.ts (`storage = pg:<postgres URL>`): state
 * shared by every server opened on the same database, on as many machines as reach it. Through
 * npm's `postgres` client (porsager/postgres, run patched from vendor/postgres: in 3.4.9 a
 * connection closed under a transaction's statement ended the process, vendor/README.md), a pool
 * of PG_CONNECTIONS connections.
 *
 * Tables (made at open when missing, under an advisory lock so servers starting together do not
 * race):
 *
 *   trawl_heads(key text[] COLLATE "C", version, size, data, blob, expires_at)
 *       one row per key: its version, and its value inline (`data`, up to INLINE_BYTES) or the id
 *       of its chunks (`blob`)
 *   trawl_chunks(blob, n, bytes)      chunk `n` (CHUNK_BYTES) of a larger value
 *   trawl_retired(blob, at)           chunks of a replaced or deleted value, kept RETIRE_MS for
 *                                     the readers streaming it, then deleted
 *   trawl_versions                    a sequence: one number per commit, the version of every key
 *                                     it writes (as KV's versionstamp)
 *
 * A commit is one transaction: each key's row is locked (`SELECT ... FOR UPDATE`, keys in order
 * so that two commits never wait for each other in a cycle), its expected version checked, and
 * the rows and chunks written; a version that does not hold rolls everything back. Chunks are
 * written in the same transaction as their head, so no write leaves chunks no head names. A key
 * is its parts as a `text[]` in the "C" collation: the rows' order is the parts' order, and a
 * prefix is a range of the primary key.
 *
 * A value with a retention (`expireInMs`) is gone for readers once expired; its row is deleted
 * by the next write of the key or by the sweep (a write looks at most once a minute).
 *
 * Besides the contract it offers `coordination` (engine/contracts/storage.ts): a locked
 * read-modify-write of a key (a transaction holding an advisory lock named by the key, so that
 * writers of a hot document such as the shared queries' slots wait their turn for a few
 * milliseconds instead of losing compare-and-swaps and retrying), and LISTEN/NOTIFY on channels
 * `trawl_<name>` (one more connection, the client's, re-listening after a reconnect).
 */

import postgres from "postgres";
import {
  checkCommit,
  checkKey,
  type CommitEntry,
  showKey,
  type Storage,
  type StorageCoordination,
  StorageError,
  type StorageKey,
  type StoredStream,
  type StoredValue,
  type WriteOptions,
  type WriteResult,
} from "../../engine/contracts/storage.ts";

/** Values up to this size are kept in their head row. */
export const INLINE_BYTES = 256 * 1024;
/** Size of one chunk of a larger value. */
export const CHUNK_BYTES = 1024 * 1024;
/** Chunks inserted per statement. */
const CHUNKS_PER_INSERT = 8;
/** Chunks read per statement while streaming. */
const CHUNKS_PER_READ = 4;
/** How long the chunks of a replaced value stay for the readers streaming it (as KV's). */
export const RETIRE_MS = 5 * 60 * 1000;
/** Connections of one server's pool. */
export const PG_CONNECTIONS = 10;
/** Commits retried after PostgreSQL broke a deadlock or a serialization conflict. */
const COMMIT_ATTEMPTS = 20;
/** Keys listed per statement. */
const LIST_PAGE = 1000;
/** The advisory lock held while the tables are made. */
const SCHEMA_LOCK = 0x7472_6177; // "traw"

type Sql = postgres.Sql;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS trawl_heads (
    key text[] COLLATE "C" PRIMARY KEY,
    version bigint NOT NULL,
    size bigint NOT NULL,
    data bytea,
    blob bigint,
    expires_at timestamptz
  );
  CREATE TABLE IF NOT EXISTS trawl_chunks (
    blob bigint NOT NULL,
    n integer NOT NULL,
    bytes bytea NOT NULL,
    PRIMARY KEY (blob, n)
  );
  CREATE TABLE IF NOT EXISTS trawl_retired (
    blob bigint PRIMARY KEY,
    at timestamptz NOT NULL
  );
  CREATE SEQUENCE IF NOT EXISTS trawl_versions;
  CREATE TABLE IF NOT EXISTS trawl_run_slots (
    n integer PRIMARY KEY,
    holder text UNIQUE,
    server text,
    at bigint
  );
  CREATE TABLE IF NOT EXISTS trawl_admitted (
    id text PRIMARY KEY,
    server text NOT NULL,
    at bigint NOT NULL,
    state text NOT NULL
  );
  CREATE INDEX IF NOT EXISTS trawl_admitted_queue ON trawl_admitted (at, id) WHERE state = 'queued';
`;

/** The URL without its password, query and fragment: what messages may show. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = "";
    u.search = "";
    u.hash = "";
    return u.toString();
  } catch {
    return "(a PostgreSQL URL that does not parse)";
  }
}

/** Opens `pg:<url>` (the value of the `storage` setting after `pg:`), making its tables. */
export async function openPgStorage(
  url: string,
  options: { readonly retireMs?: number; readonly connections?: number } = {},
): Promise<PgStorage> {
  const shown = shownUrl(url);
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    throw new StorageError(
      `cannot open the PostgreSQL storage '${shown}': the URL must start with postgres:// or postgresql://`,
    );
  }
  const sql = postgres(url, {
    max: options.connections ?? PG_CONNECTIONS,
    onnotice: () => {},
    connect_timeout: 10,
    idle_timeout: 60,
    // pg_stat_activity tells which Trawl process holds a connection (PGAPPNAME, when set, wins).
    connection: { application_name: appName() },
  });
  try {
    await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${SCHEMA_LOCK})`;
      await tx.unsafe(SCHEMA);
    });
  } catch (e) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw new StorageError(
      `cannot open the PostgreSQL storage '${shown}': ${(e as Error).message}`,
      { cause: e, publicMessage: "the server's storage cannot be opened" },
    );
  }
  return new PgStorage(sql, shown, options);
}

/** `trawl <pid>`: the application_name of this process's connections, unless PGAPPNAME says. */
export function appName(): string {
  let set: string | undefined;
  try {
    set = Deno.env.get("PGAPPNAME");
  } catch { /* no right to read the environment */ }
  return set || `trawl ${Deno.pid}`;
}

interface HeadRow {
  readonly version: string;
  readonly size: string;
  readonly data: Uint8Array | null;
  readonly blob: string | null;
}

/** A conflict found inside a transaction: thrown to roll it back. */
class Conflict {
  constructor(readonly key: StorageKey) {}
}

/** Thrown inside `PgStorage.transact`'s work: the transaction is rolled back, `value` answered. */
export class Rollback {
  constructor(readonly value: unknown) {}
}

/** A key made by another commit while this one ran: this one is rolled back and run again. */
class RunAgain extends Error {
  constructor() {
    super("another writer made a key of the commit meanwhile, too often");
  }
}

/** A Buffer from the client as a plain Uint8Array (the same bytes, no copy). */
function bytesOf(value: Uint8Array): Uint8Array {
  return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}

/** PostgreSQL broke a deadlock or refused a serialization: the transaction may be run again. */
function isRetryable(e: unknown): boolean {
  if (e instanceof RunAgain) return true;
  const code = (e as { code?: unknown })?.code;
  return code === "40P01" || code === "40001";
}

/** The bounds of the keys under `prefix`: (prefix, after) excludes the prefix itself. */
function prefixRange(prefix: StorageKey): { after: string[] | null } {
  if (prefix.length === 0) return { after: null };
  // No part holds NUL: the first string longer than `last` is `last + "\x01"`.
  return { after: [...prefix.slice(0, -1), `${prefix.at(-1)}\u0001`] };
}

export class PgStorage implements Storage {
  readonly kind = "pg";
  readonly coordination: StorageCoordination = {
    update: (key, decide) => this.#update(key, decide),
    notify: (channel) => this.#notify(channel),
    listen: (channel, listener) => this.#listen(channel, listener),
  };
  readonly #retireMs: number;
  /** When a write next drops retired chunks and expired rows (not at every write). */
  #nextSweep = 0;
  #closed: Promise<void> | undefined;

  /** `where` names the database in messages (no password). */
  constructor(
    readonly sql: Sql,
    readonly where: string,
    options: { readonly retireMs?: number } = {},
  ) {
    this.#retireMs = options.retireMs ?? RETIRE_MS;
  }

  async #call<T>(doing: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      this.#failed(doing, e);
    }
  }

  #failed(doing: string, e: unknown): never {
    if (e instanceof StorageError) throw e;
    throw new StorageError(
      `the PostgreSQL storage '${this.where}' failed while ${doing}: ${(e as Error).message}`,
      { cause: e, publicMessage: `the server's storage failed while ${doing}` },
    );
  }

  async version(key: StorageKey): Promise<string | null> {
    checkKey(key);
    const rows = await this.#call(
      `reading ${showKey(key)}`,
      () =>
        this.sql<{ version: string }[]>`
          SELECT version FROM trawl_heads
          WHERE key = ${key as string[]} AND (expires_at IS NULL OR expires_at > now())`,
    );
    return rows[0]?.version ?? null;
  }

  async get(key: StorageKey): Promise<StoredValue | null> {
    checkKey(key);
    // One statement: the head and its chunks from one snapshot.
    const rows = await this.#call(
      `reading ${showKey(key)}`,
      () =>
        this.sql<(HeadRow & { n: number | null; bytes: Uint8Array | null })[]>`
          SELECT h.version, h.size, h.data, h.blob, c.n, c.bytes
          FROM trawl_heads h LEFT JOIN trawl_chunks c ON c.blob = h.blob
          WHERE h.key = ${key as string[]} AND (h.expires_at IS NULL OR h.expires_at > now())
          ORDER BY c.n`,
    );
    const head = rows[0];
    if (head === undefined) return null;
    if (head.blob === null) {
      return { value: bytesOf(head.data ?? new Uint8Array()), version: head.version };
    }
    const size = Number(head.size);
    const value = new Uint8Array(size);
    let offset = 0;
    for (const [i, row] of rows.entries()) {
      if (row.n !== i || row.bytes === null || offset + row.bytes.length > size) {
        throw new StorageError(`${showKey(key)} in PostgreSQL is missing a part of its value`);
      }
      value.set(row.bytes, offset);
      offset += row.bytes.length;
    }
    if (offset !== size) {
      throw new StorageError(`${showKey(key)} in PostgreSQL is missing a part of its value`);
    }
    return { value, version: head.version };
  }

  async stream(key: StorageKey, from = 0): Promise<StoredStream | null> {
    checkKey(key);
    const doing = `reading ${showKey(key)}`;
    const rows = await this.#call(
      doing,
      () =>
        this.sql<HeadRow[]>`
          SELECT version, size, data, blob FROM trawl_heads
          WHERE key = ${key as string[]} AND (expires_at IS NULL OR expires_at > now())`,
    );
    const head = rows[0];
    if (head === undefined) return null;
    const size = Number(head.size);
    const start = Math.max(0, Math.min(from, size));
    const pieces = head.blob === null
      ? (async function* (data: Uint8Array) {
        if (start < data.length) yield data.subarray(start);
      })(bytesOf(head.data ?? new Uint8Array()))
      : this.#streamChunks(head.blob, size, start, doing);
    return { size, version: head.version, pieces };
  }

  /**
   * The chunks of blob `blob` from the one holding byte `from`, a few per statement. A chunk
   * missing (the value was replaced and its chunks dropped after RETIRE_MS) fails the read
   * saying so, never a piece of another value.
   */
  async *#streamChunks(
    blob: string,
    size: number,
    from: number,
    doing: string,
  ): AsyncGenerator<Uint8Array> {
    const count = Math.ceil(size / CHUNK_BYTES);
    let index = Math.floor(from / CHUNK_BYTES);
    let skip = from - index * CHUNK_BYTES;
    while (index < count) {
      const rows = await this.#call(
        doing,
        () =>
          this.sql<{ n: number; bytes: Uint8Array }[]>`
            SELECT n, bytes FROM trawl_chunks
            WHERE blob = ${blob} AND n >= ${index} AND n < ${index + CHUNKS_PER_READ}
            ORDER BY n`,
      );
      if (rows.length === 0) {
        throw new StorageError(`${doing}: it was replaced while being read`);
      }
      for (const row of rows) {
        const want = index === count - 1 ? size - index * CHUNK_BYTES : CHUNK_BYTES;
        if (row.n !== index || row.bytes.length !== want) {
          throw new StorageError(`${doing}: it was replaced while being read`);
        }
        index++;
        const piece = bytesOf(row.bytes);
        yield skip > 0 ? piece.subarray(skip) : piece;
        skip = 0;
      }
    }
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
    const doing = `listing ${showKey(prefix)}`;
    const { after } = prefixRange(prefix);
    let last: string[] = [...prefix];
    while (true) {
      const from = last;
      const rows = await this.#call(
        doing,
        () =>
          after === null
            ? this.sql<{ key: string[] }[]>`
              SELECT key FROM trawl_heads
              WHERE key > ${from}::text[] AND (expires_at IS NULL OR expires_at > now())
              ORDER BY key LIMIT ${LIST_PAGE}`
            : this.sql<{ key: string[] }[]>`
              SELECT key FROM trawl_heads
              WHERE key > ${from}::text[] AND key < ${after}::text[]
                AND (expires_at IS NULL OR expires_at > now())
              ORDER BY key LIMIT ${LIST_PAGE}`,
      );
      for (const row of rows) yield row.key;
      if (rows.length < LIST_PAGE) return;
      last = rows.at(-1)!.key;
    }
  }

  async commit(entries: readonly CommitEntry[]): Promise<WriteResult> {
    checkCommit(entries);
    const doing = `writing ${entries.map((e) => showKey(e.key)).join(", ")}`;
    // Rows locked in the keys' order: two commits never wait for each other in a cycle.
    const ordered = [...entries].sort((a, b) => compareKeys(a.key, b.key));
    for (let attempt = 1;; attempt++) {
      try {
        const version = await this.sql.begin((tx) => this.#write(tx, ordered));
        if (Date.now() >= this.#nextSweep) {
          this.#nextSweep = Date.now() + Math.min(this.#retireMs, 60_000);
          await this.sweep().catch(() => {});
        }
        return { ok: true, version: entries.at(-1)!.value === null ? null : version };
      } catch (e) {
        if (e instanceof Conflict) return { ok: false, conflict: e.key };
        if (isRetryable(e) && attempt < COMMIT_ATTEMPTS) continue;
        this.#failed(doing, e);
      }
    }
  }

  /**
   * The writes of one commit inside its transaction; its version. Throws Conflict. In three
   * round trips whatever the number of keys: the version and every key's row locked (the
   * statements sent at once, run in the keys' order), the expected versions checked here, then
   * the writes at once. A row expired is no value: it is replaced or deleted as absent.
   */
  async #write(tx: postgres.TransactionSql, entries: readonly CommitEntry[]): Promise<string> {
    type Row = { version: string; blob: string | null; expired: boolean };
    const [[next], ...found] = await Promise.all([
      tx<[{ v: string }]>`SELECT nextval('trawl_versions')::text AS v`,
      ...entries.map((entry) =>
        tx<Row[]>`
          SELECT version, blob, coalesce(expires_at <= now(), false) AS expired
          FROM trawl_heads WHERE key = ${entry.key as string[]} FOR UPDATE`
      ),
    ]);
    const version = next.v;
    const retire: string[] = [];
    const writes: Promise<unknown>[] = [];
    const inserts: { entry: CommitEntry; done: Promise<unknown[]> }[] = [];
    for (const [i, entry] of entries.entries()) {
      const row = found[i]![0];
      const live = row && !row.expired ? row : undefined;
      const expected = entry.expectedVersion;
      if (expected !== undefined && (live?.version ?? null) !== expected) {
        throw new Conflict(entry.key);
      }
    }
    for (const [i, entry] of entries.entries()) {
      const key = entry.key as string[];
      const row = found[i]![0];
      if (row?.blob) retire.push(row.blob);
      if (entry.value === null) {
        if (row) writes.push(tx`DELETE FROM trawl_heads WHERE key = ${key}`.execute());
        continue;
      }
      const blob = entry.value.length > INLINE_BYTES
        ? await this.#writeChunks(tx, entry.value)
        : null;
      const data = blob === null ? entry.value : null;
      const size = entry.value.length;
      const expires = entry.expireInMs === undefined
        ? null
        : new Date(Date.now() + entry.expireInMs);
      if (row) {
        writes.push(
          tx`
            UPDATE trawl_heads
            SET version = ${version}, size = ${size}, data = ${data}, blob = ${blob},
                expires_at = ${expires}
            WHERE key = ${key}`.execute(),
        );
      } else {
        inserts.push({
          entry,
          done: tx`
            INSERT INTO trawl_heads (key, version, size, data, blob, expires_at)
            VALUES (${key}, ${version}, ${size}, ${data}, ${blob}, ${expires})
            ON CONFLICT (key) DO NOTHING RETURNING 1`.execute(),
        });
      }
    }
    if (retire.length > 0) {
      writes.push(
        tx`
          INSERT INTO trawl_retired (blob, at)
          SELECT unnest(${retire}::bigint[]), now() ON CONFLICT DO NOTHING`.execute(),
      );
    }
    await Promise.all([...writes, ...inserts.map((i) => i.done)]);
    for (const { entry, done } of inserts) {
      if ((await done).length === 1) continue;
      // Another commit made the key after our look: with an expectation, a conflict; without,
      // the commit is run again (its row is then there, and locked).
      if (entry.expectedVersion !== undefined) throw new Conflict(entry.key);
      throw new RunAgain();
    }
    return version;
  }

  async #update(
    key: StorageKey,
    decide: (current: StoredValue | null) => readonly CommitEntry[] | undefined,
  ): Promise<WriteResult | null> {
    checkKey(key);
    const doing = `updating ${showKey(key)}`;
    for (let attempt = 1;; attempt++) {
      try {
        return await this.sql.begin(async (tx) => {
          // Sent together (one round trip): the read runs once the lock is held, on a snapshot
          // taken then, so it sees the last holder's commit.
          const [, current] = await Promise.all([
            tx`SELECT pg_advisory_xact_lock(hashtextextended(${key.join("/")}, 0))`.execute(),
            this.#read(tx, key),
          ]);
          const entries = decide(current);
          if (entries === undefined) return null;
          checkCommit(entries);
          const ordered = [...entries].sort((a, b) => compareKeys(a.key, b.key));
          const version = await this.#write(tx, ordered);
          return { ok: true, version: entries.at(-1)?.value === null ? null : version } as const;
        });
      } catch (e) {
        if (e instanceof Conflict) return { ok: false, conflict: e.key };
        if (isRetryable(e) && attempt < COMMIT_ATTEMPTS) continue;
        this.#failed(doing, e);
      }
    }
  }

  /**
   * `work` in one transaction, given the transaction and `write`, which writes a commit's entries
   * in it (their expected versions checked as in `commit`; the transaction's version answered).
   * A conflict on an entry rolls all back: the answer is then `{ conflict }`. Run again when
   * PostgreSQL broke a deadlock (so `work` may be called more than once).
   */
  async transact<T>(
    doing: string,
    work: (
      tx: postgres.TransactionSql,
      write: (entries: readonly CommitEntry[]) => Promise<string>,
    ) => Promise<T>,
  ): Promise<T | { readonly conflict: StorageKey }> {
    const write = (tx: postgres.TransactionSql) => (entries: readonly CommitEntry[]) => {
      checkCommit(entries);
      return this.#write(tx, [...entries].sort((a, b) => compareKeys(a.key, b.key)));
    };
    for (let attempt = 1;; attempt++) {
      try {
        return await this.sql.begin((tx) => work(tx, write(tx))) as T;
      } catch (e) {
        if (e instanceof Conflict) return { conflict: e.key };
        if (e instanceof Rollback) return e.value as T;
        if (isRetryable(e) && attempt < COMMIT_ATTEMPTS) continue;
        this.#failed(doing, e);
      }
    }
  }

  /** A key's value inside a transaction (its own snapshot), or null. */
  async #read(tx: postgres.TransactionSql, key: StorageKey): Promise<StoredValue | null> {
    const rows = await tx<(HeadRow & { bytes: Uint8Array | null })[]>`
      SELECT h.version, h.size, h.data, h.blob, c.bytes
      FROM trawl_heads h LEFT JOIN trawl_chunks c ON c.blob = h.blob
      WHERE h.key = ${key as string[]} AND (h.expires_at IS NULL OR h.expires_at > now())
      ORDER BY c.n`;
    const head = rows[0];
    if (head === undefined) return null;
    if (head.blob === null) {
      return { value: bytesOf(head.data ?? new Uint8Array()), version: head.version };
    }
    const value = new Uint8Array(Number(head.size));
    let offset = 0;
    for (const row of rows) {
      value.set(row.bytes ?? new Uint8Array(), offset);
      offset += row.bytes?.length ?? 0;
    }
    return { value, version: head.version };
  }

  async #notify(channel: string): Promise<void> {
    await this.#call(`signalling '${channel}'`, () => this.sql.notify(channelName(channel), ""));
  }

  async #listen(channel: string, listener: () => void): Promise<() => Promise<void>> {
    const listening = await this.#call(
      `listening to '${channel}'`,
      () => this.sql.listen(channelName(channel), () => listener(), () => listener()),
    );
    return () => listening.unlisten().catch(() => {});
  }

  /** Inserts the chunks of a large value under a fresh id; returns the id. */
  async #writeChunks(tx: postgres.TransactionSql, value: Uint8Array): Promise<string> {
    const [{ v: blob }] = await tx<[{ v: string }]>`SELECT nextval('trawl_versions')::text AS v`;
    const count = Math.ceil(value.length / CHUNK_BYTES);
    for (let first = 0; first < count; first += CHUNKS_PER_INSERT) {
      const rows = [];
      for (let n = first; n < Math.min(count, first + CHUNKS_PER_INSERT); n++) {
        rows.push({ blob, n, bytes: value.subarray(n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES) });
      }
      await tx`INSERT INTO trawl_chunks ${tx(rows, "blob", "n", "bytes")}`;
    }
    return blob;
  }

  /**
   * Deletes the rows whose retention ended (their chunks retired) and the chunks retired at least
   * `retireMs` ago; returns how many values' chunks went. Run by a write now and then, and by
   * main.ts at start.
   */
  async sweep(): Promise<number> {
    return await this.#call("sweeping expired values and replaced chunks", async () => {
      await this.sql`
        WITH gone AS (
          DELETE FROM trawl_heads WHERE expires_at <= now() RETURNING blob
        )
        INSERT INTO trawl_retired (blob, at)
        SELECT blob, now() FROM gone WHERE blob IS NOT NULL ON CONFLICT DO NOTHING`;
      const dropped = await this.sql<{ blob: string }[]>`
        DELETE FROM trawl_retired
        WHERE at < now() - make_interval(secs => ${this.#retireMs / 1000})
        RETURNING blob`;
      if (dropped.length > 0) {
        await this.sql`
          DELETE FROM trawl_chunks WHERE blob = ANY(${dropped.map((r) => r.blob)}::bigint[])`;
      }
      return dropped.length;
    });
  }

  /** Ends the pool's connections; resolves once they are closed. */
  close(): Promise<void> {
    this.#closed ??= this.sql.end({ timeout: 5 });
    return this.#closed;
  }
}

/** A channel's name in PostgreSQL (an identifier of letters, digits and `_`). */
function channelName(channel: string): string {
  if (!/^[a-z][a-z0-9_]{0,40}$/.test(channel)) {
    throw new StorageError(`'${channel}' is not a channel name: lower-case letters, digits, _`);
  }
  return `trawl_${channel}`;
}

/** The order of keys by their parts (as the "C" collation orders `text[]`: by UTF-8 bytes). */
export function compareKeys(a: StorageKey, b: StorageKey): number {
  const encoder = new TextEncoder();
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = encoder.encode(a[i]!);
    const y = encoder.encode(b[i]!);
    for (let j = 0; j < Math.min(x.length, y.length); j++) {
      if (x[j] !== y[j]) return x[j]! - y[j]!;
    }
    if (x.length !== y.length) return x.length - y.length;
  }
  return a.length - b.length;
}
