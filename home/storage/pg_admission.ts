/**
 * Admission as rows (storage = pg:): what `actors/shared/slots.ts` keeps in one document
 * (`queries/slots`) kept in two tables, so that servers admitting and ending queries do not
 * queue on one locked value:
 *
 *   trawl_run_slots  one row per running slot (n = 0 .. query.maxRunning - 1), `holder` the query
 *                    holding it or NULL. A query takes a free one with FOR UPDATE SKIP LOCKED:
 *                    two takers never wait on each other and never take the same row, and no
 *                    more than query.maxRunning queries can ever hold one.
 *   trawl_admitted   one row per admitted query not yet ended: its server, when it was admitted
 *                    (the queue's order) and its state: `queued`, `running` or `storing` (its
 *                    result being stored, its slot already free).
 *
 * A freed slot is handed, in the transaction that frees it, to the oldest queued query (any
 * server's; `fill`), and `trawl_slots` is signalled so its server starts it. A query that finds
 * no free slot (or finds queries waiting) queues; its server then fills once more, since a slot
 * freed while the query was being queued would have found no one to hand itself to. Queueing
 * takes an advisory lock, so `query.maxQueued` is exact across servers; the fast path (a free
 * slot, nobody waiting) takes no lock but its slot row's.
 *
 * Each change that writes a query's record (its creation, its end) writes it in the same
 * transaction (`PgStorage.transact`): the record and the slot never disagree.
 */

import type { CommitEntry, StorageKey } from "../../engine/contracts/storage.ts";
import { type PgStorage, Rollback } from "./pg_storage.ts";

/** Held while a query is queued (so that maxQueued is exact across servers). */
const QUEUE_LOCK = 0x7472_6171; // "traq"

export interface RowSlot {
  readonly id: string;
  readonly server: string;
  readonly at: number;
}

export type RowDecision = "run" | "queue" | "full";

/** A queued query handed a freed slot, and its server. */
export interface Handed {
  readonly id: string;
  readonly server: string;
}

type Tx = Parameters<Parameters<PgStorage["transact"]>[1]>[0];

function conflicted(x: unknown): x is { readonly conflict: StorageKey } {
  return typeof x === "object" && x !== null && "conflict" in x;
}

export class PgAdmission {
  #made = 0;

  /**
   * `maxRunning`: the cap in force, asked at each admission (with `query.maxRunning` left to its
   * default it grows and shrinks with the live servers: SharedQueries' census).
   */
  constructor(readonly storage: PgStorage, readonly maxRunning: () => number) {}

  /** The slot rows 0 .. maxRunning - 1 exist (made when the cap first reaches them). */
  async #make(): Promise<void> {
    const max = this.maxRunning();
    if (this.#made >= max) return;
    await this.storage.transact("making the query slot rows", async (tx) => {
      await tx`
        INSERT INTO trawl_run_slots (n)
        SELECT generate_series(0, ${max - 1}::int) ON CONFLICT DO NOTHING`;
    });
    this.#made = max;
  }

  /**
   * Admits `slot`: a free running slot when no query waits, else the queue while it has fewer
   * than `maxQueued`, else none (`full`: nothing written). `record` is written with it.
   */
  async admit(
    slot: RowSlot,
    maxQueued: number,
    record: CommitEntry,
  ): Promise<{ readonly decision: RowDecision; readonly version: string | null }> {
    await this.#make();
    const max = this.maxRunning();
    const done = await this.storage.transact(`admitting query ${slot.id}`, async (tx, write) => {
      // The record first: the query's own new key, which no one else waits for.
      const version = await write([record]);
      // A free slot when no query waits: one statement, the slot's row alone locked.
      const taken = await tx`
        WITH take AS (
          UPDATE trawl_run_slots SET holder = ${slot.id}, server = ${slot.server}, at = ${slot.at}
          WHERE n = (SELECT n FROM trawl_run_slots WHERE holder IS NULL AND n < ${max}
                     ORDER BY n LIMIT 1 FOR UPDATE SKIP LOCKED)
            AND NOT EXISTS (SELECT 1 FROM trawl_admitted WHERE state = 'queued')
          RETURNING n)
        INSERT INTO trawl_admitted (id, server, at, state)
        SELECT ${slot.id}, ${slot.server}, ${slot.at}, 'running' FROM take RETURNING 1`;
      if (taken.length === 1) return { decision: "run" as const, version };
      // Else the queue while it has room, counted under its lock (sent together: one round trip).
      const [, queued] = await Promise.all([
        tx`SELECT pg_advisory_xact_lock(${QUEUE_LOCK})`.execute(),
        tx`
          INSERT INTO trawl_admitted (id, server, at, state)
          SELECT ${slot.id}, ${slot.server}, ${slot.at}, 'queued'
          WHERE (SELECT count(*) FROM trawl_admitted WHERE state = 'queued') < ${maxQueued}
             OR EXISTS (SELECT 1 FROM trawl_run_slots WHERE holder IS NULL AND n < ${max})
          RETURNING 1`.execute(),
      ]);
      if (queued.length === 0) throw new Rollback({ decision: "full" as const, version: null });
      return { decision: "queue" as const, version };
    });
    if (conflicted(done)) return { decision: "full", version: null };
    return done;
  }

