/**
 * The supervisor owns every query actor. It admits queries (at most `maxRunning` scheduled or
 * running, at most `maxQueued` waiting; past that a SUBMIT is refused and the route answers
 * 429), schedules waiting ones as slots free, forwards CANCEL and TOUCH, and drops a query when
 * its retention runs out or a finished one is freed: its result goes, and its id is remembered
 * as expired for `expiredMemoryMs` so that it answers 410 rather than 404.
 *
 * Each query actor is a child of the supervisor under the query's id, from its SUBMIT
 * (`spawnChild`) until it is dropped (`stopChild`); stopping the supervisor stops them all. A
 * query actor that fails through a bug is logged and dropped, so that the error does not stop
 * the supervisor with every other query. XState copies the snapshot's children on every spawn
 * and stop, so admitting and dropping a query costs O(queries held).
 */

import {
  type ActorRefFrom,
  createActor,
  enqueueActions,
  type ErrorActorEvent,
  setup,
} from "xstate";
import type { User } from "../engine/user.ts";
import type { Logger } from "../home/log.ts";
import { type QueryInput, queryMachine, type QueryReport } from "./query_machine.ts";
import type { ResultStore } from "./result_store.ts";
import { ExpiredIds } from "./expired_ids.ts";

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
}

export type QueryRef = ActorRefFrom<typeof queryMachine>;

/** What the supervisor keeps of a query it holds, besides its actor. */
interface Entry {
  readonly owner: string;
  readonly store: ResultStore;
  /** Set when the query reported QUERY.FINISHED (updated in place). */
  finished: boolean;
}

/**
 * The queries held, by id. Their actors are the supervisor's children under the same ids
 * (`queryRef`): spawned in `admit`, stopped in `drop`, and stopped with the supervisor.
 *
 * `queries`, `waiting`, `active` and `expired` are held by reference and updated in place by
 * the actions: copying them per event made every request cost O(queries held), and the expired
 * ids number one per query answered in the last 24 hours. No action is an `assign`, which
 * spares a copy of the context per action.
 */
export interface SupervisorContext extends SupervisorInput {
  readonly queries: ReadonlyMap<string, Readonly<Entry>>;
  /** Accepted queries waiting for a slot, oldest first (updated in place, as `queries`). */
  readonly waiting: readonly string[];
  /** Queries holding a slot, SCHEDULED or RUNNING (updated in place, as `queries`). */
  readonly active: ReadonlySet<string>;
  readonly expired: ExpiredIds;
}

export type SupervisorEvent =
  | {
    readonly type: "SUBMIT";
    readonly input: Omit<QueryInput, "retentionMs" | "now" | "log" | "supervisor">;
  }
  | { readonly type: "CANCEL"; readonly queryId: string }
  | { readonly type: "TOUCH"; readonly queryId: string }
  /** Drops a finished query at once (DELETE on a finished query, or a sync query answered). */
  | { readonly type: "FREE"; readonly queryId: string }
  | QueryReport
  /** A query actor failed through a bug (an action threw): it has stopped. */
  | ErrorActorEvent;

