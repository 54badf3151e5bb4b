/**
 * The supervisor owns every query actor. It admits queries (at most `maxRunning` scheduled or
 * running, at most `maxQueued` waiting; past that a SUBMIT is refused and the route answers
 * 429), schedules waiting ones as slots free, forwards CANCEL and TOUCH, and drops a query when
 * its retention runs out or a finished one is freed: its result goes, and its id is remembered
 * as expired for `expiredMemoryMs` so that it answers 410 rather than 404.
 */

import {
  type ActorRefFrom,
  assign,
  createActor,
  enqueueActions,
  sendTo,
  setup,
  stopChild,
} from "xstate";
import type { User } from "../engine/home/users.ts";
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
 * `queries` and `expired` are held by reference and updated in place by the actions: copying
 * them per event made every request cost O(queries held), and the expired ids number one per
 * query answered in the last 24 hours.
 */
export interface SupervisorContext extends SupervisorInput {
  readonly queries: ReadonlyMap<string, Entry>;
  /** Accepted queries waiting for a slot, oldest first. */
  readonly waiting: readonly string[];
  /** Queries holding a slot (SCHEDULED or RUNNING). */
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
  actors: { query: queryMachine },
  guards: {
    hasRoom: ({ context }) =>
      context.active.size < context.maxRunning || context.waiting.length < context.maxQueued,
    isFinished: ({ context, event }) => {
      const entry = "queryId" in event ? context.queries.get(event.queryId) : undefined;
      return entry !== undefined && isFinished(topState(entry.ref.getSnapshot().value));
    },
  },
  actions: {
    admit: assign(({ context, event, spawn }) => {
      if (event.type !== "SUBMIT") return {};
      const { queryId } = event.input;
      const ref = spawn("query", {
        id: queryId,
        input: { ...event.input, retentionMs: context.retentionMs, now: context.now },
      }) as QueryRef;
      queriesOf(context).set(queryId, { ref, owner: event.input.owner.name });
      return { waiting: [...context.waiting, queryId] };
    }),
    accept: sendTo(
      ({ context, event }) =>
        context.queries.get(event.type === "SUBMIT" ? event.input.queryId : "")!.ref,
      { type: "ACCEPT" },
    ),
    schedule: enqueueActions(({ context, enqueue }) => {
      if (context.active.size >= context.maxRunning || context.waiting.length === 0) return;
      const waiting = [...context.waiting];
      const active = new Set(context.active);
      while (active.size < context.maxRunning && waiting.length > 0) {
        const id = waiting.shift()!;
        const entry = context.queries.get(id);
        if (!entry) continue;
        active.add(id);
        enqueue.sendTo(entry.ref, { type: "SCHEDULE" });
      }
      enqueue.assign({ waiting, active });
    }),
    release: assign(({ context, event }) => {
      if (!("queryId" in event)) return {};
      const active = new Set(context.active);
      active.delete(event.queryId);
      return { active, waiting: context.waiting.filter((id) => id !== event.queryId) };
    }),
    forward: ({ context, event }) => {
      if (event.type !== "CANCEL" && event.type !== "TOUCH") return;
      context.queries.get(event.queryId)?.ref.send({ type: event.type });
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
      let { active, waiting } = context;
      if (active.has(event.queryId)) {
        const rest = new Set(active);
        rest.delete(event.queryId);
        active = rest;
      }
      if (waiting.includes(event.queryId)) waiting = waiting.filter((id) => id !== event.queryId);
      enqueue.assign({ active, waiting });
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
      on: {
        SUBMIT: { guard: "hasRoom", actions: ["admit", "accept", "schedule"] },
        CANCEL: { actions: "forward" },
        TOUCH: { actions: "forward" },
        FREE: { guard: "isFinished", actions: ["drop", "schedule"] },
        "QUERY.FINISHED": { actions: ["release", "schedule"] },
        "QUERY.EXPIRED": { actions: ["drop", "schedule"] },
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

/** The context's query map, which the actions update in place (see SupervisorContext). */
function queriesOf(context: SupervisorContext): Map<string, Entry> {
  return context.queries as Map<string, Entry>;
}

const unknown: Lookup = { kind: "unknown" };

/** Seconds a refused client should wait: a guess from the retention-free part, at least 1. */
export const RETRY_AFTER_SECONDS = 1;

/** Starts the supervisor with the limits of the settings (`query.*`). */
export function startSupervisor(
  limits: SupervisorLimits,
  now: () => number = Date.now,
): SupervisorRef {
  const actor = createActor(supervisorMachine, { input: { ...limits, now } });
  actor.start();
  return actor;
}
