/**
 * The supervisor owns every query actor. It admits queries (at most `maxRunning` scheduled or
 * running, at most `maxQueued` waiting; past that a SUBMIT is refused and the route answers
 * 429), schedules waiting ones as slots free, forwards CANCEL and TOUCH, and drops a query when
 * its retention runs out or a finished one is freed: its result goes, and its id is remembered
 * as expired for `expiredMemoryMs` so that it answers 410 rather than 404.
 *
 * The supervisor creates each query actor, holds it in `queries` from its SUBMIT until it is
 * dropped, and stops it then, or when the supervisor itself stops (the `owner` actor). A query
 * actor that fails through a bug is logged and dropped; the supervisor goes on.
 *
 * The query actors are actors of their own (`createActor`), not spawned children: XState copies
 * a machine's whole `children` object on every spawnChild and stopChild, and an actor stopping
 * scans the delayed events of its whole actor system, where every held query keeps its
 * retention timer. As children, a query cost O(queries held) to admit and again to drop, and
 * stopping the supervisor O(queries held²) (13 s for 3000 held queries, against 0.1 s now).
 */

import {
  type ActorOptions,
  type ActorRefFrom,
  createActor,
  enqueueActions,
  type EventObject,
  fromCallback,
  setup,
} from "xstate";
import type { Diagnostic, User } from "../engine/mod.ts";
import type { Logger } from "../home/log.ts";
import {
  type FinishedState,
  isFinished,
  type QueryInput,
  queryMachine,
  type QueryReport,
  statsOf,
  topState,
} from "./query_machine.ts";
import type { QueryMetrics } from "./query_metrics.ts";
import { ExpiredIds } from "./expired_ids.ts";
import { AnsweredQueries } from "./answered_queries.ts";

export interface SupervisorLimits {
  readonly maxRunning: number;
  readonly maxQueued: number;
  readonly retentionMs: number;
  readonly expiredMemoryMs: number;
}

export interface SupervisorInput extends SupervisorLimits {
  readonly now: () => number;
  /** For the queries' internal errors and results that could not be removed. */
  readonly log: Logger;
  /** The machine each query runs (tests give one with a stand-in engine). */
  readonly queryLogic?: typeof queryMachine;
  /** Told of each finished query (for /metrics); none: nothing counted. */
  readonly metrics?: QueryMetrics;
  /** The clock of the queries' delays (tests give XState's SimulatedClock). */
  readonly clock?: ActorOptions<typeof queryMachine>["clock"];
  /**
   * An inspection observer (Stately's inspector, `inspect.statelyUrl`) that the supervisor and
   * every query actor it creates report to.
   */
  readonly inspect?: ActorOptions<typeof queryMachine>["inspect"];
  /**
   * Asked before a waiting query is scheduled (servers sharing a KV: it runs once it holds a
   * slot counted across them, actors/shared_queries.ts); none: the local limits alone.
   */
  readonly gate?: { mayRun(queryId: string): boolean };
}

export type QueryRef = ActorRefFrom<typeof queryMachine>;

interface Entry {
  readonly ref: QueryRef;
  readonly owner: string;
  /** The client's Idempotency-Key, kept in `keys` for as long as the query is held. */
  readonly key?: string | undefined;
  /** What was submitted, for `GET /queries` (POST /queries; held as long as the query). */
  readonly note?: QueryNote | undefined;
}

/** What `GET /queries` shows of a submitted query besides its state. */
export interface QueryNote {
  /** Milliseconds since the epoch. */
  readonly submitted: number;
  readonly scriptPath: string;
  /** The script's first line, or the stored script's path. */
  readonly excerpt: string;
}

/**
 * `queries`, `waiting`, `active` and `expired` are held by reference and updated in place by
 * the actions: copying them per event made every request cost O(queries held), and the expired
 * ids number one per query answered in the last 24 hours. No action is an `assign`, which
 * spares a copy of the context per action.
 */
