/**
 * Queries shared by the servers of one storage (storage = kv:...): a registry of every query in
 * the storage, so that a query submitted to one server answers its status, events, result,
 * schema and DELETE from any other, with `query.maxRunning` and `query.maxQueued` counted across
 * all of them. With the files storage there is none of this (main.ts makes no SharedQueries).
 *
 * Layout in the storage (engine/contracts/storage.ts keys):
 *
 *   queries/q/<id>           the query's record: owner, server, status (as the API shows it),
 *                            schema, fixed format, and where its result is; `expireIn` = the
 *                            retention once finished.
 *   queries/gone/<id>        a freed query's tombstone (its id answers 410), `expireIn` =
 *                            `query.expiredMemory`.
 *   queries/r/<id>/<page>    its result, PAGE_ITEMS items a page, in a compact lossless form
 *                            (engine/table/sxt_values.ts), written when it SUCCEEDED; `expireIn`.
 *   queries/slots            the admission document: the ids holding a running slot and those
 *                            queued, each with its server; changed by compare-and-swap in the
 *                            same atomic commit that creates or finishes a record.
 *   queries/server/<server>  a server's lease, rewritten every third of `cluster.lease`.
 *   queries/ask/<id>         a request of another server to the query's owner: cancel or free.
 *
 * The server that took a query runs it (its local supervisor) and publishes the query's record
 * as it changes. The supervisor schedules a query only once this module has granted it a
 * running slot in `queries/slots` (the `gate`). Every server looks at the leases of the servers
 * named in the slots: a lease that has not changed for `cluster.lease` (seen by the looking
 * server's own clock, so clocks need not agree) belongs to a dead server, whose running and
 * queued queries are marked FAILED and whose slots are freed.
 */

import {
  type CommitEntry,
  MAX_COMMIT_KEYS,
  type Storage,
  type StorageKey,
  type StoredValue,
} from "../engine/contracts/storage.ts";
import type { User } from "../engine/contracts/user.ts";
import type { Diagnostic } from "../engine/front/diagnostics.ts";
import { schemaToJson } from "../engine/values/types.ts";
import type { Row } from "../engine/values/values.ts";
import { decodeValue, encodeValue } from "../engine/table/sxt_values.ts";
import type { Logger } from "../home/log.ts";
import { isFinished, type QueryState, statsOf, topState } from "./query_machine.ts";
import type { QueryRef, SupervisorRef } from "./supervisor.ts";
import type { StoredItem } from "./result_store.ts";

/** Items per page of a shared result. */
export const PAGE_ITEMS = 16_384;
/** Items handed to a result writer at a time when a shared result is read. */
const READ_BATCH = 1024;
/** How long a cancel or free request waits for its query's owner. */
const ASK_MS = 60_000;
/** Attempts of a compare-and-swap of the slots before giving up. */
const SLOT_ATTEMPTS = 200;
/** A record is written at most this often for progress alone. */
const PROGRESS_WRITE_MS = 1_000;
/** An unfinished state is written this long after it is entered (a quick query's never are). */
const PUBLISH_DELAY_MS = 150;
/** How often a server with queued queries looks for a free slot. */
const POLL_MS = 10;
/** Requests of other servers (cancel, free) are looked for every this many polls (250 ms). */
const ASK_EVERY = 25;
/** A finish whose commit failed is tried again after this long. */
const FINISH_RETRY_MS = 1_000;
/** A slot of this server that none of its queries holds is freed once this old. */
const ORPHAN_SLOT_MS = 30_000;

const SLOTS: StorageKey = ["queries", "slots"];
const recordKey = (id: string): StorageKey => ["queries", "q", id];
const pageKey = (id: string, page: number): StorageKey => ["queries", "r", id, String(page)];
const leaseKey = (server: string): StorageKey => ["queries", "server", server];
const askKey = (id: string): StorageKey => ["queries", "ask", id];
const goneKey = (id: string): StorageKey => ["queries", "gone", id];
const ASKS: StorageKey = ["queries", "ask"];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface SharedQueriesOptions {
  readonly maxRunning: number;
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
}

/** One query in the admission document. */
interface Slot {
  readonly id: string;
  readonly server: string;
  /** When it was admitted (the admitting server's clock): the queue's order. */
  readonly at: number;
}

interface Slots {
  readonly running: readonly Slot[];
  readonly queued: readonly Slot[];
  /** SUCCEEDED on their server, their result being stored: no longer counted as running. */
  readonly storing?: readonly Slot[];
}

/** Where a query's shared result is. */
export interface SharedResult {
  readonly count: number;
  readonly pages: number;
  readonly pageItems: number;
}

