/**
 * What the supervisor holds, counted when asked (`/metrics` gauges, `GET /machines`): the routes
 * read these numbers, never the supervisor's snapshot.
 */

import { type QueryState, topState } from "./query_machine.ts";
import type { SupervisorRef } from "./supervisor.ts";

/** The queries the supervisor holds now: how many in each state, and their results' bytes. */
export function heldQueries(
  supervisor: SupervisorRef,
): {
  readonly byState: ReadonlyMap<QueryState, number>;
  readonly held: number;
  readonly resultBytes: number;
} {
  const byState = new Map<QueryState, number>();
  let resultBytes = 0;
  const { queries } = supervisor.getSnapshot().context;
  for (const { ref } of queries.values()) {
    const snapshot = ref.getSnapshot();
    const state = topState(snapshot.value);
    byState.set(state, (byState.get(state) ?? 0) + 1);
    resultBytes += snapshot.context.store.bytes;
  }
  return { byState, held: queries.size, resultBytes };
}

/** The supervisor's live numbers (`GET /machines`). */
export function supervisorNumbers(supervisor: SupervisorRef) {
  const { value, context } = supervisor.getSnapshot();
  return {
    state: value,
    held: context.queries.size,
    waiting: context.waiting.length,
    active: context.active.size,
    maxRunning: context.maxRunning,
    maxQueued: context.maxQueued,
  };
}
