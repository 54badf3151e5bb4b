/**
 * The shares of distributed scans (storage = pg:, `cluster.distributeBytes`): one row per share
 * of one query's scan, which every server claims, runs on its own scan workers and answers
 * (actors/distributed_scans.ts). The table:
 *
 *   trawl_shares(run, share, coordinator, part, task, state, attempt, holder, lease_until,
 *                result, segment, pieces, error, stopped_at, created)
 *     run          one split of one query's scan (a uuid made by its coordinator)
 *     share        the share's number: the coordinator merges the shares in this order
 *     coordinator  the server that took the query, plans it and merges
 *     part         the part of the plan as JSON (PartDescription), for people reading the table
 *     task         the ShareTask as the worker gets it (a structured clone, node:v8 serialize)
 *     state        queued → running → done; running → queued again once its lease lapsed
 *                  (claimed again: attempt + 1); failed (MAX_ATTEMPTS lapsed); cancelled (the
 *                  query was cancelled, or no longer needs it)
 *     attempt      how many times it was claimed; an answer is written only by the attempt
 *                  that holds it (`WHERE attempt = ...`), so a late one is ignored
 *     holder       the server of the attempt; lease_until: when it is seen dead (the
 *                  database's clock: the servers' clocks need not agree)
 *     result       what the share's worker posted, framed (see `frames`), until the
 *                  coordinator took it; error: why it failed
 *     segment, pieces   an answer larger than `cluster.shareAnswerBytes`: its messages are in
 *                  the storage's values `cluster/segments/<run>/<segment>/<0..pieces-1>`
 *                  (framed, each about that size, with a retention of SEGMENT_RETENTION_MS),
 *                  written by the attempt that answered (a fresh id per attempt: a superseded
 *                  attempt's pieces are never named, and it deletes them itself); `result` then
 *                  holds only the share's progress. The coordinator reads them in order and
 *                  deletes them, and deletes every value under its run once the run ended (the
 *                  pieces of a holder killed mid-write among them)
 *     stopped_at   when its holder stopped its worker after a cancel
 *     claimed_at, answered_at   when its last attempt was claimed and answered (clock_timestamp)
 *     consumed     input bytes its running attempt has read, told with each renewal (the
 *                  coordinator's progress moves by it before the answer)
 *     run_seen     when its coordinator last said it still waits for the run (every third of
 *                  the lease): a run unseen for a lease is abandoned (its coordinator died, and
 *                  its query with it): its shares are no longer claimed, their holders stop
 *                  (cancelled, naming ABANDONED). A coordinator that was only unheard (its
 *                  connection to the database timing out for a lease on a machine at load 35)
 *                  and then asks for those shares' answers is alive after all: `ended` queues
 *                  them again (an attempt counted) rather than hand it a cancelled share, which
 *                  failed its query as an internal error
 *
 * Claims take the oldest open share with `FOR UPDATE SKIP LOCKED`: servers claiming together
 * never wait for each other nor take the same share. Changes are signalled on the channel
 * `trawl_shares` ("new", "done:<run>", "cancel:<run>"), so no server polls for work.
 */

import { deserialize, serialize } from "node:v8";
import type { PgStorage } from "./pg_storage.ts";
import { StorageError, type StorageKey } from "../../engine/contracts/storage.ts";

/** Why a share was cancelled by its holder: its run unseen for a lease (see `run_seen`). */
export const ABANDONED = "its coordinator stopped answering: nobody waits for it";

/** Claims of one share before the query fails naming it. */
export const MAX_ATTEMPTS = 3;
/**
 * Bytes of a share's answer kept in its row by default (framed messages; the setting
 * `cluster.shareAnswerBytes`). A share whose answer is larger (a row pipeline that keeps many
 * rows) is written as a segment in the storage, in pieces of about this size.
 */
export const SHARE_RESULT_BYTES = 64 << 20;
/**
 * How long the pieces of a segment stay when nobody deletes them (a coordinator killed before it
 * read them): the storage drops them after this.
 */
export const SEGMENT_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Where the segments of distributed scans are, by run: `cluster/segments/<run>/<id>/<n>`. */
export const SEGMENTS: StorageKey = ["cluster", "segments"];
export const segmentKey = (run: string, id: string, piece?: number): StorageKey =>
  piece === undefined ? [...SEGMENTS, run, id] : [...SEGMENTS, run, id, String(piece)];