/** A query's record in the storage. */
export interface SharedRecord {
  readonly queryId: string;
  readonly owner: string;
  /** The owner's time zone (User.timeZone), for the result read by an admin through another server. */
  readonly ownerTimeZone?: string;
  readonly server: string;
  /** Milliseconds since the epoch, when it was admitted. */
  readonly submitted: number;
  readonly scriptPath: string;
  readonly excerpt: string;
  /** The status object as the API shows it (`state` inside). */
  readonly status: Record<string, unknown> & { readonly state: QueryState };
  /** The result's schema (schemaToJson), once known. */
  readonly schema?: unknown;
  /** The format fixed at POST (routes' FixedFormat), opaque here. */
  readonly fixedFormat?: unknown;
  /** Where its result is, once SUCCEEDED and stored; absent when it is not shared. */
  readonly result?: SharedResult;
  /** A synchronous query: its result is never kept, only its status. */
  readonly answered?: boolean;
  /** Freed or expired: the id answers 410 until the tombstone expires. */
  readonly freed?: boolean;
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

export type Admission = "run" | "queue" | "full";

/** A change of the slots: the new slots and the keys written with them, or nothing to do. */
type SlotChange = (
  slots: Slots,
) => { readonly slots: Slots; readonly extra: readonly CommitEntry[] } | undefined;

type SlotOutcome =
  | { readonly applied: true; readonly version: string | null }
  | { readonly applied: false };

interface SlotOp {
  readonly change: SlotChange;
  resolve(outcome: SlotOutcome): void;
  reject(error: unknown): void;
}

interface Tracked {
  readonly ref: QueryRef;
  readonly shareResult: boolean;
  /** The record's version as this server last wrote it; a change by another means it lost it. */
  version: string | null;
  /** The record as last written. */
  record: SharedRecord;
  /** Writes of this query's record, one after another. */
  chain: Promise<void>;
  /** A write is queued on the chain (later changes ride on it). */
  queued: boolean;
  /** A write of an unfinished state waits for PUBLISH_DELAY_MS (a quick query skips it). */
  timer: ReturnType<typeof setTimeout> | undefined;
  lastState: QueryState;
  lastWrite: number;
  /** The final record has been written (or given up). */
  finished: boolean;
  /** Another server failed it (this server's lease was taken for dead): stop writing. */
  lost: boolean;
}

/** The status object of a query actor's snapshot, as the API shows it. */
export function queryStatus(ref: QueryRef): Record<string, unknown> & { state: QueryState } {
  const { context, value } = ref.getSnapshot();
  return {
    queryId: context.queryId,
    state: topState(value),
    progress: context.progress,
    warnings: context.warnings,
    stateChanges: context.stateChanges,
    stats: statsOf(context, context.now()),
    ...(context.error ? { error: context.error } : {}),
  };
}

export class SharedQueries implements SchedulingGate {
  readonly serverId: string;
  readonly #now: () => number;
  readonly #tracked = new Map<string, Tracked>();
  /** Ids this server holds a running slot for. */
  readonly #granted = new Set<string>();
  /** Ids of this server waiting in the shared queue, oldest first. */
  readonly #queued: string[] = [];
  /** Other servers' leases as last seen: version and when (this server's clock) it changed. */
  readonly #seen = new Map<string, { version: string | null; since: number }>();
  #supervisor: SupervisorRef | undefined;
  #timers: ReturnType<typeof setInterval>[] = [];
  #stopping = false;
  #ticking = false;
  #ticks = 0;
  #sweeping = false;
  /** Changes of the slots waiting for the commit in progress. */
  readonly #ops: SlotOp[] = [];
  #flushing = false;
  #started: Promise<void> | undefined;

  constructor(readonly storage: Storage, readonly options: SharedQueriesOptions) {
    this.serverId = options.serverId ?? crypto.randomUUID();
    this.#now = options.now ?? Date.now;
  }

  /**
   * Writes this server's lease and starts renewing it, polling requests and sweeping (once;
   * buildDeps in main.ts calls it with the supervisor it gates).
   */
  start(supervisor: SupervisorRef): Promise<void> {
    this.#started ??= this.#start(supervisor);
    return this.#started;
  }

