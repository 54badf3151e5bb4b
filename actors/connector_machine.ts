/**
 * The connector actor: one per (tenant, API family). It owns the token bucket that paces the
 * family's requests: each request asks for a token and waits; a token spent comes back one
 * time unit after its request completed (a tracked token, as the pool's are; an untracked one
 * one unit after it was granted). The provider counts requests when they arrive, which is
 * after they were sent and before they complete, so no window of its sees more than `limit` of
 * them, however late the network delivers one: a burst it would answer with 429 cannot happen.
 * A throttling answer pauses the bucket for Retry-After.
 */

import { assign, setup } from "xstate";
import type { BucketLimit } from "../connectors/cloudapi/pacer.ts";

interface Waiter {
  readonly id: number;
  readonly grant: () => void;
  /** The token stays spent until RELEASE says its request completed. */
  readonly tracked?: boolean | undefined;
}

/** A spent token: when it was granted, or when its request completed; in flight until then. */
interface Token {
  readonly id: number;
  readonly at: number;
  readonly inFlight: boolean;
}

export interface ConnectorContext {
  readonly limit: number;
  readonly unitMs: number;
  /** Margin added to the unit, so that network jitter cannot push two windows together. */
  readonly marginMs: number;
  /** Tokens spent and not yet back, in the order they were granted. */
  readonly spent: readonly Token[];
  readonly queue: readonly Waiter[];
  readonly pausedUntil: number;
  readonly now: () => number;
  /** Waiters granted by the last step, notified by the `notify` action. */
  readonly granted: readonly Waiter[];
}

export type ConnectorEvent =
  | { type: "ACQUIRE"; id: number; grant: () => void; tracked?: boolean }
  | { type: "RELEASE"; id: number }
  | { type: "CANCEL"; id: number }
  | { type: "THROTTLED"; pauseMs: number }
  | { type: "SET_LIMIT"; limit: number; unitMs: number };

export interface ConnectorInput extends BucketLimit {
  readonly now: () => number;
}

/** The tokens not yet back: in flight, or spent within the last window. */
function live(ctx: ConnectorContext, now: number): Token[] {
  const window = ctx.unitMs + ctx.marginMs;
  return ctx.spent.filter((t) => t.inFlight || t.at > now - window);
}

/** Grants queued waiters while tokens are free. */
function step(ctx: ConnectorContext): Partial<ConnectorContext> {
  const now = ctx.now();
  const spent = live(ctx, now);
  const queue = [...ctx.queue];
  const granted: Waiter[] = [];
  while (queue.length > 0 && spent.length < ctx.limit && now >= ctx.pausedUntil) {
    const w = queue.shift()!;
    granted.push(w);
    spent.push({ id: w.id, at: now, inFlight: w.tracked === true });
  }
  return { spent, queue, granted };
}

/** How long until the next token comes back (or the pause ends). */
function untilNextToken(ctx: ConnectorContext): number {
  const now = ctx.now();
  if (now < ctx.pausedUntil) return ctx.pausedUntil - now;
  const window = ctx.unitMs + ctx.marginMs;
  const back = live(ctx, now);
  if (back.length < ctx.limit) return 0;
  // The (n - limit + 1)-th token to come back frees a place; in-flight ones come back last,
  // and their RELEASE wakes the bucket by itself.
  const returns = back.map((t) => t.inFlight ? Infinity : t.at + window).sort((a, b) => a - b);
  const next = returns[back.length - ctx.limit]!;
  return next === Infinity ? ctx.unitMs : Math.max(1, next - now);
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
          ? [...context.queue, { id: event.id, grant: event.grant, tracked: event.tracked }]
          : context.queue,
    }),
    cancel: assign({
      queue: ({ context, event }) =>
        event.type === "CANCEL" ? context.queue.filter((w) => w.id !== event.id) : context.queue,
    }),
    release: assign({
      spent: ({ context, event }) =>
        event.type === "RELEASE"
          ? context.spent.map((t) =>
            t.id === event.id ? { id: t.id, at: context.now(), inFlight: false } : t
          )
          : context.spent,
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
    RELEASE: { actions: "release" },
    SET_LIMIT: { target: ".pacing", reenter: true, actions: "setLimit" },
  },
  states: {
    pacing: {
      entry: ["grantFree", "notify"],
      on: {
        ACQUIRE: { target: "pacing", reenter: true, actions: "enqueue" },
        RELEASE: { target: "pacing", reenter: true, actions: "release" },
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
export function margin(unitMs: number): number {
  return Math.min(250, Math.ceil(unitMs * 0.02));
}