export interface SupervisorContext extends SupervisorInput {
  readonly queries: ReadonlyMap<string, Entry>;
  /** Accepted queries waiting for a slot, oldest first (updated in place, as `queries`). */
  readonly waiting: readonly string[];
  /** Queries holding a slot, SCHEDULED or RUNNING (updated in place, as `queries`). */
  readonly active: ReadonlySet<string>;
  readonly expired: ExpiredIds;
  /**
   * `Idempotency-Key`s: `owner \n key` → query id, for as long as the query is held (its
   * retention is the key's expiry: the drop forgets it). Updated in place, as `queries`.
   */
  readonly keys: ReadonlyMap<string, string>;
  /** Statuses of answered synchronous queries (their actors and results are dropped). */
  readonly answered: AnsweredQueries;
}

export type SupervisorEvent =
  | {
    readonly type: "SUBMIT";
    readonly input: Omit<QueryInput, "retentionMs" | "now" | "log" | "supervisor">;
    /** The client's Idempotency-Key: a second SUBMIT with the same key and owner is refused. */
    readonly idempotencyKey?: string;
    readonly note?: QueryNote;
  }
  | { readonly type: "CANCEL"; readonly queryId: string }
  /** Ends an unfinished query FAILED with `error` (another server marked its record so). */
  | { readonly type: "FAIL"; readonly queryId: string; readonly error: Diagnostic }
  | { readonly type: "TOUCH"; readonly queryId: string }
  /** The gate let more queries run: waiting ones are scheduled if there are local slots. */
  | { readonly type: "SLOTS" }
  /** Drops a finished query at once (DELETE on a finished query, or on an answered one). */
  | { readonly type: "FREE"; readonly queryId: string }
  /**
   * A synchronous query was answered: its status (as the API shows it) is kept for the
   * retention period, its actor and result are dropped.
   */
  | { readonly type: "ANSWERED"; readonly queryId: string; readonly status: unknown }
  | QueryReport
  /** A query actor failed through a bug (an action threw): it has stopped. */
  | { readonly type: "QUERY.CRASHED"; readonly queryId: string; readonly error: unknown };