  async #start(supervisor: SupervisorRef): Promise<void> {
    this.#supervisor = supervisor;
    await this.#renewLease();
    const { leaseMs } = this.options;
    // Queued queries look for a free slot every POLL_MS (a slot freed by another server is seen
    // so; KV's watch does not see other processes' writes to a local file); requests of other
    // servers are looked for every ASK_EVERY-th time.
    const poll = POLL_MS;
    this.#timers.push(
      setInterval(
        () => this.#renewLease().catch((e) => this.#warn("renewing its lease", e)),
        Math.max(10, Math.floor(leaseMs / 3)),
      ),
      setInterval(() => this.#tick(), poll),
      setInterval(() => this.#sweep(), Math.max(20, Math.floor(leaseMs / 2))),
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
      status: {
        queryId,
        state: "QUEUED",
        progress: 0,
        warnings: [],
        stateChanges: [],
        stats: {},
      },
      ...(submission.fixedFormat === undefined ? {} : { fixedFormat: submission.fixedFormat }),
      ...(submission.shareResult ? {} : { answered: true }),
    };
    let decision: Admission = "full";
    const create = [{ key: recordKey(queryId), value: encodeJson(record), expectedVersion: null }];
    const outcome = await this.#changeSlots((slots) => {
      const slot = { id: queryId, server: this.serverId, at: now };
      const free = slots.running.length < this.options.maxRunning;
      // Never ahead of queries already waiting: those go first (their servers move them in).
      if (free && slots.queued.length === 0) {
        decision = "run";
        return {
          slots: { ...slots, running: [...slots.running, slot] },
          extra: create,
        };
      }
      if (free || slots.queued.length < this.options.maxQueued) {
        decision = "queue";
        return {
          slots: { ...slots, queued: [...slots.queued, slot] },
          extra: create,
        };
      }
      decision = "full";
      return undefined;
    });
    if (!outcome.applied || decision === "full") return "full";
    const version = outcome.version;
    if (decision === "run") this.#granted.add(queryId);
    else this.#queued.push(queryId);
    this.#tracked.set(queryId, {
      ref: undefined as unknown as QueryRef,
      shareResult: submission.shareResult,
      version,
      record,
      chain: Promise.resolve(),
      queued: false,
      timer: undefined,
      lastState: "QUEUED",
      lastWrite: now,
      finished: false,
      lost: false,
    });
    return decision;
  }

  /** A query admitted but refused by the local supervisor: its slot and record go. */
  async release(queryId: string): Promise<void> {
    this.#forgetLocal(queryId);
    this.#tracked.delete(queryId);
    await this.#changeSlots((slots) => ({
      slots: without(slots, new Set([queryId])) ?? slots,
      extra: [{ key: recordKey(queryId), value: null }],
    })).catch((e) => this.#warn(`releasing query ${queryId}`, e));
  }

  /** Follows an admitted query's actor: publishes its record, its result, frees its slot. */
  track(queryId: string, ref: QueryRef): void {
    const entry = this.#tracked.get(queryId);
    if (!entry) return;
    (entry as { ref: QueryRef }).ref = ref;
    const changed = () => this.#changed(queryId, entry);
    ref.subscribe({
      next: changed,
      error: changed,
      complete: () => this.#dropped(queryId, entry),
    });
    changed();
  }

  /** The record of a query (any server's), or null. */
  async record(queryId: string): Promise<{ record: SharedRecord; version: string } | null> {
    const stored = await this.storage.get(recordKey(queryId)) ??
      await this.storage.get(goneKey(queryId));
    if (!stored) return null;
    return { record: decodeJson(stored) as SharedRecord, version: stored.version };
  }

  /**
   * The records of unfinished and retained queries (not freed, not answered synchronously) of
   * every server, for `GET /queries`; each record is read, so this costs one read per query
   * held across the servers.
   */
  async list(visible: (owner: string) => boolean): Promise<SharedRecord[]> {
    const records: SharedRecord[] = [];
    for await (const key of this.storage.list(["queries", "q"])) {
      const stored = await this.storage.get(key);
      if (!stored) continue;
      const record = decodeJson(stored) as SharedRecord;
      if (record.freed || record.answered || !visible(record.owner)) continue;
      records.push(record);
    }
    return records;
  }

  /** Asks the query's owner to cancel it (DELETE on another server than its own). */
  async askCancel(queryId: string): Promise<void> {
    await this.storage.put(askKey(queryId), encoder.encode("cancel"), { expireInMs: ASK_MS });
  }

  /**
   * Frees a finished query from any server: its record becomes a tombstone, its result goes,
   * and its owner is asked to drop its own copy.
   */
  async free(queryId: string): Promise<void> {
    const found = await this.record(queryId);
    if (found && !found.record.freed) {
      await this.#tombstone(queryId, found.record, found.version);
      await this.#dropPages(queryId, found.record.result);
    }
    if (found && found.record.server !== this.serverId) {
      await this.storage.put(askKey(queryId), encoder.encode("free"), { expireInMs: ASK_MS });
    }
  }

  /** Items `first..last` of a shared result, in batches (a page is read when reached). */
  async *readResult(
    queryId: string,
    result: SharedResult,
    first: number,
    last: number,
  ): AsyncGenerator<readonly StoredItem[]> {
    last = Math.min(last, result.count - 1);
    for (
      let page = Math.floor(first / result.pageItems);
      page <= Math.floor(last / result.pageItems) && page < result.pages;
      page++
    ) {
      const stored = await this.storage.get(pageKey(queryId, page));
      if (!stored) {
        throw new Error(`the stored result of query ${queryId} is gone (freed or expired)`);
      }
      const items = decodePage(stored.value);
      const base = page * result.pageItems;
      const from = Math.max(first, base) - base;
      const to = Math.min(last, base + items.length - 1) - base;
      for (let i = from; i <= to; i += READ_BATCH) {
        yield items.slice(i, Math.min(to, i + READ_BATCH - 1) + 1);
      }
    }
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
    const open = [...this.#tracked].filter(([, t]) => !t.finished);
    for (const [id, entry] of open) {
      await entry.chain;
      entry.finished = true;
      await this.#fail(id, "the server that ran this query stopped").catch((e) =>
        this.#warn(`failing query ${id}`, e)
      );
    }
    await this.storage.delete(leaseKey(this.serverId)).catch(() => {});
  }

  // ---- the owner's side ----

  #changed(queryId: string, entry: Tracked): void {
    if (entry.finished || entry.lost || this.#stopping || entry.ref === undefined) return;
    const state = topState(entry.ref.getSnapshot().value);
    if (isFinished(state)) {
      clearTimeout(entry.timer);
      entry.timer = undefined;
      this.#write(queryId, entry);
      return;
    }
    const now = this.#now();
    if (state === entry.lastState && now - entry.lastWrite < PROGRESS_WRITE_MS) return;
    // Later: a quick query's intermediate states are never written, only its end.
    entry.timer ??= setTimeout(() => {
      entry.timer = undefined;
      this.#write(queryId, entry);
    }, PUBLISH_DELAY_MS);
  }

  /** Queues a write of the query's record as its actor now is (one queued at a time). */
  #write(queryId: string, entry: Tracked): void {
    if (entry.queued) return; // the queued write takes the latest snapshot
    entry.queued = true;
    entry.chain = entry.chain.then(async () => {
      entry.queued = false;
      if (entry.finished || entry.lost || this.#stopping) return;
      const snapshot = entry.ref.getSnapshot();
      const current = topState(snapshot.value);
      entry.lastState = current;
      entry.lastWrite = this.#now();
      try {
        if (isFinished(current)) await this.#finish(queryId, entry);
        else await this.#publish(queryId, entry);
      } catch (e) {
        this.#warn(`writing the record of query ${queryId}`, e);
        if (isFinished(current) && !entry.lost && !this.#stopping) {
          // Its slot must be freed and its end told: tried again a little later.
          entry.finished = false;
          setTimeout(() => this.#write(queryId, entry), FINISH_RETRY_MS);
        }
      }
    });
  }

  async #publish(queryId: string, entry: Tracked): Promise<void> {
    const record: SharedRecord = { ...entry.record, status: queryStatus(entry.ref) };
    const written = await this.storage.put(recordKey(queryId), encodeJson(record), {
      expectedVersion: entry.version,
    });
    if (!written.ok) return this.#lose(queryId, entry);
    entry.version = written.version;
    entry.record = record;
  }

  /** The final record (with the result stored first when it SUCCEEDED), the slot freed. */
  async #finish(queryId: string, entry: Tracked): Promise<void> {
    entry.finished = true;
    const held = this.#granted.has(queryId);
    this.#forgetLocal(queryId);
    const next = await this.#handOver(queryId, held).catch(() => undefined);
    const { context } = entry.ref.getSnapshot();
    const status = queryStatus(entry.ref);
    let result: SharedResult | undefined;
    if (status.state === "SUCCEEDED" && entry.shareResult) {
      // Its running slot is free while the result is stored (the next query need not wait).
      await this.#changeSlots((slots) => {
        const slot = slots.running.find((s) => s.id === queryId);
        if (!slot) return next && { slots: withNext(slots, next), extra: [] };
        const moved = {
          ...slots,
          running: slots.running.filter((s) => s !== slot),
          storing: [...(slots.storing ?? []), slot],
        };
        return { slots: next ? withNext(moved, next) : moved, extra: [] };
      });
      try {
        result = await this.#writeResult(queryId, entry);
      } catch (e) {
        this.#warn(`storing the result of query ${queryId}`, e);
      }
    }
    const record: SharedRecord = {
      ...entry.record,
      status,
      ...(context.schema ? { schema: schemaToJson(context.schema) } : {}),
      ...(context.fixedFormat === undefined ? {} : { fixedFormat: context.fixedFormat }),
      ...(result ? { result } : {}),
    };
    const handedOver = next && !entry.shareResult ? next : undefined;
    const outcome = await this.#changeSlots((slots) => {
      const freed = without(slots, new Set([queryId])) ?? slots;
      return {
        slots: handedOver ? withNext(freed, handedOver) : freed,
        extra: [{
          key: recordKey(queryId),
          value: encodeJson(record),
          expectedVersion: entry.version,
          expireInMs: this.options.retentionMs,
        }],
      };
    });
    if (outcome.applied) {
      entry.version = outcome.version;
      entry.record = record;
      return;
    }
    // Another server failed it meanwhile (and freed its slot): the result goes.
    entry.lost = true;
    await this.#dropPages(queryId, result);
    await this.#changeSlots((slots) => {
      const next = without(slots, new Set([queryId]));
      return next && { slots: next, extra: [] };
    }).catch(() => {});
  }

  /**
   * When the query that ended held a running slot and this server's next waiting query is the
   * first of the shared queue, that one runs at once: the commit that frees the slot also moves
   * it in (`withNext`). Until then the slot stays counted as running, so no other server can
   * take it meanwhile, and a query queued elsewhere later is younger. Returns the query moved.
   */
  async #handOver(
    queryId: string,
    held: boolean,
  ): Promise<(Slot & { readonly ended: () => boolean }) | undefined> {
    if (!held || this.#queued.length === 0) return undefined;
    const { value } = await this.#readSlots();
    const head = value.queued[0];
    if (!head || head.server !== this.serverId || !this.#queued.includes(head.id)) return undefined;
    if (!value.running.some((s) => s.id === queryId)) return undefined;
    this.#granted.add(head.id);
    this.#queued.splice(this.#queued.indexOf(head.id), 1);
    this.#supervisor?.send({ type: "SLOTS" });
    // Should it end before the commit (its own commit would come first), it is not moved in.
    const ended = () => this.#tracked.get(head.id)?.finished !== false;
    return { ...head, ended };
  }

  /** The result of a SUCCEEDED query as pages; their `expireIn` outlives the record's. */
  async #writeResult(queryId: string, entry: Tracked): Promise<SharedResult> {
    const { store, schema } = entry.ref.getSnapshot().context;
    const columns = (schema ?? []).map((f) => f.name);
    const count = store.count;
    const expireInMs = this.options.retentionMs + 60_000;
    let page = 0;
    let items: StoredItem[] = [];
    const flush = async () => {
      const bytes = encodePage(items, columns);
      await this.storage.put(pageKey(queryId, page), bytes, { expireInMs });
      page++;
      items = [];
    };
    if (count > 0) {
      for await (const batch of store.read(0, count - 1)) {
        for (const item of batch) {
          items.push(item);
          if (items.length === PAGE_ITEMS) await flush();
        }
      }
      if (items.length > 0) await flush();
    }
    return { count, pages: page, pageItems: PAGE_ITEMS };
  }

  /** The actor was dropped (freed, expired, crashed) or the supervisor stopped. */
  #dropped(queryId: string, entry: Tracked): void {
    this.#forgetLocal(queryId);
    if (this.#stopping) return;
    entry.chain = entry.chain.then(async () => {
      this.#tracked.delete(queryId);
      try {
        if (!entry.finished && isFinished(topState(entry.ref.getSnapshot().value))) {
          await this.#finish(queryId, entry); // its end was not written yet
        } else if (!entry.finished) {
          entry.finished = true;
          await this.#fail(queryId, "the query stopped through an internal error");
        } else if (entry.shareResult && !entry.lost) {
          const found = await this.record(queryId);
          if (found && !found.record.freed) {
            await this.#tombstone(queryId, found.record, found.version);
          }
          await this.#dropPages(queryId, found?.record.result);
        }
      } catch (e) {
        this.#warn(`freeing query ${queryId}`, e);
      }
    });
  }

  /** Another server marked this query FAILED (it took this server for dead). */
  #lose(queryId: string, entry: Tracked): void {
    entry.lost = true;
    this.#forgetLocal(queryId);
    this.options.log.warn(
      `query ${queryId} was marked FAILED by another server (this server's lease was seen expired); cancelling it`,
    );
    this.#supervisor?.send({ type: "CANCEL", queryId });
  }

  #forgetLocal(queryId: string): void {
    this.#granted.delete(queryId);
    const at = this.#queued.indexOf(queryId);
    if (at >= 0) this.#queued.splice(at, 1);
  }

  // ---- the loops ----

  async #renewLease(): Promise<void> {
    if (this.#stopping) return;
    await this.storage.put(leaseKey(this.serverId), encodeJson({ at: this.#now() }), {
      expireInMs: 100 * this.options.leaseMs,
    });
  }

  /** Promotes this server's queued queries into free slots, and answers other servers' asks. */
  async #tick(): Promise<void> {
    if (this.#ticking || this.#stopping) return;
    this.#ticking = true;
    try {
      if (this.#queued.length > 0) await this.#promote();
      if (this.#tracked.size > 0 && this.#ticks++ % ASK_EVERY === 0) await this.#answerAsks();
    } catch (e) {
      this.#warn("polling the shared queries", e);
    } finally {
      this.#ticking = false;
    }
  }

  async #promote(): Promise<void> {
    const op = this.#promotion();
    this.#ops.push(op);
    if (!this.#flushing) this.#flush();
    await op.done;
  }

  /**
   * An op that moves this server's queued queries into free running slots, in the shared
   * queue's order (only the first `free` queued may run, whoever holds them). Every commit of
   * this server's slot changes carries one while it has queued queries, so a slot it frees goes
   * to its next query in that same commit.
   */
  #promotion(): SlotOp & { readonly done: Promise<SlotOutcome> } {
    const promoted: string[] = [];
    const { promise, resolve, reject } = Promise.withResolvers<SlotOutcome>();
    promise.catch(() => {});
    return {
      done: promise,
      change: (slots) => {
        promoted.length = 0;
        const mine = new Set(this.#queued);
        const free = this.options.maxRunning - slots.running.length;
        if (free <= 0 || mine.size === 0) return undefined;
        const next = slots.queued.slice(0, free).filter((s) => mine.has(s.id));
        if (next.length === 0) return undefined;
        for (const s of next) promoted.push(s.id);
        const taken = new Set(promoted);
        return {
          slots: {
            ...slots,
            running: [...slots.running, ...next],
            queued: slots.queued.filter((s) => !taken.has(s.id)),
          },
          extra: [],
        };
      },
      resolve: (outcome) => {
        if (outcome.applied && promoted.length > 0) {
          for (const id of promoted) {
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
    for await (const key of this.storage.list(ASKS)) {
      const queryId = key.at(-1)!;
      if (!this.#tracked.has(queryId)) continue;
      const asked = await this.storage.get(key);
      await this.storage.delete(key);
      const what = asked ? decoder.decode(asked.value) : "";
      if (what === "cancel") this.#supervisor?.send({ type: "CANCEL", queryId });
      if (what === "free") this.#supervisor?.send({ type: "FREE", queryId });
    }
  }

  /** Fails the queries of servers whose lease has not changed for `cluster.lease`. */
  async #sweep(): Promise<void> {
    if (this.#sweeping || this.#stopping) return;
    this.#sweeping = true;
    try {
      const slots = await this.#readSlots();
      const servers = new Set(allSlots(slots.value).map((s) => s.server));
      servers.delete(this.serverId);
      const now = this.#now();
      for (const server of servers) {
        const version = await this.storage.version(leaseKey(server));
        const seen = this.#seen.get(server);
        // Dead once its lease (or its absence: a server between its first query and its first
        // lease, or one that deleted it when it stopped) stays as it is for cluster.lease.
        if (!seen || seen.version !== version) {
          this.#seen.set(server, { version, since: now });
          continue;
        }
        if (now - seen.since <= this.options.leaseMs) continue;
        const ids = allSlots(slots.value).filter((s) => s.server === server).map((s) => s.id);
        this.options.log.warn(
          `server ${server} stopped renewing its lease: failing its ${ids.length} unfinished queries`,
        );
        for (const id of ids) {
          await this.#fail(id, "the server that ran this query stopped responding");
        }
        this.#seen.delete(server);
      }
      for (const server of this.#seen.keys()) if (!servers.has(server)) this.#seen.delete(server);
      // This server's own slots that no query of it holds any more (a finish whose commit
      // failed): freed, so that a failure of the KV never keeps a slot for good.
      for (const slot of allSlots(slots.value)) {
        if (
          slot.server === this.serverId && !this.#tracked.has(slot.id) &&
          now - slot.at > ORPHAN_SLOT_MS
        ) {
          await this.#fail(slot.id, "the server that ran this query lost track of it");
        }
      }
    } catch (e) {
      this.#warn("looking for servers that stopped", e);
    } finally {
      this.#sweeping = false;
    }
  }

  /** Marks an unfinished query FAILED with `message` and frees its slot, in one commit. */
  async #fail(queryId: string, message: string): Promise<void> {
    for (let attempt = 0; attempt < SLOT_ATTEMPTS; attempt++) {
      const found = await this.record(queryId);
      const record = found?.record;
      if (!record || record.freed || isFinished(record.status.state)) {
        await this.#changeSlots((slots) => {
          const next = without(slots, new Set([queryId]));
          return next && { slots: next, extra: [] };
        });
        return;
      }
      const now = this.#now();
      const error: Diagnostic = { code: "RUNTIME_ERROR", message };
      const failed: SharedRecord = {
        ...record,
        status: {
          ...record.status,
          state: "FAILED",
          error,
          stateChanges: [
            ...(record.status.stateChanges as unknown[] ?? []),
            { millis: now, from: record.status.state, to: "FAILED" },
          ],
        },
      };
      const outcome = await this.#changeSlots((slots) => ({
        slots: without(slots, new Set([queryId])) ?? slots,
        extra: [{
          key: recordKey(queryId),
          value: encodeJson(failed),
          expectedVersion: found!.version,
          expireInMs: this.options.retentionMs,
        }],
      }));
      if (outcome.applied) return;
    }
  }

  // ---- storage helpers ----

  async #readSlots(): Promise<{ value: Slots; version: string | null }> {
    const stored = await this.storage.get(SLOTS);
    if (!stored) return { value: { running: [], queued: [] }, version: null };
    return { value: decodeJson(stored) as Slots, version: stored.version };
  }

  /**
   * Changes the slots by compare-and-swap, with the op's `extra` keys in the same commit. The
   * changes asked for meanwhile by other queries of this server go in one commit (up to
   * MAX_COMMIT_KEYS keys), so that a busy server does not race itself for the one key; a
   * commit that lost to another server is retried from the slots as they are then. `change`
   * is called again on each retry; undefined: nothing to do (`applied: false`). A conflict on
   * an extra key (its expected version) leaves that op out: `applied: false`.
   */
  #changeSlots(change: SlotChange): Promise<SlotOutcome> {
    const { promise, resolve, reject } = Promise.withResolvers<SlotOutcome>();
    this.#ops.push({ change, resolve, reject });
    if (!this.#flushing) this.#flush();
    return promise;
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    try {
      while (this.#ops.length > 0) {
        // Each op writes at most one key besides the slots.
        const batch = this.#ops.splice(0, MAX_COMMIT_KEYS - 1);
        if (this.#queued.length > 0 && !batch.some((op) => "done" in op)) {
          batch.push(this.#promotion());
        }
        await this.#commitOps(batch).catch((e) => batch.forEach((op) => op.reject(e)));
      }
    } finally {
      this.#flushing = false;
    }
  }

  async #commitOps(ops: SlotOp[]): Promise<void> {
    let pending = ops;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === SLOT_ATTEMPTS) {
        throw new Error("the shared query slots kept changing: too many servers at once");
      }
      const read = await this.#readSlots();
      let slots = read.value;
      const applied: SlotOp[] = [];
      const entries: CommitEntry[] = [];
      /** Which op wrote which key besides the slots. */
      const writers = new Map<string, SlotOp>();
      for (const op of pending) {
        const next = op.change(slots);
        if (next === undefined) continue;
        slots = next.slots;
        applied.push(op);
        entries.push(...next.extra);
        for (const e of next.extra) writers.set(e.key.join("/"), op);
      }
      for (const op of pending) {
        if (!applied.includes(op)) op.resolve({ applied: false });
      }
      if (applied.length === 0) return;
      if (slots !== read.value) {
        entries.unshift({ key: SLOTS, value: encodeJson(slots), expectedVersion: read.version });
      }
      if (entries.length === 0) {
        applied.forEach((op) => op.resolve({ applied: true, version: null }));
        return;
      }
      // Deletes first: in KV every key of a commit gets the commit's version, which the storage
      // answers as its last entry's, and null when that entry is a delete.
      entries.sort((a, b) => (a.value === null ? 0 : 1) - (b.value === null ? 0 : 1));
      const written = await this.storage.commit(entries);
      if (written.ok) {
        // In KV every key of a commit gets the commit's version (the files storage is not shared).
        applied.forEach((op) => op.resolve({ applied: true, version: written.version }));
        return;
      }
      const lost = written.conflict.join("/");
      if (lost !== SLOTS.join("/")) {
        // One op's own key changed: it is out, the others go again.
        const loser = writers.get(lost);
        loser?.resolve({ applied: false });
        pending = applied.filter((op) => op !== loser);
        if (!loser) throw new Error(`a commit of the shared slots failed on '${lost}'`);
        continue;
      }
      pending = applied;
      await sleep(Math.random() * 5 * Math.min(attempt + 1, 10));
    }
  }

  async #tombstone(queryId: string, record: SharedRecord, version: string): Promise<void> {
    const tombstone: SharedRecord = {
      queryId,
      owner: record.owner,
      server: record.server,
      submitted: record.submitted,
      scriptPath: "",
      excerpt: "",
      status: { state: record.status.state },
      freed: true,
    };
    // Out of queries/q, so that listing the queries held does not read the freed ones.
    await this.storage.commit([
      { key: recordKey(queryId), value: null, expectedVersion: version },
      {
        key: goneKey(queryId),
        value: encodeJson(tombstone),
        expireInMs: this.options.expiredMemoryMs,
      },
    ]);
  }

  async #dropPages(queryId: string, result: SharedResult | undefined): Promise<void> {
    if (!result) return;
    for (let page = 0; page < result.pages; page++) {
      await this.storage.delete(pageKey(queryId, page));
    }
  }

  #warn(doing: string, e: unknown): void {
    this.options.log.warn(`shared queries: ${doing} failed: ${(e as Error).message}`);
  }
}

