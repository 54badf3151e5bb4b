/**
 * Queries shared by the servers of one storage (storage = kv:... or pg:...): a registry of every query in
 * the storage, so that a query submitted to one server answers its status, events, result,
 * schema and DELETE from any other, with `query.maxRunning` and `query.maxQueued` counted across
 * all of them. With the files storage there is none of this (main.ts makes no SharedQueries).
 *
 * This is the facade; each part of the storage's key layout has its own module in
 * `actors/shared/` (keys.ts lists them), so that another backend can replace one at a time:
 *
 *   slots.ts         `queries/slots`: who runs, who waits (admission, promotion, hand-over)
 *   leases.ts        `queries/server/<id>`: each server's lease, and who is dead
 *   records.ts       `queries/q/<id>`, `queries/gone/<id>`: each query's record, tombstones
 *   result_pages.ts  `queries/r/<id>/<n>`: a SUCCEEDED query's result
 *   asks.ts          `queries/ask/<id>`: cancel or free, asked of the query's owner
 *   publisher.ts     the owner's side: a query's record written as its actor changes
 *
 * The server that took a query runs it (its local supervisor) and publishes the query's record
 * as it changes. The supervisor schedules a query only once this module has granted it a
 * running slot (the `gate`). Every server looks at the leases of the servers named in the
 * slots: a server whose lease has not changed for `cluster.lease` is dead, and its running and
 * queued queries are marked FAILED and their slots freed.
 *
 * With a storage that locks and signals (PostgreSQL: `storage.coordination`) the slots are
 * updated under a lock rather than by compare-and-swap (slots.ts), and a server looks for a
 * free slot when one is signalled freed, and for requests when one is signalled, instead of
 * every 10 and 250 ms: the polls remain, every SIGNALLED_POLL_MS, for a signal lost with a
 * connection.
 */

import { type CommitEntry, type Diagnostic, type Storage, type User } from "../engine/mod.ts";
import { PgStorage } from "../home/storage/pg_storage.ts";
import { type Handed, PgAdmission } from "../home/storage/pg_admission.ts";
import type { Logger } from "../home/log.ts";
import { isFinished } from "./query_machine.ts";
import type { QueryRef, SupervisorEvent } from "./supervisor.ts";
import type { StoredItem } from "./result_store.ts";
import { Asks, ASKS_CHANNEL } from "./shared/asks.ts";
import { Census, Lease, LeaseWatch } from "./shared/leases.ts";
import { failedRecord, Records, type SharedRecord, type SharedResult } from "./shared/records.ts";
import { ResultPages } from "./shared/result_pages.ts";
import {
  type Admission,
  admitSlot,
  allSlots,
  type HandOver,
  promotable,
  promoted,
  SLOT_ATTEMPTS,
  SlotBook,
  type SlotOp,
  type SlotOutcome,
  SLOTS_CHANNEL,
  storing,
  withNext,
  without,
} from "./shared/slots.ts";
import { Publisher } from "./shared/publisher.ts";

export type { SharedRecord, SharedResult } from "./shared/records.ts";
export type { Admission } from "./shared/slots.ts";
export { decodePage, encodePage, PAGE_ITEMS } from "./shared/result_pages.ts";

/** How often a server with queued queries looks for a free slot. */
const POLL_MS = 10;
/** The same with a storage that signals freed slots and requests (a fallback). */
const SIGNALLED_POLL_MS = 1000;
/** Requests of other servers (cancel, free) are looked for every this many polls (250 ms). */
const ASK_EVERY = 25;
/** A slot of this server that none of its queries holds is freed once this old. */
export const ORPHAN_SLOT_MS = 30_000;

export interface SharedQueriesOptions {
  /** `query.maxRunning`: one cap across the servers, or this server's part of it (below). */
  readonly maxRunning: number;
  /**
   * `query.maxRunning` left to its default (the cores): each server brings its own `maxRunning`
   * slots and the cap is the sum over the live servers (a second server adds its cores); set, it
   * is one number for the whole cluster.
   */
  readonly maxRunningPerServer?: boolean;
  readonly maxQueued: number;
  readonly retentionMs: number;
  /** How long a freed query's tombstone answers 410. */
  readonly expiredMemoryMs: number;
  /** `cluster.lease`: a server whose lease is this old is dead. */
  readonly leaseMs: number;
  readonly log: Logger;
  /** This server's id in the storage (a fresh one per start by default). */
  readonly serverId?: string;
  readonly now?: () => number;
  /** Whether `start` starts the loops (tests drive `poll` and `sweep` themselves). */
  readonly loops?: boolean;
}