export const supervisorMachine = setup({
  types: {
    context: {} as SupervisorContext,
    events: {} as SupervisorEvent,
    input: {} as SupervisorInput,
  },
  actors: {
    owner: fromCallback<EventObject, { readonly queries: ReadonlyMap<string, Entry> }>(
      ({ input }) => () => {
        for (const { ref } of input.queries.values()) stopQuery(ref);
      },
    ),
  },
  guards: {
    // A known id is refused too: spawning it again would leave the first actor running unheld.
    canAdmit: ({ context, event }) =>
      event.type === "SUBMIT" && !context.queries.has(event.input.queryId) &&
      (event.idempotencyKey === undefined ||
        !context.keys.has(keyOf(event.input.owner.name, event.idempotencyKey))) &&
      (context.active.size < context.maxRunning || context.waiting.length < context.maxQueued),
    // A result being read outlives its retention: the read would end cut short otherwise.
    isBeingRead: ({ context, event }) => {
      const entry = "queryId" in event ? context.queries.get(event.queryId) : undefined;
      return entry !== undefined && entry.ref.getSnapshot().context.store.reading;
    },
    isFinished: ({ context, event }) => {
      const entry = "queryId" in event ? context.queries.get(event.queryId) : undefined;
      return entry !== undefined && isFinished(topState(entry.ref.getSnapshot().value));
    },
  },
  actions: {
    admit: ({ context, event, self }) => {
      if (event.type !== "SUBMIT") return;
      const { queryId } = event.input;
      const ref = createActor(context.queryLogic ?? queryMachine, {
        id: queryId,
        // An absent clock must not be passed as `clock: undefined`, which replaces XState's own.
        ...(context.clock ? { clock: context.clock } : {}),
        ...(context.inspect ? { inspect: context.inspect } : {}),
        input: {
          ...event.input,
          retentionMs: context.retentionMs,
          now: context.now,
          log: context.log,
          supervisor: self,
        },
      });
      // Also keeps the error from being reported as unhandled, which would end the process.
      ref.subscribe({ error: (error) => self.send({ type: "QUERY.CRASHED", queryId, error }) });
      const owner = event.input.owner.name;
      const key = event.idempotencyKey === undefined
        ? undefined
        : keyOf(owner, event.idempotencyKey);
      queriesOf(context).set(queryId, { ref, owner, key, note: event.note });
      if (key !== undefined) keysOf(context).set(key, queryId);
      waitingOf(context).push(queryId);
      ref.start();
      ref.send({ type: "ACCEPT" });
    },
    schedule: enqueueActions(({ context, enqueue }) => {
      const waiting = waitingOf(context);
      const active = activeOf(context);
      const { gate } = context;
      for (let i = 0; active.size < context.maxRunning && i < waiting.length;) {
        const id = waiting[i]!;
        // Not yet let through by the gate: it keeps its place, later ones may go.
        if (gate && !gate.mayRun(id)) {
          i++;
          continue;
        }
        if (i === 0) waiting.shift();
        else waiting.splice(i, 1);
        const entry = context.queries.get(id);
        if (!entry) continue;
        active.add(id);
        enqueue.sendTo(entry.ref, { type: "SCHEDULE" });
      }
    }),
    release: ({ context, event }) => {
      if (!("queryId" in event)) return;
      activeOf(context).delete(event.queryId);
      removeWaiting(context, event.queryId);
    },
    forward: ({ context, event }) => {
      const ref = "queryId" in event ? context.queries.get(event.queryId)?.ref : undefined;
      if (event.type === "CANCEL" || event.type === "TOUCH") ref?.send({ type: event.type });
      else if (event.type === "FAIL") ref?.send({ type: "FAIL", error: event.error });
    },
    retain: ({ context, event }) => {
      if (!("queryId" in event)) return;
      context.queries.get(event.queryId)?.ref.send({ type: "TOUCH" });
    },
    drop: enqueueActions(({ context, event, enqueue }) => {
      if (!("queryId" in event)) return;
      const { queryId } = event;
      const entry = context.queries.get(queryId);
      if (!entry) return;
      const { store } = entry.ref.getSnapshot().context;
      const { log } = context;
      enqueue(() => {
        store.drop().catch((e) => log.error(`could not remove the result of ${queryId}`, e));
      });
      enqueue(() => stopQuery(entry.ref));
      queriesOf(context).delete(queryId);
      if (entry.key !== undefined) keysOf(context).delete(entry.key);
      // Forgets ids past their memory too, so it stays bounded without a timer per id.
      context.expired.remember(queryId, entry.owner, context.now());
      activeOf(context).delete(queryId);
      removeWaiting(context, queryId);
    }),
    count: ({ context, event }) => {
      if (event.type !== "QUERY.FINISHED" || !context.metrics) return;
      const ref = context.queries.get(event.queryId)?.ref;
      if (!ref) return;
      const { context: query, value } = ref.getSnapshot();
      const stats = statsOf(query, context.now());
      context.metrics.finished({
        state: topState(value) as FinishedState,
        elapsedMillis: stats.elapsedMillis,
        bytesRead: stats.bytesRead,
        recordsRead: stats.recordsRead,
        spilled: query.store.spilled,
      });
    },
    keepStatus: ({ context, event }) => {
      if (event.type !== "ANSWERED") return;
      const entry = context.queries.get(event.queryId);
      if (!entry) return;
      context.answered.remember(event.queryId, entry.owner, event.status, context.now());
    },
    forgetAnswered: ({ context, event }) => {
      if (event.type === "FREE") context.answered.forget(event.queryId);
    },
    logCrash: ({ context, event }) => {
      if (event.type !== "QUERY.CRASHED") return;
      context.log.error(`query ${event.queryId} stopped through an internal error`, event.error);
    },
  },
}).createMachine({
  id: "supervisor",
  context: ({ input }) => ({
    ...input,
    queries: new Map(),
    waiting: [],
    active: new Set(),
    expired: new ExpiredIds(input.expiredMemoryMs),
    keys: new Map(),
    answered: new AnsweredQueries(input.retentionMs),
  }),
  initial: "supervising",
  states: {
    supervising: {
      // Stops the queries still held when the supervisor stops (their retention timers would
      // keep the process alive).
      invoke: {
        id: "owner",
        src: "owner",
        input: ({ context }) => ({ queries: context.queries }),
      },
      on: {
        SUBMIT: { guard: "canAdmit", actions: ["admit", "schedule"] },
        CANCEL: { actions: "forward" },
        FAIL: { actions: "forward" },
        TOUCH: { actions: "forward" },
        SLOTS: { actions: "schedule" },
        FREE: [
          { guard: "isFinished", actions: ["drop", "schedule"] },
          { actions: "forgetAnswered" },
        ],
        ANSWERED: { guard: "isFinished", actions: ["keepStatus", "drop", "schedule"] },
        "QUERY.FINISHED": { actions: ["count", "release", "schedule"] },
        "QUERY.EXPIRED": [
          { guard: "isBeingRead", actions: "retain" },
          { actions: ["drop", "schedule"] },
        ],
        "QUERY.CRASHED": { actions: ["logCrash", "drop", "schedule"] },
      },
    },
  },
});

