/**
 * The rate a tenant's provider budget is paced at, adapted to the provider's answers: additive
 * increase, multiplicative decrease (AIMD). The configured limit (settings) is the ceiling.
 *
 * - A throttling answer lowers the rate to `DECREASE` of the rate its episode started from (the
 *   throttling answers of one unit form one episode). When they come in a burst, lower still:
 *   to what the provider admitted of ours in the last unit (grants less throttling answers),
 *   but to no less than half of the episode's starting rate, so a burst at most halves it.
 * - Every `GROW_UNITS` time units without a throttling answer, the rate grows by one step (1%
 *   of the configured limit, at least one request), back up to the configured limit, provided
 *   the last unit used most of the rate (a budget that is not busy learns nothing).
 *
 * A tenant whose real limit is tighter than configured thus settles just under it within a few
 * episodes, and probes upwards now and then with a single request too many.
 */

import type { BucketLimit } from "../connectors/cloudapi/pacer.ts";

/** The share of the episode's starting rate a throttling answer lowers the rate to, at most. */
export const DECREASE = 0.9;
/** The lowest share of the episode's starting rate the rate falls to within one episode. */
const FLOOR = 0.5;
/** Time units of use without throttling before the rate grows one step. */
export const GROW_UNITS = 3;

export class AdaptiveRate {
  /** The current rate, requests per unit; undefined until the first limit. */
  #rate: number | undefined;
  #configured: BucketLimit = { limit: 1, unitMs: 1_000 };
  #episodeStart = -Infinity;
  #cutBase = 0;
  #lastChange = 0;
  #grants: number[] = [];
  #throttles: number[] = [];

  /** The limit to pace with now, given the configured one; grows the rate when it is due. */
  limit(configured: BucketLimit, now: number): BucketLimit {
    this.#configured = configured;
    if (this.#rate === undefined || this.#rate > configured.limit) {
      this.#rate = configured.limit;
      this.#lastChange = now;
    } else if (
      this.#rate < configured.limit && now - this.#lastChange >= GROW_UNITS * configured.unitMs &&
      this.#saturated(now)
    ) {
      const step = Math.max(1, Math.round(configured.limit / 100));
      this.#rate = Math.min(configured.limit, this.#rate + step);
      this.#lastChange = now;
    }
    return { limit: Math.max(1, Math.round(this.#rate)), unitMs: configured.unitMs };
  }

  /** A request of the budget was let go at `now`. */
  granted(now: number): void {
    this.#grants.push(now);
    this.#prune(now);
  }

  /** The provider answered a request of the budget with a throttling answer at `now`. */
  throttled(now: number): void {
    const rate = this.#rate ?? this.#configured.limit;
    this.#throttles.push(now);
    this.#prune(now);
    const since = now - this.#configured.unitMs;
    if (now - this.#episodeStart >= this.#configured.unitMs) {
      this.#episodeStart = now;
      this.#cutBase = rate;
    }
    // One throttling answer (a probe just above the limit) says little of how far above the
    // limit we are: the rate comes down by DECREASE. A burst of them says it: what was
    // admitted of ours in the last unit is the limit, give or take other applications.
    const throttles = this.#throttles.filter((t) => t > since).length;
    const admitted = this.#grants.filter((t) => t > since).length - throttles;
    const target = throttles < 2
      ? Math.max(1, this.#cutBase * DECREASE)
      : Math.max(1, this.#cutBase * FLOOR, Math.min(this.#cutBase * DECREASE, admitted));
    this.#rate = Math.min(rate, target);
    this.#lastChange = now;
  }

  /**
   * Did the last unit use (most of) the rate? Only then does the provider's answer say anything
   * about a higher one: a budget used below its rate does not grow (it would overshoot the
   * limit in one burst the next time it is busy).
   */
  #saturated(now: number): boolean {
    const since = now - this.#configured.unitMs;
    // Most of it: the bucket hands a token back a unit after its request completed, so a busy
    // budget grants a little less than its rate in any one unit.
    return this.#grants.filter((t) => t > since).length >= Math.floor(0.8 * (this.#rate ?? 0));
  }

  /** The current rate, fractional (tests, the bench). */
  get rate(): number | undefined {
    return this.#rate;
  }

  #prune(now: number): void {
    const since = now - 2 * this.#configured.unitMs;
    for (const list of [this.#grants, this.#throttles]) {
      let old = 0;
      while (old < list.length && list[old]! <= since) old++;
      if (old > 0) list.splice(0, old);
    }
  }
}