/** What the registry tells the supervisor: SLOTS (more may run), CANCEL and FREE (asked). */
export interface SlotListener {
  send(event: SupervisorEvent): void;
}

/** What the supervisor asks before it schedules a query (see SupervisorInput.gate). */
export interface SchedulingGate {
  mayRun(queryId: string): boolean;
}

/** What a submission tells the registry of a query besides its id and owner. */
export interface SharedSubmission {
  readonly scriptPath?: string;
  readonly excerpt?: string;
  readonly fixedFormat?: unknown;
  /** Whether its result is stored for other servers (not for a synchronous query). */
  readonly shareResult: boolean;
}

export class SharedQueries implements SchedulingGate {
  readonly serverId: string;
  readonly records: Records;
  readonly pages: ResultPages;
  readonly book: SlotBook;
  /**
   * Admission as rows (storage = pg:, home/storage/pg_admission.ts) instead of the document
   * `queries/slots` (`book`, then unused).
   */
  readonly rows: PgAdmission | undefined;
  readonly #now: () => number;
  readonly #asks: Asks;
  readonly #lease: Lease;
  readonly #census: Census | undefined;
  /** The slots the other live servers bring (maxRunningPerServer; 0 otherwise). */
  #othersSlots = 0;
  readonly #watch: LeaseWatch;
  readonly #publisher: Publisher;
  /** Ids this server holds a running slot for. */
  readonly #granted = new Set<string>();
  /** Ids of this server waiting in the shared queue, oldest first. */
  readonly #queued: string[] = [];
  #supervisor: SlotListener | undefined;
  #timers: ReturnType<typeof setInterval>[] = [];
  /** The listeners of the storage's signals, stopped at stop(). */
  #unlisten: (() => Promise<void>)[] = [];
  #stopping = false;
  /** The look under way (`#look`), settled when it ends: callers meanwhile wait for it. */
  #ticking: PromiseWithResolvers<void> | undefined;
  /** What the next look looks at (signals that came during a look). */
  #wanted = { promote: false, asks: false };
  #ticks = 0;
  /** The sweep under way, and the one asked for meanwhile (which begins after it). */
  #sweeping: Promise<void> | null = null;
  #nextSweep: Promise<void> | null = null;
  #started: Promise<void> | undefined;