export type SupervisorRef = ActorRefFrom<typeof supervisorMachine>;

export type Lookup =
  | { readonly kind: "found"; readonly ref: QueryRef; readonly owner: string }
  /** A synchronous query already answered: only its status is kept. */
  | { readonly kind: "answered"; readonly status: unknown; readonly owner: string }
  | { readonly kind: "expired" }
  | { readonly kind: "unknown" };

/**
 * What an id means to `user`: their query, one that expired (410), or nothing (404, also for
 * another user's id, so that ids of others cannot be probed). An admin may see, read and cancel
 * every user's query (README: admins may do everything; `GET /queries` lists them everyone's).
 */
export function lookupQuery(supervisor: SupervisorRef, queryId: string, user: User): Lookup {
  const { context } = supervisor.getSnapshot();
  const mayUse = (owner: string | undefined) =>
    owner !== undefined && (owner === user.name || user.admin);
  const entry = context.queries.get(queryId);
  if (entry) {
    return mayUse(entry.owner) ? { kind: "found", ref: entry.ref, owner: entry.owner } : unknown;
  }
  const answered = context.answered.get(queryId, context.now());
  if (answered) {
    return mayUse(answered.owner)
      ? { kind: "answered", status: answered.status, owner: answered.owner }
      : unknown;
  }
  return mayUse(context.expired.ownerOf(queryId, context.now())) ? { kind: "expired" } : unknown;
}

/** The actor of a query the supervisor holds, whoever owns it. */
export function queryRef(supervisor: SupervisorRef, queryId: string): QueryRef | undefined {
  return supervisor.getSnapshot().context.queries.get(queryId)?.ref;
}

/**
 * The query `user` already submitted with this Idempotency-Key and the supervisor still holds
 * (its id and actor), or undefined.
 */
export function idempotentQuery(
  supervisor: SupervisorRef,
  user: User,
  idempotencyKey: string,
): { readonly queryId: string; readonly ref: QueryRef } | undefined {
  const { context } = supervisor.getSnapshot();
  const queryId = context.keys.get(keyOf(user.name, idempotencyKey));
  const ref = queryId === undefined ? undefined : context.queries.get(queryId)?.ref;
  return queryId !== undefined && ref ? { queryId, ref } : undefined;
}

/**
 * Stops a query's actor and its engine: the engine is no child actor of the query (it is
 * started by an entry action, query_machine.ts), so stopping the actor alone would leave a
 * running engine going (a finished query's engine was told to stop already).
 */