/** The slots without `ids`, or undefined when none of them is there. */
function without(slots: Slots, ids: ReadonlySet<string>): Slots | undefined {
  const running = slots.running.filter((s) => !ids.has(s.id));
  const queued = slots.queued.filter((s) => !ids.has(s.id));
  const storing = (slots.storing ?? []).filter((s) => !ids.has(s.id));
  if (
    running.length === slots.running.length && queued.length === slots.queued.length &&
    storing.length === (slots.storing ?? []).length
  ) {
    return undefined;
  }
  return { running, queued, storing };
}

/** The slots with `next` running (and no longer queued; not running if it has already ended). */
function withNext(slots: Slots, next: Slot & { readonly ended: () => boolean }): Slots {
  const { id, server, at } = next;
  const running = slots.running.filter((s) => s.id !== id);
  return {
    ...slots,
    running: next.ended() ? running : [...running, { id, server, at }],
    queued: slots.queued.filter((s) => s.id !== id),
  };
}

/** Every query of the slots: running, queued and storing its result. */
function allSlots(slots: Slots): Slot[] {
  return [...slots.running, ...slots.queued, ...(slots.storing ?? [])];
}

function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

function decodeJson(stored: StoredValue): unknown {
  return JSON.parse(decoder.decode(stored.value));
}

