/**
 * The connector actor: one per (tenant, API family). It owns the token bucket that paces the
 * family's requests: each request asks for a token and waits; a token spent comes back one
 * time unit later, so no window of that length ever sees more than `limit` requests (a burst
 * the provider would answer with 429 cannot happen). A throttling answer pauses the bucket for
 * Retry-After.
 */

import { assign, setup } from "xstate";

export interface BucketLimit {
  readonly limit: number;
  readonly unitMs: number;
}

interface Waiter {
  readonly id: number;
  readonly grant: () => void;
}

export interface ConnectorContext {
  readonly limit: number;
  readonly unitMs: number;
  /** Margin added to the unit, so that network jitter cannot push two windows together. */
  readonly marginMs: number;
  /** Times tokens were spent, oldest first; at most `limit` of them matter. */
  readonly spent: readonly number[];
  readonly queue: readonly Waiter[];
  readonly pausedUntil: number;
  readonly now: () => number;
  /** Waiters granted by the last step, notified by the `notify` action. */
  readonly granted: readonly Waiter[];
}

export type ConnectorEvent =
  | { type: "ACQUIRE"; id: number; grant: () => void }
  | { type: "CANCEL"; id: number }
  | { type: "THROTTLED"; pauseMs: number }
  | { type: "SET_LIMIT"; limit: number; unitMs: number };

export interface ConnectorInput extends BucketLimit {
  readonly now: () => number;
}

/** Grants queued waiters while tokens are free. */
function step(ctx: ConnectorContext): Partial<ConnectorContext> {
  const now = ctx.now();
  const window = ctx.unitMs + ctx.marginMs;
  const spent = ctx.spent.filter((t) => t > now - window);
  const queue = [...ctx.queue];
  const granted: Waiter[] = [];
  while (queue.length > 0 && spent.length < ctx.limit && now >= ctx.pausedUntil) {
    granted.push(queue.shift()!);
    spent.push(now);
  }
  return { spent, queue, granted };
}

/** How long until the next token comes back (or the pause ends). */
function untilNextToken(ctx: ConnectorContext): number {
  const now = ctx.now();
  if (now < ctx.pausedUntil) return ctx.pausedUntil - now;
  const window = ctx.unitMs + ctx.marginMs;
  const live = ctx.spent.filter((t) => t > now - window);
  if (live.length < ctx.limit) return 0;
  return Math.max(1, live[live.length - ctx.limit] + window - now);
}

export const connectorMachine = setup({
  types: {
    context: {} as ConnectorContext,
    events: {} as ConnectorEvent,
    input: {} as ConnectorInput,
  },
  actions: {
    enqueue: assign({
      queue: ({ context, event }) =>
        event.type === "ACQUIRE"
          ? [...context.queue, { id: event.id, grant: event.grant }]
          : context.queue,
    }),
    cancel: assign({
      queue: ({ context, event }) =>
        event.type === "CANCEL" ? context.queue.filter((w) => w.id !== event.id) : context.queue,
    }),
    grantFree: assign(({ context }) => step(context)),
    notify: ({ context }) => {
      for (const w of context.granted) w.grant();
    },
    pause: assign({
      pausedUntil: ({ context, event }) =>
        event.type === "THROTTLED"
          ? Math.max(context.pausedUntil, context.now() + event.pauseMs)
          : context.pausedUntil,
    }),
    setLimit: assign(({ context, event }) =>
      event.type === "SET_LIMIT"
        ? { limit: event.limit, unitMs: event.unitMs, marginMs: margin(event.unitMs) }
        : context
    ),
  },
  guards: {
    hasWaiters: ({ context }) => context.queue.length > 0,
  },
  delays: {
    nextToken: ({ context }) => untilNextToken(context),
  },
}).createMachine({
  id: "connector",
  context: ({ input }) => ({
    limit: input.limit,
    unitMs: input.unitMs,
    marginMs: margin(input.unitMs),
    spent: [],
    queue: [],
    granted: [],
    pausedUntil: 0,
    now: input.now,
  }),
  initial: "pacing",
  on: {
    CANCEL: { actions: "cancel" },
    SET_LIMIT: { target: ".pacing", reenter: true, actions: "setLimit" },
  },
  states: {
    pacing: {
      entry: ["grantFree", "notify"],
      on: {
        ACQUIRE: { target: "pacing", reenter: true, actions: "enqueue" },
        THROTTLED: { target: "paused", actions: "pause" },
      },
      after: {
        nextToken: { guard: "hasWaiters", target: "pacing", reenter: true },
      },
    },
    paused: {
      on: {
        ACQUIRE: { actions: "enqueue" },
        THROTTLED: { target: "paused", reenter: true, actions: "pause" },
      },
      after: {
        nextToken: { target: "pacing" },
      },
    },
  },
});

/** 2% of the unit, at most 250 ms: keeps the achieved rate at or above 98% of the limit. */
function margin(unitMs: number): number {
  return Math.min(250, Math.ceil(unitMs * 0.02));
}
