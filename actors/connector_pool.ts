/**
 * The connector actors of the process, each a token bucket created on first use:
 *
 * - one per (tenant, provider budget) with the provider's limit (settings): the provider counts
 *   the requests of every application of a tenant together, so all stores of a tenant share it,
 *   and Graph counts directory and activity logs (v1.0 and beta) together, so both families
 *   share the tenant's `graph` budget. Its rate adapts to throttling answers (adaptive_rate.ts);
 * - one per (store, API family) with the store's own `*RateLimit`/`*RateTimeunit`, which limits
 *   that store only.
 *
 * A request takes a token from both (the tighter one wins by itself). Limits are set on every
 * request from the current settings and definition, so a changed definition takes effect at
 * the next query and one store's limit never leaks into another's.
 *
 * With a storage shared by several servers (Deno KV, `share()`), a request also takes a token of
 * the tenant's bucket in the KV (shared_buckets.ts) once its own actors let it go, so the servers
 * together keep to the tenant's rate, and a throttling answer pauses the tenant on every server.
 */

import { type Actor, createActor } from "xstate";
import { connectorMachine } from "./connector_machine.ts";
import type { Family } from "../connectors/cloudapi/families.ts";
import {
  type BucketKeys,
  type BucketLimit,
  type Budget,
  budgetOf,
  type Pacer,
} from "../connectors/cloudapi/pacer.ts";
import { AdaptiveRate } from "./adaptive_rate.ts";
import type { SharedBuckets } from "./shared_buckets.ts";

export interface ConnectorStatus {
  /** `tenant|<tenant>|<family>` or `store|<store>|<family>`. */
  readonly key: string;
  readonly state: string;
  /** Requests waiting for a token. */
  readonly waiting: number;
  /** Tokens spent within the current unit. */
  readonly spent: number;
  readonly limit: number;
  readonly unitMs: number;
}

/** What /metrics shows of one family's cloud requests. */
export interface FamilyCounters {
  requests: number;
  throttled: number;
  /** Requests that waited for a token (over 10 ms), and the seconds they waited. */
  waits: number;
  waitSeconds: number;
}

export class ConnectorPool implements Pacer {
  /** Per family, counted as requests are paced (read by /metrics). */
  readonly counters = new Map<Family, FamilyCounters>();
  #actors = new Map<string, Actor<typeof connectorMachine>>();
  #rates = new Map<string, AdaptiveRate>();
  #nextId = 0;
  #shared: SharedBuckets | undefined;

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** Makes the tenants' buckets shared with the other servers of `buckets`' storage. */
  share(buckets: SharedBuckets): void {
    this.#shared = buckets;
  }

  #actor(key: string, limit: BucketLimit): Actor<typeof connectorMachine> {
    let actor = this.#actors.get(key);
    if (!actor) {
      actor = createActor(connectorMachine, { input: { ...limit, now: this.now } });
      actor.start();
      this.#actors.set(key, actor);
    } else {
      const ctx = actor.getSnapshot().context;
      if (ctx.limit !== limit.limit || ctx.unitMs !== limit.unitMs) {
        actor.send({ type: "SET_LIMIT", ...limit });
      }
    }
    return actor;
  }

  /** Each connector actor's state, queue and token bucket now (`GET /machines`, the console). */
  status(): ConnectorStatus[] {
    return [...this.#actors].map(([key, actor]) => {
      const { value, context } = actor.getSnapshot();
      return {
        key,
        state: String(value),
        waiting: context.queue.length,
        spent: context.spent.length,
        limit: context.limit,
        unitMs: context.unitMs,
      };
    });
  }

  /** The limit a bucket paces with now (tests, the bench); undefined before its first use. */
  limitOf(key: string): BucketLimit | undefined {
    const ctx = this.#actors.get(key)?.getSnapshot().context;
    return ctx ? { limit: ctx.limit, unitMs: ctx.unitMs } : undefined;
  }

  /**
   * Waits for a token of the store's bucket (if it has a limit), then of the tenant's. Call the
   * returned function when the request has completed: the tokens come back a time unit later.
   */
  async acquire(keys: BucketKeys, signal: AbortSignal): Promise<() => void> {
    const counters = this.#counters(keys.family);
    counters.requests++;
    const asked = performance.now();
    const releases: (() => void)[] = [];
    const releaseAll = () => releases.forEach((r) => r());
    try {
      if (keys.storeLimit) {
        releases.push(
          await this.#take(
            this.#actor(storeKey(keys.store, keys.family), keys.storeLimit),
            signal,
          ),
        );
      }
      const key = tenantKey(keys.tenant, budgetOf(keys.family));
      const rate = this.#rate(key);
      const limit = rate.limit(keys.providerLimit, this.now());
      releases.push(await this.#take(this.#actor(key, limit), signal));
      if (this.#shared) releases.push(await this.#shared.take(key, limit, signal));
      rate.granted(this.now());
    } catch (e) {
      releaseAll();
      throw e;
    }
    const waited = performance.now() - asked;
    // Below 10 ms it is the pool's own work (an actor's first start), not a wait for a token.
    if (waited > 10) {
      counters.waits++;
      counters.waitSeconds += waited / 1000;
    }
    return releaseAll;
  }

  #counters(family: Family): FamilyCounters {
    let counters = this.counters.get(family);
    if (!counters) {
      this.counters.set(family, counters = { requests: 0, throttled: 0, waits: 0, waitSeconds: 0 });
    }
    return counters;
  }

  #take(actor: Actor<typeof connectorMachine>, signal: AbortSignal): Promise<() => void> {
    const id = ++this.#nextId;
    const release = () => actor.send({ type: "RELEASE", id });
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = () => {
        actor.send({ type: "CANCEL", id });
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      actor.send({
        type: "ACQUIRE",
        id,
        tracked: true,
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve(release);
        },
      });
    });
  }

  #rate(key: string): AdaptiveRate {
    let rate = this.#rates.get(key);
    if (!rate) this.#rates.set(key, rate = new AdaptiveRate());
    return rate;
  }

  /** The provider throttled the (tenant, budget of the family): pause its bucket, lower its rate. */
  throttled(tenant: string, family: Family, pauseMs: number): void {
    this.#counters(family).throttled++;
    const key = tenantKey(tenant, budgetOf(family));
    this.#shared?.pause(key, pauseMs).catch(() => {/* the KV failed: this server pauses alone */});
    const actor = this.#actors.get(key);
    if (!actor) return;
    const rate = this.#rate(key);
    rate.throttled(this.now());
    const ctx = actor.getSnapshot().context;
    const lowered = Math.max(1, Math.round(rate.rate ?? ctx.limit));
    if (lowered < ctx.limit) actor.send({ type: "SET_LIMIT", limit: lowered, unitMs: ctx.unitMs });
    actor.send({ type: "THROTTLED", pauseMs });
  }

  /** Stops every actor (tests, shutdown). */
  stop(): void {
    this.#shared?.stop();
    for (const a of this.#actors.values()) a.stop();
    this.#actors.clear();
    this.#rates.clear();
  }
}

/** The key of a (tenant, provider budget) bucket. */
export function tenantKey(tenant: string, budget: Budget): string {
  return `tenant|${tenant.toLowerCase()}|${budget}`;
}

/** The key of a (store, family) bucket. */
export function storeKey(store: string, family: Family): string {
  return `store|${store}|${family}`;
}
