/**
 * When a stored hour is fetched (again), as the specification says: when never fetched, or when
 * its last fetch lies within the availability lag of the hour's end AND the time since that
 * fetch exceeds the update frequency. An hour fetched after its lag had passed is final.
 */

import type { HourState } from "./hour_store.ts";
import type { LogSpec } from "./log_list.ts";

export const HOUR_MS = 3_600_000;

/** Should `hour` (its start, epoch ms) of `log` be fetched at `now`? */
export function needsFetch(
  log: Pick<LogSpec, "lagMs" | "updateMs">,
  hour: number,
  state: HourState | undefined,
  now: number,
): boolean {
  if (!state) return true;
  const hourEnd = hour + HOUR_MS;
  const withinLag = state.fetchedAt < hourEnd + log.lagMs;
  return withinLag && now - state.fetchedAt > log.updateMs;
}