/** Marks a column a row does not have (encodeValue writes a string `~U` as `~~U`). */
const ABSENT = "~U";

/**
 * One item of a page: a fragment as a JSON string, a row as the array of its values in the
 * page's column order (a column first met in this row is added to `columns`).
 */
function encodeItem(item: StoredItem, columns: string[]): string {
  if (typeof item === "string") return JSON.stringify(item);
  const values: unknown[] = new Array(columns.length).fill(ABSENT);
  for (const name in item) {
    const value = item[name];
    if (value === undefined) continue;
    let at = columns.indexOf(name);
    if (at < 0) {
      at = columns.push(name) - 1;
      values.push(ABSENT);
    }
    values[at] = encodeValue(value);
  }
  return JSON.stringify(values);
}

/**
 * A page of a shared result: `{"c": [columns], "i": [items]}`, each row an array of its values
 * (lossless, engine/table/sxt_values.ts) in the order of `c`, which starts with `columns` and
 * gains any other field a row has; each fragment a JSON string.
 */
export function encodePage(items: readonly StoredItem[], columns: readonly string[]): Uint8Array {
  const pageColumns = [...columns];
  const texts = items.map((item) => encodeItem(item, pageColumns));
  return encoder.encode(`{"c":${JSON.stringify(pageColumns)},"i":[${texts.join(",")}]}`);
}

/** The items of a page written by `encodePage`. */
export function decodePage(bytes: Uint8Array): StoredItem[] {
  const page = JSON.parse(decoder.decode(bytes)) as { c: string[]; i: unknown[] };
  const columns = page.c;
  return page.i.map((item) => {
    if (typeof item === "string") return item;
    const values = item as unknown[];
    const row: Row = {};
    for (let j = 0; j < values.length; j++) {
      if (values[j] !== ABSENT) row[columns[j]!] = decodeValue(values[j]);
    }
    return row;
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