function stopQuery(ref: QueryRef): void {
  const { abort } = ref.getSnapshot().context;
  // One reason for all: a DOMException made per stop (its stack captured) cost 2.5% of a query.
  if (abort && !abort.signal.aborted) abort.abort(STOPPED);
  ref.stop();
}

const STOPPED = new DOMException("the query was stopped", "AbortError");

function keyOf(owner: string, idempotencyKey: string): string {
  return `${owner}\n${idempotencyKey}`;
}

/** The Idempotency-Keys, which the actions update in place (see SupervisorContext). */
function keysOf(context: SupervisorContext): Map<string, string> {
  return context.keys as Map<string, string>;
}

/** The context's query map, which the actions update in place (see SupervisorContext). */
function queriesOf(context: SupervisorContext): Map<string, Entry> {
  return context.queries as Map<string, Entry>;
}

/** The waiting ids, which the actions update in place (see SupervisorContext). */
function waitingOf(context: SupervisorContext): string[] {
  return context.waiting as string[];
}

/** The ids holding a slot, which the actions update in place (see SupervisorContext). */
function activeOf(context: SupervisorContext): Set<string> {
  return context.active as Set<string>;
}

function removeWaiting(context: SupervisorContext, queryId: string): void {
  const waiting = waitingOf(context);
  const at = waiting.indexOf(queryId);
  if (at >= 0) waiting.splice(at, 1);
}

const unknown: Lookup = { kind: "unknown" };

/** Starts the supervisor with the limits of the settings (`query.*`). */
export function startSupervisor(
  limits: SupervisorLimits,
  options: {
    readonly log: Logger;
    readonly now?: () => number;
    /** Every actor (the supervisor and its queries) reports to it: Stately's inspector. */
    readonly inspect?: SupervisorInput["inspect"];
    readonly metrics?: QueryMetrics;
    readonly gate?: SupervisorInput["gate"];
    /** The queries' delays (retention, stop grace): tests give a SimulatedClock. */
    readonly clock?: SupervisorInput["clock"];
  },
): SupervisorRef {
  const { inspect } = options;
  const actor = createActor(supervisorMachine, {
    input: {
      ...limits,
      log: options.log,
      now: options.now ?? Date.now,
      inspect,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.gate ? { gate: options.gate } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    },
    ...(inspect ? { inspect } : {}),
  });
  actor.start();
  return actor;
}

/** Ids kept across a restart at most: the newest, about 8 MB of JSON. */
export const REMEMBERED_IDS = 100_000;

/**
 * The ids a restart would otherwise forget, oldest first, at most `limit` (the newest): those
 * already expired, and the queries held now (running, finished, answered), whose results go with
 * the process. A server writes them when it stops and remembers them as expired when it starts
 * again, so that an id polled across a restart answers 410, not 404 (API.md: for at least
 * `query.expiredMemory`).
 */
export function idsToRemember(
  supervisor: SupervisorRef,
  limit = REMEMBERED_IDS,
): (readonly [string, string, number])[] {
  const { context } = supervisor.getSnapshot();
  const now = context.now();
  const out = [...context.expired.entries(), ...context.answered.entries()]
    .filter(([, , at]) => now - at <= context.expired.memoryMs);
  for (const [id, entry] of context.queries) out.push([id, entry.owner, now]);
  out.sort((a, b) => a[2] - b[2]);
  return out.slice(-limit);
}

/** Remembers ids written by idsToRemember as expired (those past the memory are not); how many. */
export function rememberIds(
  supervisor: SupervisorRef,
  ids: readonly (readonly [string, string, number])[],
): number {
  const { context } = supervisor.getSnapshot();
  const now = context.now();
  let n = 0;
  for (const [id, owner, at] of ids) {
    if (now - at > context.expired.memoryMs || context.queries.has(id)) continue;
    context.expired.remember(id, owner, at);
    n++;
  }
  return n;
}
