/**
 * What the cloud connector needs of request pacing: a token before each request, handed back
 * when the request has completed, and word of the provider's throttling answers. The actors
 * implement it with token-bucket connector actors (actors/connector_pool.ts), built once per
 * process in main.ts.
 */

import type { Family } from "./families.ts";

/** A rate: `limit` requests per `unitMs`. */
export interface BucketLimit {
  readonly limit: number;
  readonly unitMs: number;
}

/**
 * The provider budget a family's requests count against: directory and activity logs both call
 * Graph's `auditLogs` resource (v1.0 and beta), which Microsoft throttles per app and tenant
 * across both; the suite family calls the Management Activity API.
 */
export type Budget = "graph" | "manage";

/** The budget of a family. */
export function budgetOf(family: Family): Budget {
  return family === "suite" ? "manage" : "graph";
}

/** The buckets one request draws from. */
export interface BucketKeys {
  readonly tenant: string;
  readonly family: Family;
  /** The provider's limit for the (tenant, budget of the family), from the settings. */
  readonly providerLimit: BucketLimit;
  readonly store: string;
  /** The store's own limit, when its definition sets one. */
  readonly storeLimit?: BucketLimit | undefined;
}

export interface Pacer {
  /**
   * Waits until the request may go; call the returned function when it has completed. Rejects
   * with the signal's reason when the signal aborts first.
   */
  acquire(keys: BucketKeys, signal: AbortSignal): Promise<() => void>;
  /**
   * The provider answered the (tenant, budget of the family) with a throttling answer: pause
   * for `pauseMs`, and lower that tenant's rate (it recovers slowly).
   */
  throttled(tenant: string, family: Family, pauseMs: number): void;
}