  /**
   * Hands free slots to the oldest queued queries; the number handed. Any server may: the
   * query's own server learns it from `holding`. Free slot rows are locked skipping those locked
   * (a slot being freed or taken by another transaction is its business); the queued rows are
   * locked waiting, in the queue's order. Skipping them lost hand-overs: a server freeing a slot
   * skipped the queued query another server's look (`holding`) had locked, which in turn had not
   * seen the slot free yet, and the slot stayed free with the query queued until the next poll
   * (SIGNALLED_POLL_MS, 1 s: the p99 of small queries through two servers). Waiting cannot
   * deadlock: every transaction that waits here locks queued rows in one order and never waits
   * for a slot row.
   */
  async #fill(tx: Tx): Promise<Handed[]> {
    const max = this.maxRunning();
    return await tx<Handed[]>`
      WITH free AS (
        SELECT n, row_number() OVER (ORDER BY n) AS r FROM (
          SELECT n FROM trawl_run_slots WHERE holder IS NULL AND n < ${max}
          ORDER BY n FOR UPDATE SKIP LOCKED) f),
      head AS (
        SELECT id, server, at, row_number() OVER (ORDER BY at, id) AS r FROM (
          SELECT id, server, at FROM trawl_admitted WHERE state = 'queued'
          ORDER BY at, id LIMIT ${max} FOR UPDATE) q),
      pairs AS (SELECT free.n, head.id, head.server, head.at FROM free JOIN head USING (r)),
      running AS (
        UPDATE trawl_admitted a SET state = 'running' FROM pairs WHERE a.id = pairs.id)
      UPDATE trawl_run_slots s SET holder = pairs.id, server = pairs.server, at = pairs.at
      FROM pairs WHERE s.n = pairs.n RETURNING pairs.id, pairs.server`;
  }

  /**
   * Fills free slots, then answers which of `mine` (queued queries of this server) now hold
   * one; `handed`: whether this look handed a slot to a query not among them (another
   * server's, to be signalled).
   */
  async holding(
    mine: readonly string[],
  ): Promise<{ readonly ids: string[]; readonly handed: boolean }> {
    await this.#make();
    const done = await this.storage.transact("looking for free query slots", async (tx) => {
      const handed = await this.#fill(tx);
      const rows = await tx<{ holder: string }[]>`
        SELECT holder FROM trawl_run_slots WHERE holder = ANY(${mine as string[]})`;
      const ids = rows.map((r) => r.holder);
      return { ids, handed: handed.some((h) => !ids.includes(h.id)) };
    });
    if (conflicted(done)) return { ids: [], handed: false };
    return done;
  }

  /**
   * The query's result is being stored: its running slot is freed (and handed on) and it stays
   * admitted as `storing`. The queries handed the slot (none or one).
   */
  async storing(id: string): Promise<Handed[]> {
    const done = await this.storage.transact(`freeing the slot of query ${id}`, async (tx) => {
      const freed = await tx`
        UPDATE trawl_run_slots SET holder = NULL, server = NULL, at = NULL
        WHERE holder = ${id} RETURNING n`;
      if (freed.length === 0) return [];
      await tx`UPDATE trawl_admitted SET state = 'storing' WHERE id = ${id}`;
      return await this.#fill(tx);
    });
    return conflicted(done) ? [] : done;
  }

  /**
   * The query ends: its slot and place go (the slot handed on), with `entries` (its final
   * record) written in the same transaction. `applied: false` when an entry's expected version
   * did not hold (nothing is written), or when `entries` is empty and the query held nothing.
   * `handed`: the queries handed its slot (to be started by their servers).
   */
  async end(
    id: string,
    entries: readonly CommitEntry[],
  ): Promise<
    { readonly applied: boolean; readonly version: string | null; readonly handed: Handed[] }
  > {
    const done = await this.storage.transact(`ending query ${id}`, async (tx, write) => {
      const version = entries.length > 0 ? await write(entries) : null;
      const [gone, freed] = await Promise.all([
        tx`DELETE FROM trawl_admitted WHERE id = ${id} RETURNING state`.execute(),
        tx`
          UPDATE trawl_run_slots SET holder = NULL, server = NULL, at = NULL
          WHERE holder = ${id} RETURNING n`.execute(),
      ]);
      const handed = freed.length > 0 ? await this.#fill(tx) : [];
      const applied = entries.length > 0 || gone.length > 0 || freed.length > 0;
      return { applied, version, handed };
    });
    if (conflicted(done)) return { applied: false, version: null, handed: [] };
    return done;
  }

  /** Every admitted query not yet ended (queued, running, storing), of every server. */
  async all(): Promise<RowSlot[]> {
    const rows = await this.storage.transact(
      "listing the admitted queries",
      (tx) =>
        tx<{ id: string; server: string; at: string }[]>`
        SELECT id, server, at::text FROM trawl_admitted`,
    );
    if (conflicted(rows)) return [];
    return rows.map((r) => ({ id: r.id, server: r.server, at: Number(r.at) }));
  }
}
