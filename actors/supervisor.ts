/**
 * The supervisor owns every query actor. It admits queries (at most `maxRunning` scheduled or
 * running, at most `maxQueued` waiting; past that a SUBMIT is refused and the route answers
 * 429), schedules waiting ones as slots free, forwards CANCEL and TOUCH, and drops a query when
 * its retention runs out or a finished one is freed: its result goes, and its id is remembered
 * as expired for `expiredMemoryMs` so that it answers 410 rather than 404.
 */

import {
  type ActorRefFrom,
  type AnyActorRef,
  type AnyMachineSnapshot,
  createActor,
  enqueueActions,
  type EventObject,
  fromCallback,
  setup,
  stopChild,
} from "xstate";
import type { User } from "../engine/user.ts";
import {
  isFinished,
  type QueryInput,
  queryMachine,
  type QueryReport,
  topState,
} from "./query_machine.ts";
import { ExpiredIds } from "./expired_ids.ts";

export interface SupervisorLimits {
  readonly maxRunning: number;
  readonly maxQueued: number;
  readonly retentionMs: number;
  readonly expiredMemoryMs: number;
}

export interface SupervisorInput extends SupervisorLimits {
  readonly now: () => number;
}

export type QueryRef = ActorRefFrom<typeof queryMachine>;

interface Entry {
  readonly ref: QueryRef;
  readonly owner: string;
}

/**
 * `queries`, `waiting`, `active` and `expired` are held by reference and updated in place by
 * the actions: copying them per event made every request cost O(queries held), and the expired
 * ids number one per query answered in the last 24 hours. No action is an `assign`, which
 * spares a copy of the context and the snapshot per action.
 */
export interface SupervisorContext extends SupervisorInput {
  readonly queries: ReadonlyMap<string, Entry>;
  /** Accepted queries waiting for a slot, oldest first (updated in place, as `queries`). */
  readonly waiting: readonly string[];
  /** Queries holding a slot, SCHEDULED or RUNNING (updated in place, as `queries`). */
  readonly active: ReadonlySet<string>;
  readonly expired: ExpiredIds;
}

export type SupervisorEvent =
  | {
    readonly type: "SUBMIT";
    readonly input: Omit<QueryInput, "retentionMs" | "now">;
  }
  | { readonly type: "CANCEL"; readonly queryId: string }
  | { readonly type: "TOUCH"; readonly queryId: string }
  /** Drops a finished query at once (DELETE on a finished query, or a sync query answered). */
  | { readonly type: "FREE"; readonly queryId: string }
  | QueryReport;

export const supervisorMachine = setup({
  types: {
    context: {} as SupervisorContext,
    events: {} as SupervisorEvent,
    input: {} as SupervisorInput,
  },
  actors: {
    query: queryMachine,
    owner: fromCallback<EventObject, { readonly queries: ReadonlyMap<string, Entry> }>(
      ({ input }) => () => {
        for (const { ref } of input.queries.values()) stopQuery(ref);
      },
    ),
  },
  guards: {
    hasRoom: ({ context }) =>
      context.active.size < context.maxRunning || context.waiting.length < context.maxQueued,
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
    // Not `spawn`: XState copies the snapshot's `children` object on every spawn and every
    // stop, which held every query kept for its retention, so that each SUBMIT and FREE cost
    // O(queries held) (some 10% of a trivial synchronous query's CPU with 32 in flight). The
    // query is made a child all the same, with the supervisor as its parent (sendParent, the
    // actor system and its clock), stopped with stopChild, and stopped with the supervisor by
    // the `owner` actor below.
    admit: ({ context, event, self }) => {
      if (event.type !== "SUBMIT") return;
      const { queryId } = event.input;
      const ref = createActor(queryLogicOf(self), {
        id: queryId,
        parent: self,
        input: { ...event.input, retentionMs: context.retentionMs, now: context.now },
      });
      queriesOf(context).set(queryId, { ref, owner: event.input.owner.name });
      waitingOf(context).push(queryId);
      ref.start();
    },
    accept: ({ context, event }) => {
      if (event.type !== "SUBMIT") return;
      context.queries.get(event.input.queryId)?.ref.send({ type: "ACCEPT" });
    },
    schedule: enqueueActions(({ context, enqueue }) => {
      const waiting = waitingOf(context);
      const active = activeOf(context);
      while (active.size < context.maxRunning && waiting.length > 0) {
        const id = waiting.shift()!;
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
      if (event.type !== "CANCEL" && event.type !== "TOUCH") return;
      context.queries.get(event.queryId)?.ref.send({ type: event.type });
    },
    retain: ({ context, event }) => {
      if (!("queryId" in event)) return;
      context.queries.get(event.queryId)?.ref.send({ type: "TOUCH" });
    },
    drop: enqueueActions(({ context, event, enqueue }) => {
      if (!("queryId" in event)) return;
      const entry = context.queries.get(event.queryId);
      if (!entry) return;
      const store = entry.ref.getSnapshot().context.store;
      enqueue(() => {
        store.drop().catch((e) => console.error("could not remove a spilled result:", e));
      });
      enqueue(stopChild(entry.ref));
      queriesOf(context).delete(event.queryId);
      // Forgets ids past their memory too, so it stays bounded without a timer per id.
      context.expired.remember(event.queryId, entry.owner, context.now());
      activeOf(context).delete(event.queryId);
      removeWaiting(context, event.queryId);
    }),
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
      // Stops the queries still held when the supervisor stops (their retention timers would
      // keep the process alive): they are not in the snapshot's children (see `admit`).
      invoke: {
        id: "owner",
        src: "owner",
        input: ({ context }) => ({ queries: context.queries }),
      },
      on: {
        SUBMIT: { guard: "hasRoom", actions: ["admit", "accept", "schedule"] },
        CANCEL: { actions: "forward" },
        TOUCH: { actions: "forward" },
        FREE: { guard: "isFinished", actions: ["drop", "schedule"] },
        "QUERY.FINISHED": { actions: ["release", "schedule"] },
        "QUERY.EXPIRED": [
          { guard: "isBeingRead", actions: "retain" },
          { actions: ["drop", "schedule"] },
        ],
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
  const { context } = supervisor.getSnapshot();
  const entry = context.queries.get(queryId);
  if (entry) return entry.owner === user.name ? { kind: "found", ref: entry.ref } : unknown;
  return context.expired.ownerOf(queryId, context.now()) === user.name
    ? { kind: "expired" }
    : unknown;
}

/**
 * The query logic the machine was given (`supervisorMachine.provide({ actors: { query } })` in
 * tests), as `spawn("query")` would resolve it.
 */
function queryLogicOf(self: AnyActorRef): typeof queryMachine {
  const machine = (self.getSnapshot() as AnyMachineSnapshot).machine;
  return (machine.implementations.actors.query ?? queryMachine) as typeof queryMachine;
}

/**
 * Stops a query whose supervisor is stopping. What XState's stopChild does: the public stop()
 * refuses actors with a parent, and stopChild is an action, which a stopping machine no
 * longer runs.
 */
function stopQuery(ref: QueryRef): void {
  (ref as unknown as { _stop(): void })._stop();
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
  now: () => number = Date.now,
): SupervisorRef {
  const actor = createActor(supervisorMachine, { input: { ...limits, now } });
  actor.start();
  return actor;
}