/** Rows of ended runs are deleted once they are this old (at each new run). */
const KEEP_MS = 60 * 60 * 1000;
const SCHEMA_LOCK = 0x7472_6173; // "tras"
const CHANNEL = "trawl_shares";

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS trawl_shares (
    run text NOT NULL,
    share integer NOT NULL,
    coordinator text NOT NULL,
    part text NOT NULL,
    task bytea NOT NULL,
    state text NOT NULL,
    attempt integer NOT NULL DEFAULT 0,
    holder text,
    lease_until timestamptz,
    result bytea,
    error text,
    stopped_at timestamptz,
    claimed_at timestamptz,
    answered_at timestamptz,
    run_seen timestamptz NOT NULL DEFAULT now(),
    consumed bigint NOT NULL DEFAULT 0,
    created timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run, share)
  );
  CREATE INDEX IF NOT EXISTS trawl_shares_open ON trawl_shares (created, run, share)
    WHERE state IN ('queued', 'running');
  ALTER TABLE trawl_shares ADD COLUMN IF NOT EXISTS segment text;
  ALTER TABLE trawl_shares ADD COLUMN IF NOT EXISTS pieces integer;
`;

export type ShareState = "queued" | "running" | "done" | "failed" | "cancelled";

/** The segment of an answer: its id and how many pieces (`segmentKey(run, id, 0..pieces-1)`). */
export interface SegmentRef {
  readonly id: string;
  readonly pieces: number;
}

/** A share this server claimed: its task, and the attempt it holds. */
export interface Claim {
  readonly run: string;
  readonly share: number;
  readonly attempt: number;
  readonly coordinator: string;
  readonly task: unknown;
}

/** A share that ended, as its coordinator reads it. */
export interface Ended {
  readonly share: number;
  /** cancelled: by its holder, its run seen abandoned (`error` says so). */
  readonly state: "done" | "failed" | "cancelled";
  readonly result: Uint8Array | null;
  readonly error: string | null;
  /** A large answer: the rest of its messages, after those of `result`. */
  readonly segment?: SegmentRef;
}

/** What a signal on `trawl_shares` says. */
export type SharesSignal =
  | { readonly kind: "new" }
  | { readonly kind: "done"; readonly run: string }
  | { readonly kind: "cancel"; readonly run: string };

/** Messages as one bytea: each a 4-byte length, then its structured clone. */
export function frames(messages: readonly Uint8Array[]): Uint8Array {
  const total = messages.reduce((n, m) => n + 4 + m.length, 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const m of messages) {
    view.setUint32(at, m.length);
    out.set(m, at + 4);
    at += 4 + m.length;
  }
  return out;
}

/** The messages `frames` joined, in their order. */
export function unframe(bytes: Uint8Array): unknown[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: unknown[] = [];
  for (let at = 0; at < bytes.length;) {
    const n = view.getUint32(at);
    out.push(deserialize(bytes.subarray(at + 4, at + 4 + n)));
    at += 4 + n;
  }
  return out;
}

/** One message as a structured clone (typed arrays, bigints and Maps kept). */
export function clone(message: unknown): Uint8Array {
  const b = serialize(message);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

export class PgShares {
  constructor(
    readonly storage: PgStorage,
    /** This server's name in `holder` and `coordinator`. */
    readonly server: string,
    readonly leaseMs: number,
  ) {}

  get #sql() {
    return this.storage.sql;
  }

  async #call<T>(doing: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      if (e instanceof StorageError) throw e;
      throw new StorageError(
        `the PostgreSQL storage '${this.storage.where}' failed while ${doing}: ${
          (e as Error).message
        }`,
        { cause: e, publicMessage: `the server's storage failed while ${doing}` },
      );
    }
  }

  /** Makes the table when missing. */
  async make(): Promise<void> {
    await this.#call("making the shares table", () =>
      this.#sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${SCHEMA_LOCK})`;
        await tx.unsafe(SCHEMA);
      }));
  }

  /** Hears every signal on `trawl_shares` (and `reconnected` after a reconnect). */
  async listen(
    hear: (signal: SharesSignal) => void,
    reconnected: () => void,
  ): Promise<() => Promise<void>> {
    const listening = await this.#call(
      "listening for shares",
      () =>
        this.#sql.listen(CHANNEL, (payload) => {
          if (payload === "new") return hear({ kind: "new" });
          const [kind, run] = payload.split(":");
          if ((kind === "done" || kind === "cancel") && run) hear({ kind, run });
        }, reconnected),
    );
    return () => listening.unlisten().catch(() => {});
  }

  #signal(payload: string): Promise<unknown> {
    return this.#sql.notify(CHANNEL, payload);
  }

  /** Queues the shares of `run` (tasks in share order) and signals the servers. */
  async queue(run: string, tasks: readonly { part: string; task: Uint8Array }[]): Promise<void> {
    await this.#call(`queueing the shares of run ${run}`, async () => {
      const rows = tasks.map((t, share) => ({
        run,
        share,
        coordinator: this.server,
        part: t.part,
        task: t.task,
        state: "queued",
      }));
      await this.#sql`
        INSERT INTO trawl_shares ${
        this.#sql(rows, "run", "share", "coordinator", "part", "task", "state")
      }`;
      await this.#signal("new");
    });
  }

  /**
   * Claims the oldest share queued or whose lease lapsed, for LEASE; null when there is none. A
   * share claimed MAX_ATTEMPTS times already is failed instead (its coordinator signalled), and
   * the next one looked at.
   */
  async claim(): Promise<Claim | null> {
    return await this.#call("claiming a share", async () => {
      for (;;) {
        const rows = await this.#sql<
          {
            run: string;
            share: number;
            attempt: number;
            state: ShareState;
            coordinator: string;
            task: Uint8Array;
          }[]
        >`
          WITH c AS (
            SELECT run, share, holder AS lost FROM trawl_shares
            WHERE (state = 'queued' OR (state = 'running' AND lease_until < now()))
              AND run_seen > now() - make_interval(secs => ${this.leaseMs / 1000})
            ORDER BY created, run, share
            LIMIT 1
            FOR UPDATE SKIP LOCKED
          )
          UPDATE trawl_shares s SET
            state = CASE WHEN s.attempt >= ${MAX_ATTEMPTS} THEN 'failed' ELSE 'running' END,
            attempt = CASE WHEN s.attempt >= ${MAX_ATTEMPTS} THEN s.attempt ELSE s.attempt + 1 END,
            holder = CASE WHEN s.attempt >= ${MAX_ATTEMPTS} THEN s.holder ELSE ${this.server} END,
            lease_until = now() + make_interval(secs => ${this.leaseMs / 1000}),
            claimed_at = clock_timestamp(),
            error = CASE WHEN s.attempt >= ${MAX_ATTEMPTS}
              THEN format('share %s of the query''s scan was lost %s times (%s); the query ' ||
                'fails rather than run it again', s.share, s.attempt,
                COALESCE('last: ' || s.error, 'its server stopped answering; last ' || c.lost))
              END,
            task = CASE WHEN s.attempt >= ${MAX_ATTEMPTS} THEN '\\x'::bytea ELSE s.task END
          FROM c WHERE s.run = c.run AND s.share = c.share
          RETURNING s.run, s.share, s.attempt, s.state, s.coordinator,
            CASE WHEN s.state = 'running' THEN s.task END AS task`;
        const row = rows[0];
        if (row === undefined) return null;
        if (row.state === "failed") {
          await this.#signal(`done:${row.run}`);
          continue;
        }
        return {
          run: row.run,
          share: row.share,
          attempt: row.attempt,
          coordinator: row.coordinator,
          task: deserialize(row.task),
        };
      }
    });
  }

  /**
   * Extends the claims' leases, noting the bytes each has read (`consumed`, in the same order);
   * answers those no longer held (cancelled, lapsed and taken, or, with `judge`, their run
   * abandoned: unseen for a lease).
   */
  async renew(
    claims: readonly Claim[],
    consumed?: readonly number[],
    judge = true,
  ): Promise<Claim[]> {
    if (claims.length === 0) return [];
    return await this.#call("renewing the leases of shares", async () => {
      const held = await this.#sql<{ run: string; share: number }[]>`
        UPDATE trawl_shares s SET lease_until = now() + make_interval(secs => ${
        this.leaseMs / 1000
      }), consumed = c.consumed
        FROM unnest(${claims.map((c) => c.run)}::text[], ${claims.map((c) => c.share)}::int[],
          ${claims.map((c) => c.attempt)}::int[],
          ${claims.map((_, i) => consumed?.[i] ?? 0)}::bigint[]) AS c(run, share, attempt, consumed)
        WHERE s.run = c.run AND s.share = c.share AND s.attempt = c.attempt
          AND s.state = 'running'
          AND (NOT ${judge} OR s.run_seen > now() - make_interval(secs => ${this.leaseMs / 1000}))
        RETURNING s.run, s.share`;
      const kept = new Set(held.map((r) => `${r.run}:${r.share}`));
      return claims.filter((c) => !kept.has(`${c.run}:${c.share}`));
    });
  }

  /**
   * Writes the answer of `claim` (with the segment its holder wrote, when larger); false when the
   * attempt no longer holds it (a late answer: ignored, and its segment is its holder's to delete).
   */
  async answer(
    claim: Claim,
    state: "done",
    result: Uint8Array | null,
    error: string | null = null,
    segment: SegmentRef | null = null,
  ): Promise<boolean> {
    return await this.#call(`answering share ${claim.share} of run ${claim.run}`, async () => {
      const rows = await this.#sql`
        UPDATE trawl_shares SET state = ${state}, result = ${result}, error = ${error},
          segment = ${segment?.id ?? null}, pieces = ${segment?.pieces ?? null},
          lease_until = NULL, answered_at = clock_timestamp()
        WHERE run = ${claim.run} AND share = ${claim.share} AND attempt = ${claim.attempt}
          AND state = 'running'
        RETURNING share`;
      if (rows.length === 0) return false;
      await this.#signal(`done:${claim.run}`);
      return true;
    });
  }

  /**
   * Queues a claimed share again (its worker failed through no fault of the query: the storage
   * away, a worker crashed), `why` kept; the next claim counts one more attempt, so a share that
   * keeps failing fails the query after MAX_ATTEMPTS, naming the last `why`.
   */
  async again(claim: Claim, why: string): Promise<boolean> {
    return await this.#call(`queueing share ${claim.share} of run ${claim.run} again`, async () => {
      const rows = await this.#sql`
        UPDATE trawl_shares SET state = 'queued', holder = NULL, lease_until = NULL,
          error = ${why}
        WHERE run = ${claim.run} AND share = ${claim.share} AND attempt = ${claim.attempt}
          AND state = 'running'
        RETURNING share`;
      if (rows.length === 0) return false;
      await this.#signal("new");
      return true;
    });
  }

  /** The coordinator still waits for `runs`. */
  async seen(runs: readonly string[]): Promise<void> {
    if (runs.length === 0) return;
    await this.#call("noting the runs still coordinated", () =>
      this.#sql`
        UPDATE trawl_shares SET run_seen = now()
        WHERE run = ANY(${runs as string[]}::text[]) AND state IN ('queued', 'running')`);
  }

  /**
   * Notes that this server stopped its worker on `claim` (cancelled, lost, or its run abandoned:
   * then cancelled, naming why).
   */
  async stopped(claim: Claim): Promise<void> {
    await this.#call(`noting share ${claim.share} of run ${claim.run} stopped`, () =>
      this.#sql`
        UPDATE trawl_shares SET stopped_at = now(),
          state = CASE WHEN state = 'running' THEN 'cancelled' ELSE state END,
          error = CASE WHEN state = 'running' THEN ${ABANDONED} ELSE error END
        WHERE run = ${claim.run} AND share = ${claim.share} AND attempt = ${claim.attempt}`);
  }

  /** Cancels the shares of `run` not yet ended; their holders are signalled to stop. */
  async cancel(run: string, shares: readonly number[]): Promise<number> {
    return await this.#call(`cancelling the shares of run ${run}`, async () => {
      const rows = await this.#sql`
        UPDATE trawl_shares SET state = 'cancelled', task = '\\x'::bytea, result = NULL
        WHERE run = ${run} AND share = ANY(${shares as number[]}::int[])
          AND state IN ('queued', 'running')
        RETURNING share, holder`;
      if (rows.some((r) => r.holder !== null)) await this.#signal(`cancel:${run}`);
      return rows.length;
    });
  }

  /**
   * The shares of `run` among `shares` that ended; their results are taken (set NULL). A share
   * its holder abandoned (ABANDONED: the run looked unwaited for) is queued again instead, its
   * run seen: the coordinator asking waits for it. Its attempt counts, so a coordinator that
   * keeps going unheard fails the query after MAX_ATTEMPTS, naming why.
   */
  async ended(run: string, shares: readonly number[]): Promise<Ended[]> {
    if (shares.length === 0) return [];
    let requeued = 0;
    const ended = await this.#call(
      `reading the answers of run ${run}`,
      () =>
        this.#sql.begin(async (tx) => {
          const back = await tx`
            UPDATE trawl_shares SET state = 'queued', holder = NULL, lease_until = NULL,
              stopped_at = NULL, run_seen = now()
            WHERE run = ${run} AND share = ANY(${shares as number[]}::int[])
              AND state = 'cancelled' AND error = ${ABANDONED} AND length(task) > 0
            RETURNING share`;
          requeued = back.length;
          const rows = await tx<(Ended & { segment: string | null; pieces: number | null })[]>`
          SELECT share, state, result, error, segment, pieces FROM trawl_shares
          WHERE run = ${run} AND share = ANY(${shares as number[]}::int[])
            AND state IN ('done', 'failed', 'cancelled')
          ORDER BY share
          FOR UPDATE`;
          if (rows.length > 0) {
            await tx`
            UPDATE trawl_shares SET result = NULL, task = '\\x'::bytea
            WHERE run = ${run} AND share = ANY(${rows.map((r) => r.share)}::int[])`;
          }
          return rows.map(({ segment, pieces, ...r }) => ({
            ...r,
            result: r.result === null
              ? null
              : new Uint8Array(r.result.buffer, r.result.byteOffset, r.result.byteLength),
            ...(segment === null || r.result === null
              ? {}
              : { segment: { id: segment, pieces: pieces ?? 0 } }),
          }));
        }),
    );
    if (requeued > 0) await this.#call("signalling shares queued again", () => this.#signal("new"));
    return ended;
  }

  /** Writes piece `piece` of segment `id` of `run`, with its retention. */
  async writePiece(run: string, id: string, piece: number, bytes: Uint8Array): Promise<void> {
    await this.storage.put(segmentKey(run, id, piece), bytes, {
      expireInMs: SEGMENT_RETENTION_MS,
    });
  }

  /** Piece `piece` of segment `id` of `run`; null when it is gone. */
  async readPiece(run: string, id: string, piece: number): Promise<Uint8Array | null> {
    return (await this.storage.get(segmentKey(run, id, piece)))?.value ?? null;
  }

  /** Deletes the pieces of segment `id` of `run`, or without `id` of every segment of `run`. */
  async dropSegments(run: string, id?: string): Promise<number> {
    const keys: StorageKey[] = [];
    for await (
      const key of this.storage.list(id === undefined ? [...SEGMENTS, run] : segmentKey(run, id))
    ) {
      keys.push(key);
    }
    for (const key of keys) await this.storage.delete(key);
    return keys.length;
  }

  /** The bytes read so far by the running shares of `run` among `shares`. */
  async consumed(run: string, shares: readonly number[]): Promise<Map<number, number>> {
    if (shares.length === 0) return new Map();
    return await this.#call(`reading the progress of run ${run}`, async () => {
      const rows = await this.#sql<{ share: number; consumed: string }[]>`
        SELECT share, consumed::text FROM trawl_shares
        WHERE run = ${run} AND share = ANY(${shares as number[]}::int[]) AND state = 'running'`;
      return new Map(rows.map((r) => [r.share, Number(r.consumed)]));
    });
  }

  /** Milliseconds until the first lease of a running share lapses (database clock); null: none. */
  async nextLapse(): Promise<number | null> {
    return await this.#call("reading the shares' leases", async () => {
      const [row] = await this.#sql<[{ ms: number | null }]>`
        SELECT (extract(epoch FROM min(lease_until) - now()) * 1000)::float8 AS ms
        FROM trawl_shares WHERE state = 'running'`;
      return row.ms === null ? null : Math.max(0, row.ms);
    });
  }

  /**
   * A server stopping: the shares of the runs it coordinates are cancelled (its queries end with
   * it; their holders are signalled), and the shares it runs for others are queued again (the
   * attempt not counted).
   */
  async release(): Promise<void> {
    await this.#call("giving back the shares of a server stopping", async () => {
      const cancelled = await this.#sql<{ run: string }[]>`
        UPDATE trawl_shares SET state = 'cancelled', task = '\\x'::bytea, result = NULL,
          error = 'its coordinator stopped'
        WHERE coordinator = ${this.server} AND state IN ('queued', 'running')
        RETURNING run`;
      for (const run of new Set(cancelled.map((r) => r.run))) await this.#signal(`cancel:${run}`);
      const queued = await this.#sql`
        UPDATE trawl_shares SET state = 'queued', holder = NULL, lease_until = NULL,
          attempt = attempt - 1
        WHERE holder = ${this.server} AND state = 'running'
        RETURNING share`;
      if (queued.length > 0) await this.#signal("new");
    });
  }

  /** Deletes the rows of runs older than KEEP_MS with no share open. */
  async sweep(): Promise<void> {
    await this.#call("deleting old shares", () =>
      this.#sql`
        DELETE FROM trawl_shares WHERE created < now() - make_interval(secs => ${KEEP_MS / 1000})
          AND run NOT IN (SELECT run FROM trawl_shares WHERE state IN ('queued', 'running'))`);
  }
}
