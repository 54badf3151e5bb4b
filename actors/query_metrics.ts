/**
 * What the server counts for `/metrics` about queries: a duration histogram and totals added
 * once per finished query (from its stats), so the engine's hot path pays nothing for them.
 * Gauges (queries by state, retained queries and their bytes) are read from the supervisor when
 * scraped. Built in main.ts and handed to the supervisor.
 */

import type { FinishedState } from "./query_machine.ts";

/** Upper bounds of the duration histogram's buckets, seconds. */
export const DURATION_BUCKETS: readonly number[] = [
  0.005,
  0.01,
  0.05,
  0.1,
  0.5,
  1,
  5,
  10,
  30,
  60,
  300,
];

export interface FinishedQuery {
  readonly state: FinishedState;
  /** From SCHEDULED to the finished state, milliseconds. */
  readonly elapsedMillis: number;
  readonly bytesRead: number;
  readonly recordsRead: number;
  readonly spilled: boolean;
}

export class QueryMetrics {
  /** Count per bucket of DURATION_BUCKETS (not cumulative), then the +Inf bucket. */
  readonly #buckets = new Array<number>(DURATION_BUCKETS.length + 1).fill(0);
  #durationSum = 0;
  #finished: Record<FinishedState, number> = { SUCCEEDED: 0, FAILED: 0, CANCELLED: 0 };
  #bytesRead = 0;
  #recordsRead = 0;
  #spilled = 0;

  finished(query: FinishedQuery): void {
    const seconds = query.elapsedMillis / 1000;
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
    this.#buckets[i]!++;
    this.#durationSum += seconds;
    this.#finished[query.state]++;
    this.#bytesRead += query.bytesRead;
    this.#recordsRead += query.recordsRead;
    if (query.spilled) this.#spilled++;
  }

  /** The counters as they are now. */
  snapshot() {
    let cumulative = 0;
    const buckets = this.#buckets.map((n, i) => {
      cumulative += n;
      return {
        le: i < DURATION_BUCKETS.length ? DURATION_BUCKETS[i] : Infinity,
        count: cumulative,
      };
    });
    return {
      buckets,
      durationSum: this.#durationSum,
      durationCount: cumulative,
      finished: { ...this.#finished },
      bytesRead: this.#bytesRead,
      recordsRead: this.#recordsRead,
      spilled: this.#spilled,
    };
  }
}