  constructor(readonly storage: Storage, readonly options: SharedQueriesOptions) {
    this.serverId = options.serverId ?? crypto.randomUUID();
    this.#now = options.now ?? Date.now;
    this.records = new Records(storage, options);
    this.pages = new ResultPages(storage);
    this.book = new SlotBook(
      storage,
      () => this.#queued.length > 0 ? this.#promotion() : undefined,
    );
    this.rows = storage instanceof PgStorage
      ? new PgAdmission(storage, () => this.maxRunning)
      : undefined;
    this.#asks = new Asks(storage);
    this.#lease = new Lease(
      storage,
      this.serverId,
      options.leaseMs,
      this.#now,
      options.maxRunningPerServer ? options.maxRunning : undefined,
    );
    this.#census = options.maxRunningPerServer ? new Census(storage, options.leaseMs) : undefined;
    this.#watch = new LeaseWatch(options.leaseMs);
    this.#publisher = new Publisher({
      records: this.records,
      pages: this.pages,
      storing: (id, next) => this.#storing(id, next),
      end: (id, entries, next) => this.#end(id, entries, next),
      retentionMs: options.retentionMs,
      now: this.#now,
      stopping: () => this.#stopping,
      holds: (id) => this.#granted.has(id),
      forgetLocal: (id) => this.#forgetLocal(id),
      handOver: (id, held) => this.#handOver(id, held),
      fail: (id, message) => this.#fail(id, message),
      warn: (doing, e) => this.#warn(doing, e),
      lost: (id) => void this.#lose(id),
    });
  }

  /**
   * Writes this server's lease and starts renewing it, polling requests and sweeping (once;
   * buildDeps in main.ts calls it with the supervisor it gates).
   */
  start(supervisor: SlotListener): Promise<void> {
    this.#started ??= this.#start(supervisor);
    return this.#started;
  }

  /** The running slots of the cluster now (see SharedQueriesOptions.maxRunningPerServer). */
  get maxRunning(): number {
    return this.options.maxRunning + this.#othersSlots;
  }

  /** Counts the other live servers' slots; a cap that grew lets queued queries in. */
  async #count(): Promise<void> {
    if (!this.#census) return;
    const before = this.maxRunning;
    this.#othersSlots = await this.#census.others(this.serverId, this.#now());
    if (this.maxRunning > before && this.#queued.length > 0) {
      await this.#look({ promote: true, asks: false });
    }
  }

  async #start(supervisor: SlotListener): Promise<void> {
    this.#supervisor = supervisor;
    await this.#lease.renew();
    await this.#count().catch((e) => this.#warn("counting the live servers", e));
    if (this.options.loops === false) return;
    const { leaseMs } = this.options;
    const coordination = this.storage.coordination;
    if (coordination) {
      // Signalled: a freed slot and a request are looked at when they happen.
      this.#unlisten.push(
        await coordination.listen(
          SLOTS_CHANNEL,
          () => void this.#look({ promote: true, asks: false }),
        ),
        await coordination.listen(
          ASKS_CHANNEL,
          () => void this.#look({ promote: false, asks: true }),
        ),
      );
    }
    // Queued queries look for a free slot every POLL_MS (a slot freed by another server is seen
    // so; KV's watch does not see other processes' writes to a local file); requests of other
    // servers are looked for every ASK_EVERY-th time. With signals, every SIGNALLED_POLL_MS.
    this.#timers.push(
      setInterval(
        () => this.#lease.renew().catch((e) => this.#warn("renewing its lease", e)),
        Math.max(10, Math.floor(leaseMs / 3)),
      ),
      setInterval(() => this.poll(), coordination ? SIGNALLED_POLL_MS : POLL_MS),
      // The timer's sweep is skipped while one is under way (none queued behind it).
      setInterval(
        () => this.#sweeping === null && this.sweep(),
        Math.max(20, Math.floor(leaseMs / 2)),
      ),
    );
  }

  /** The gate of the supervisor: a query of this server runs once it holds a shared slot. */
  mayRun(queryId: string): boolean {
    return this.#granted.has(queryId);
  }

  /**
   * Admits a query across all servers: a running slot (`run`), a place in the shared queue
   * (`queue`) or none (`full`: 429). Writes its record in the same commit.
   */
  async admit(queryId: string, owner: User, submission: SharedSubmission): Promise<Admission> {
    const now = this.#now();
    const record: SharedRecord = {
      queryId,
      owner: owner.name,
      ...(owner.timeZone === undefined ? {} : { ownerTimeZone: owner.timeZone }),
      server: this.serverId,
      submitted: now,
      scriptPath: submission.scriptPath ?? "",
      excerpt: submission.excerpt ?? "",
      status: { queryId, state: "QUEUED", progress: 0, warnings: [], stateChanges: [], stats: {} },
      ...(submission.fixedFormat === undefined ? {} : { fixedFormat: submission.fixedFormat }),
      ...(submission.shareResult ? {} : { answered: true }),
    };
    if (this.rows) {
      const slot = { id: queryId, server: this.serverId, at: now };
      const admitted = await this.rows.admit(
        slot,
        this.options.maxQueued,
        this.records.create(record),
      );
      if (admitted.decision === "full") return "full";
      if (admitted.decision === "run") this.#granted.add(queryId);
      else this.#queued.push(queryId);
      this.#publisher.admitted(record, admitted.version, submission.shareResult);
      // A slot freed while it was being queued found no one to hand itself to.
      if (admitted.decision === "queue") void this.#look({ promote: true, asks: false });
      return admitted.decision;
    }
    let decision: Admission = "full";
    const outcome = await this.book.change((slots) => {
      const admitted = admitSlot(
        slots,
        { id: queryId, server: this.serverId, at: now },
        { maxRunning: this.maxRunning, maxQueued: this.options.maxQueued },
      );
      decision = admitted.decision;
      return decision === "full" ? undefined : {
        slots: admitted.slots,
        extra: [this.records.create(record)],
      };
    });
    if (!outcome.applied || decision === "full") return "full";
    if (decision === "run") this.#granted.add(queryId);
    else this.#queued.push(queryId);
    this.#publisher.admitted(record, outcome.version, submission.shareResult);
    return decision;
  }

  /** A query admitted but refused by the local supervisor: its slot and record go. */
  async release(queryId: string): Promise<void> {
    this.#forgetLocal(queryId);
    this.#publisher.tracked.delete(queryId);
    await this.#end(queryId, [this.records.remove(queryId)], undefined)
      .catch((e) => this.#warn(`releasing query ${queryId}`, e));
  }

  /** Follows an admitted query's actor: publishes its record, its result, frees its slot. */
  track(queryId: string, ref: QueryRef): void {
    this.#publisher.follow(queryId, ref);
  }

  /** The record of a query (any server's), or null. */
  record(queryId: string): Promise<{ record: SharedRecord; version: string } | null> {
    return this.records.get(queryId);
  }

  /** The records of unfinished and retained queries of every server (`GET /queries`). */
  list(visible: (owner: string) => boolean): Promise<SharedRecord[]> {
    return this.records.list(visible);
  }

  /** Asks the query's owner to cancel it (DELETE on another server than its own). */
  async askCancel(queryId: string): Promise<void> {
    await this.#asks.ask(queryId, "cancel");
  }

  /**
   * Frees a finished query from any server: its record becomes a tombstone, its result goes,
   * and its owner is asked to drop its own copy.
   */
  async free(queryId: string): Promise<void> {
    const found = await this.records.get(queryId);
    if (found && !found.record.freed) {
      await this.records.tombstone(found);
      await this.pages.drop(queryId, found.record.result);
    }
    if (found && found.record.server !== this.serverId) await this.#asks.ask(queryId, "free");
  }

  /** Items `first..last` of a shared result, in batches (a page is read when reached). */
  readResult(
    queryId: string,
    result: SharedResult,
    first: number,
    last: number,
  ): AsyncGenerator<readonly StoredItem[]> {
    return this.pages.read(queryId, result, first, last);
  }

  /**
   * Stops: this server's unfinished queries are marked FAILED and their slots freed, its lease
   * goes. Finished queries stay readable through the other servers until they expire.
   */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    for (const unlisten of this.#unlisten.splice(0)) await unlisten();
    for await (const id of this.#publisher.open()) {
      await this.#fail(id, "the server that ran this query stopped").catch((e) =>
        this.#warn(`failing query ${id}`, e)
      );
    }
    await this.#lease.remove().catch(() => {});
  }

  /** Promotes this server's queued queries into free slots, and answers other servers' asks. */
  poll(): Promise<void> {
    return this.#look({ promote: true, asks: true });
  }

  /**
   * One look at a time: a signal during a look (a freed slot: `promote`; a request: `asks`)
   * makes one more after it, so that no signal is lost, and only what was signalled is looked at.
   * A call during a look resolves when that look, which then covers what it asked, has ended: a
   * sweep that counted more slots returns once its queued queries were looked at (returning at
   * once let a test see q2 still queued after the sweep, on a busy machine).
   */
  async #look(want: { readonly promote: boolean; readonly asks: boolean }): Promise<void> {
    if (this.#stopping) return;
    this.#wanted = {
      promote: this.#wanted.promote || want.promote,
      asks: this.#wanted.asks || want.asks,
    };
    if (this.#ticking) return await this.#ticking.promise;
    const ticking = Promise.withResolvers<void>();
    this.#ticking = ticking;
    try {
      while ((this.#wanted.promote || this.#wanted.asks) && !this.#stopping) {
        const { promote, asks } = this.#wanted;
        this.#wanted = { promote: false, asks: false };
        if (promote && this.#queued.length > 0) await this.#promote();
        const every = this.storage.coordination ? 1 : ASK_EVERY;
        if (asks && this.#publisher.tracked.size > 0 && this.#ticks++ % every === 0) {
          await this.#answerAsks();
        }
      }
    } catch (e) {
      this.#wanted = { promote: false, asks: false };
      this.#warn("polling the shared queries", e);
    } finally {
      // Cleared in the same turn as the last look at `#wanted`: a later call starts a look.
      this.#ticking = undefined;
      ticking.resolve();
    }
  }

  async #promote(): Promise<void> {
    if (this.rows) {
      const { ids, handed } = await this.rows.holding(this.#queued);
      if (handed) this.#signal();
      if (ids.length === 0) return;
      for (const id of ids) {
        if (!this.#queued.includes(id)) continue;
        this.#queued.splice(this.#queued.indexOf(id), 1);
        this.#granted.add(id);
      }
      this.#supervisor?.send({ type: "SLOTS" });
      return;
    }
    const op = this.#promotion();
    this.book.push(op);
    await op.done;
  }

  /**
   * An op that moves this server's queued queries into free running slots, in the shared
   * queue's order (`promotable`). Every commit of this server's slot changes carries one while
   * it has queued queries, so a slot it frees goes to its next query in that same commit.
   */
  #promotion(): SlotOp & { readonly done: Promise<SlotOutcome> } {
    let moved: string[] = [];
    const { promise, resolve, reject } = Promise.withResolvers<SlotOutcome>();
    promise.catch(() => {});
    return {
      promotion: true,
      done: promise,
      change: (slots) => {
        const next = promotable(slots, new Set(this.#queued), this.maxRunning);
        moved = next.map((s) => s.id);
        return next.length === 0 ? undefined : { slots: promoted(slots, next), extra: [] };
      },
      resolve: (outcome) => {
        if (outcome.applied && moved.length > 0) {
          for (const id of moved) {
            this.#granted.add(id);
            const at = this.#queued.indexOf(id);
            if (at >= 0) this.#queued.splice(at, 1);
          }
          this.#supervisor?.send({ type: "SLOTS" });
        }
        resolve(outcome);
      },
      reject,
    };
  }

  async #answerAsks(): Promise<void> {
    for await (
      const { queryId, what } of this.#asks.take((id) => this.#publisher.tracked.has(id))
    ) {
      this.#supervisor?.send({ type: what === "cancel" ? "CANCEL" : "FREE", queryId });
    }
  }

  /**
   * When the query that ended held a running slot and this server's next waiting query is the
   * first of the shared queue, that one runs at once: the commit that frees the slot also moves
   * it in (`withNext`). Until then the slot stays counted as running, so no other server can
   * take it meanwhile, and a query queued elsewhere later is younger. Returns the query moved.
   */
  async #handOver(queryId: string, held: boolean): Promise<HandOver | undefined> {
    // With rows the slot is handed over by the database (PgAdmission.end).
    if (this.rows || !held || this.#queued.length === 0) return undefined;
    const { value } = await this.book.read();
    const head = value.queued[0];
    if (!head || head.server !== this.serverId || !this.#queued.includes(head.id)) return undefined;
    if (!value.running.some((s) => s.id === queryId)) return undefined;
    this.#granted.add(head.id);
    this.#queued.splice(this.#queued.indexOf(head.id), 1);
    this.#supervisor?.send({ type: "SLOTS" });
    // Should it end before the commit (its own commit would come first), it is not moved in.
    return { ...head, ended: () => !this.#publisher.unfinished(head.id) };
  }

  /**
   * Fails the queries of servers whose lease has not changed for `cluster.lease`. A call while a
   * sweep is under way resolves after the next one, which begins when that one has ended (what it
   * reads is newer than the call); the calls made meanwhile share it. Returning at once, as
   * before, told a caller a sweep was done that had read the leases before it asked.
   */
  sweep(): Promise<void> {
    if (this.#stopping) return Promise.resolve();
    if (this.#sweeping !== null) {
      return this.#nextSweep ??= this.#sweeping.then(() => {
        this.#nextSweep = null;
        return this.sweep();
      });
    }
    this.#sweeping = this.#sweepOnce().finally(() => {
      this.#sweeping = null;
    });
    return this.#sweeping;
  }

  async #sweepOnce(): Promise<void> {
    try {
      await this.#count();
      const all = this.rows ? await this.rows.all() : allSlots((await this.book.read()).value);
      const servers = new Set(all.map((s) => s.server));
      servers.delete(this.serverId);
      const now = this.#now();
      for (const server of servers) {
        if (!this.#watch.dead(server, await this.#lease.version(server), now)) continue;
        const ids = all.filter((s) => s.server === server).map((s) => s.id);
        this.options.log.warn(
          `server ${server} stopped renewing its lease: failing its ${ids.length} unfinished queries`,
        );
        for (const id of ids) {
          await this.#fail(id, "the server that ran this query stopped responding");
        }
      }
      this.#watch.keepOnly(servers);
      // This server's own slots that no query of it holds any more (a finish whose commit
      // failed): freed, so that a failure of the KV never keeps a slot for good.
      for (const slot of all) {
        if (
          slot.server === this.serverId && !this.#publisher.tracked.has(slot.id) &&
          now - slot.at > ORPHAN_SLOT_MS
        ) {
          await this.#fail(slot.id, "the server that ran this query lost track of it");
        }
      }
    } catch (e) {
      this.#warn("looking for servers that stopped", e);
    }
  }

  /** Marks an unfinished query FAILED with `message` and frees its slot, in one commit. */
  async #fail(queryId: string, message: string): Promise<void> {
    for (let attempt = 0; attempt < SLOT_ATTEMPTS; attempt++) {
      const found = await this.records.get(queryId);
      const record = found?.record;
      if (!found || !record || record.freed || isFinished(record.status.state)) {
        await this.#end(queryId, [], undefined);
        return;
      }
      const failed = failedRecord(record, message, this.#now());
      const outcome = await this.#end(
        queryId,
        [this.records.final(failed, found.version)],
        undefined,
      );
      if (outcome.applied) return;
    }
  }

  /** The query's result is being stored: its running slot is freed (`next` moved in). */
  async #storing(queryId: string, next: HandOver | undefined): Promise<void> {
    if (this.rows) {
      this.#handed(await this.rows.storing(queryId));
      return;
    }
    await this.book.change((slots) => {
      const moved = storing(slots, queryId);
      if (!moved) return next && { slots: withNext(slots, next), extra: [] };
      return { slots: next ? withNext(moved, next) : moved, extra: [] };
    });
  }

  /**
   * The query's slot or place goes (`next` moved into it), `entries` written in the same
   * commit; with none, nothing is done (`applied: false`) when the query held nothing.
   */
  async #end(
    queryId: string,
    entries: readonly CommitEntry[],
    next: HandOver | undefined,
  ): Promise<SlotOutcome> {
    if (this.rows) {
      const ended = await this.rows.end(queryId, entries);
      this.#handed(ended.handed);
      return ended.applied ? { applied: true, version: ended.version } : { applied: false };
    }
    return await this.book.change((slots) => {
      const left = without(slots, new Set([queryId]));
      if (entries.length === 0) return left && { slots: left, extra: [] };
      const freed = left ?? slots;
      return { slots: next ? withNext(freed, next) : freed, extra: entries };
    });
  }

  /**
   * Queries handed a slot by a commit of this server: its own start at once; another server's
   * are signalled (`trawl_slots`), so that it starts them.
   */
  #handed(handed: readonly Handed[]): void {
    let mine = false;
    let theirs = false;
    for (const { id, server } of handed) {
      if (server === this.serverId && this.#queued.includes(id)) {
        this.#queued.splice(this.#queued.indexOf(id), 1);
        this.#granted.add(id);
        mine = true;
      } else theirs = true;
    }
    if (mine) this.#supervisor?.send({ type: "SLOTS" });
    if (theirs) this.#signal();
  }

  /** Tells every server that a slot was handed over (`trawl_slots`). */
  #signal(): void {
    this.storage.coordination?.notify(SLOTS_CHANNEL).catch(() => {});
  }

  /**
   * Another server marked this query FAILED (it took this server for dead): it ends FAILED here
   * too, with the record's error, so that this server and the others tell one state.
   */
  async #lose(queryId: string): Promise<void> {
    this.#forgetLocal(queryId);
    this.options.log.warn(
      `query ${queryId} was marked FAILED by another server (this server's lease was seen expired); stopping it`,
    );
    const status = await this.records.get(queryId).then((found) => found?.record.status)
      .catch(() => undefined);
    const told = status?.state === "FAILED" ? status.error as Diagnostic | undefined : undefined;
    const error: Diagnostic = typeof told?.message === "string"
      ? told
      : { code: "RUNTIME_ERROR", message: "the server that ran this query stopped responding" };
    this.#supervisor?.send({ type: "FAIL", queryId, error });
  }

  #forgetLocal(queryId: string): void {
    this.#granted.delete(queryId);
    const at = this.#queued.indexOf(queryId);
    if (at >= 0) this.#queued.splice(at, 1);
  }

  #warn(doing: string, e: unknown): void {
    this.options.log.warn(`shared queries: ${doing} failed: ${(e as Error).message}`);
  }
}