export const supervisorMachine = setup({
  types: {
    context: {} as SupervisorContext,
    events: {} as SupervisorEvent,
    input: {} as SupervisorInput,
  },
  actors: { query: queryMachine },
  guards: {
    // A known id is refused too: spawning it again would leave the first actor running unheld.
    canAdmit: ({ context, event }) =>
      event.type === "SUBMIT" && !context.queries.has(event.input.queryId) &&
      (context.active.size < context.maxRunning || context.waiting.length < context.maxQueued),
    // The query's report comes before anyone outside sees its finished state: XState runs
    // the actions of a step before it notifies the actor's subscribers.
    isFinished: ({ context, event }) =>
      "queryId" in event && context.queries.get(event.queryId)?.finished === true,
  },
  actions: {
    // The query starts once this step is over, then takes ACCEPT (and SCHEDULE, when a slot
    // is free) in order.
    admit: enqueueActions(({ context, event, enqueue, self }) => {
      if (event.type !== "SUBMIT") return;
      const { queryId } = event.input;
      enqueue.spawnChild("query", {
        id: queryId,
        input: {
          ...event.input,
          retentionMs: context.retentionMs,
          now: context.now,
          log: context.log,
          supervisor: self,
        },
      });
      enqueue.sendTo(queryId, { type: "ACCEPT" });
      queriesOf(context).set(queryId, {
        owner: event.input.owner.name,
        store: event.input.store,
        finished: false,
      });
      waitingOf(context).push(queryId);
    }),
    schedule: enqueueActions(({ context, enqueue }) => {
      const waiting = waitingOf(context);
      const active = activeOf(context);
      while (active.size < context.maxRunning && waiting.length > 0) {
        const id = waiting.shift()!;
        if (!context.queries.has(id)) continue;
        active.add(id);
        enqueue.sendTo(id, { type: "SCHEDULE" });
      }
    }),
    release: ({ context, event }) => {
      if (event.type !== "QUERY.FINISHED") return;
      const entry = queriesOf(context).get(event.queryId);
      if (entry) entry.finished = true;
      activeOf(context).delete(event.queryId);
      removeWaiting(context, event.queryId);
    },
    forward: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "CANCEL" && event.type !== "TOUCH") return;
      if (context.queries.has(event.queryId)) enqueue.sendTo(event.queryId, { type: event.type });
    }),
    drop: enqueueActions(({ context, event, enqueue }) => {
      const queryId = "queryId" in event ? event.queryId : "actorId" in event ? event.actorId : "";
      const entry = context.queries.get(queryId);
      if (!entry) return;
      const { log } = context;
      enqueue(() => {
        entry.store.drop().catch((e) => log.error(`could not remove the result of ${queryId}`, e));
      });
      enqueue.stopChild(queryId);
      queriesOf(context).delete(queryId);
      // Forgets ids past their memory too, so it stays bounded without a timer per id.
      context.expired.remember(queryId, entry.owner, context.now());
      activeOf(context).delete(queryId);
      removeWaiting(context, queryId);
    }),
    logCrash: ({ context, event }) => {
      if (!("actorId" in event)) return;
      context.log.error(`query ${event.actorId} stopped through an internal error`, event.error);
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
  }),
  initial: "supervising",
  states: {
    supervising: {
      on: {
        SUBMIT: { guard: "canAdmit", actions: ["admit", "schedule"] },
        CANCEL: { actions: "forward" },
        TOUCH: { actions: "forward" },
        FREE: { guard: "isFinished", actions: ["drop", "schedule"] },
        "QUERY.FINISHED": { actions: ["release", "schedule"] },
        "QUERY.EXPIRED": { actions: ["drop", "schedule"] },
        // Unhandled, it would stop the supervisor and every query with it.
        "xstate.error.actor.*": { actions: ["logCrash", "drop", "schedule"] },
      },
    },
  },
});

export type SupervisorRef = ActorRefFrom<typeof supervisorMachine>;

export type Lookup =
  | { readonly kind: "found"; readonly ref: QueryRef }
  | { readonly kind: "expired" }
  | { readonly kind: "unknown" };

/**
 * What an id means to `user`: their query, one that expired (410), or nothing (404, also for
 * another user's id, so that ids of others cannot be probed).
 */
export function lookupQuery(supervisor: SupervisorRef, queryId: string, user: User): Lookup {
  const snapshot = supervisor.getSnapshot();
  const { context } = snapshot;
  const entry = context.queries.get(queryId);
  const ref = childOf(snapshot, queryId);
  if (entry && ref) return entry.owner === user.name ? { kind: "found", ref } : unknown;
  return context.expired.ownerOf(queryId, context.now()) === user.name
    ? { kind: "expired" }
    : unknown;
}

/** The actor of a query the supervisor holds, whoever owns it. */
export function queryRef(supervisor: SupervisorRef, queryId: string): QueryRef | undefined {
  return childOf(supervisor.getSnapshot(), queryId);
}

/** The child of that id: every child of the supervisor is a query actor. */
function childOf(
  snapshot: { readonly children: Readonly<Record<string, unknown>> },
  queryId: string,
): QueryRef | undefined {
  return Object.hasOwn(snapshot.children, queryId)
    ? snapshot.children[queryId] as QueryRef | undefined
    : undefined;
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

/** Seconds a refused client should wait: a guess from the retention-free part, at least 1. */
export const RETRY_AFTER_SECONDS = 1;

/** Starts the supervisor with the limits of the settings (`query.*`). */
export function startSupervisor(
  limits: SupervisorLimits,
  options: { readonly log: Logger; readonly now?: () => number },
): SupervisorRef {
  const actor = createActor(supervisorMachine, {
    input: { ...limits, log: options.log, now: options.now ?? Date.now },
  });
  actor.start();
  return actor;
}
