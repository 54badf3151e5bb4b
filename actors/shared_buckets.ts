/**
 * The per-tenant token buckets of several servers sharing one Storage (Deno KV): each server
 * paces its own requests with its connector actors (connector_pool.ts) and, before a request
 * goes, takes a token of the tenant's budget from the bucket in the KV, so that the servers
 * together stay within the tenant's rate.
 *
 * The bucket is one key per (tenant, budget), `["cloud_api", "buckets", <key>]`, holding the
 * grants of the last time unit, `{grants: [{id, n, until}], pausedUntil}`. A server takes tokens
 * by compare-and-swap on its version: it reads the grants, drops those that have run out, and
 * adds one grant of as many tokens as it has requests waiting (a batch: one KV round trip for
 * several requests), if the rate leaves that many free. The tokens of a grant are used at once
 * (within USE_MS), and the grant counts until a time unit and a margin after that. The provider
 * counts a request when it arrives, before it completes: a request that completes later than
 * USE_MS after its grant (a slow answer, a busy process) moves its grant's end to a unit and a
 * margin after its completion (one more round trip), as the connector actor keeps a token until
 * its request completed. So no window of the provider's sees more than the limit of all servers'
 * requests, unless a request completes later than its grant's end. A throttling answer to any
 * server pauses the bucket for every server (`pausedUntil`).
 *
 * Each server passes its own current (adapted) limit: a server whose rate adapted down takes
 * tokens only while the grants of all stay under its lower limit.
 */

import type { Storage, StorageKey } from "../engine/mod.ts";
import type { BucketLimit } from "../connectors/cloudapi/pacer.ts";
import { margin } from "./connector_machine.ts";

/** How long after its grant a token may be used (the request is sent at once, in practice). */
const USE_MS = 100;
/** The longest sleep before looking at the bucket again when it has no token free. */
const MAX_SLEEP_MS = 1_000;
/** Compare-and-swap attempts before a take gives up (contention of many servers). */
const ATTEMPTS = 50;

interface Grant {
  readonly id: string;
  readonly n: number;
  /** Epoch ms when the grant stops counting. */
  readonly until: number;
}

interface BucketValue {
  readonly grants: readonly Grant[];
  readonly pausedUntil: number;
}

interface Waiter {
  readonly resolve: (grant: LocalGrant) => void;
  readonly reject: (e: unknown) => void;
  readonly signal: AbortSignal;
}

/** What this process knows of a grant of its own. */
interface LocalGrant {
  readonly id: string;
  /** Its end as last written. */
  until: number;
  readonly windowMs: number;
}

interface LocalBucket {
  /** Tokens granted to this process and not handed out yet, usable until `validUntil`. */
  tokens: number;
  validUntil: number;
  grant?: LocalGrant;
  limit: BucketLimit;
  readonly queue: Waiter[];
  pumping: boolean;
  /** Ends the pump's sleep early (the last waiter went away, or stop()). */
  wake?: (() => void) | undefined;
}

export class SharedBuckets {
  #buckets = new Map<string, LocalBucket>();
  #stopped = false;
  /** KV round trips made (tests, the bench). */
  roundTrips = 0;
  /** KV writes that granted tokens, each a batch for the waiters of its time (tests). */
  grantWrites = 0;

  readonly #storage: Storage;

  constructor(storage: Storage) {
    // Several processes on one KV file: a busy SQLite lock is waited out, not a failure.
    this.#storage = storage;
  }

  /**
   * Waits for a token of the shared bucket `key` at `limit`; rejects when `signal` aborts. Call
   * the function it returns when the request has completed.
   */
  async take(key: string, limit: BucketLimit, signal: AbortSignal): Promise<() => void> {
    const grant = await this.#token(key, limit, signal);
    return () => this.#completed(key, grant);
  }

  #token(key: string, limit: BucketLimit, signal: AbortSignal): Promise<LocalGrant> {
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      this.#buckets.set(
        key,
        bucket = { tokens: 0, validUntil: 0, limit, queue: [], pumping: false },
      );
    }
    bucket.limit = limit;
    if (signal.aborted) return Promise.reject(signal.reason);
    if (
      bucket.queue.length === 0 && bucket.tokens > 0 && Date.now() < bucket.validUntil &&
      bucket.grant
    ) {
      bucket.tokens--;
      return Promise.resolve(bucket.grant);
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve: (grant) => {
          signal.removeEventListener("abort", onAbort);
          resolve(grant);
        },
        reject,
        signal,
      };
      const onAbort = () => {
        const i = bucket.queue.indexOf(waiter);
        if (i >= 0) bucket.queue.splice(i, 1);
        if (bucket.queue.length === 0) bucket.wake?.();
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      bucket.queue.push(waiter);
      this.#pump(key, bucket);
    });
  }

  /** The provider throttled a request of `key`: every server pauses it for `pauseMs`. */
  async pause(key: string, pauseMs: number): Promise<void> {
    const until = Date.now() + pauseMs;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const { value, version } = await this.#read(key);
      if (value.pausedUntil >= until) return;
      this.roundTrips++;
      const result = await this.#storage.put(
        bucketKey(key),
        encode({ ...value, pausedUntil: until }),
        { expectedVersion: version, expireInMs: pauseMs + 60_000 },
      );
      if (result.ok) return;
    }
  }

  /** Hands tokens to the waiters of `bucket`, taking batches from the KV, until none waits. */
  async #pump(key: string, bucket: LocalBucket): Promise<void> {
    if (bucket.pumping) return;
    bucket.pumping = true;
    try {
      let conflicts = 0;
      while (bucket.queue.length > 0 && !this.#stopped) {
        if (bucket.tokens > 0 && Date.now() < bucket.validUntil && bucket.grant) {
          bucket.tokens--;
          bucket.queue.shift()!.resolve(bucket.grant);
          continue;
        }
        const wait = await this.#refill(key, bucket);
        if (wait === undefined) {
          if (++conflicts > ATTEMPTS) throw new Error(`too many servers taking tokens of ${key}`);
          continue;
        }
        conflicts = 0;
        if (wait > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.min(wait, MAX_SLEEP_MS));
            bucket.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          bucket.wake = undefined;
        }
      }
    } catch (e) {
      // The KV failed: the waiting requests fail with its error (their hours are reported).
      for (const w of bucket.queue.splice(0)) w.reject(e);
    } finally {
      bucket.pumping = false;
    }
  }

  /**
   * Takes a batch of tokens for the waiters: 0 when taken, the ms to wait when none is free,
   * undefined when another server came between our read and our write.
   */
  async #refill(key: string, bucket: LocalBucket): Promise<number | undefined> {
    const { value, version } = await this.#read(key);
    const now = Date.now();
    if (now < value.pausedUntil) return value.pausedUntil - now;
    const grants = value.grants.filter((g) => g.until > now);
    const used = grants.reduce((sum, g) => sum + g.n, 0);
    const free = bucket.limit.limit - used;
    if (free <= 0) return Math.max(1, Math.min(...grants.map((g) => g.until)) - now);
    const n = Math.min(free, bucket.queue.length);
    const windowMs = bucket.limit.unitMs + margin(bucket.limit.unitMs);
    const grant: LocalGrant = {
      id: crypto.randomUUID().slice(0, 8),
      until: now + USE_MS + windowMs,
      windowMs,
    };
    this.roundTrips++;
    const result = await this.#storage.put(
      bucketKey(key),
      encode({
        grants: [...grants, { id: grant.id, n, until: grant.until }],
        pausedUntil: value.pausedUntil,
      }),
      { expectedVersion: version, expireInMs: USE_MS + windowMs + 60_000 },
    );
    if (!result.ok) return undefined;
    this.grantWrites++;
    bucket.tokens = n;
    bucket.validUntil = now + USE_MS;
    bucket.grant = grant;
    return 0;
  }

  /**
   * A request of `grant` completed: when that is later than the grant's end allows (a unit and a
   * margin before it), the grant's end moves to a unit and a margin after now, for every server.
   */
  #completed(key: string, grant: LocalGrant): void {
    const until = Date.now() + grant.windowMs;
    if (until <= grant.until || this.#stopped) return;
    grant.until = until;
    this.#extend(key, grant.id, until).catch(() => {/* the KV failed: the margin must do */});
  }

  async #extend(key: string, id: string, until: number): Promise<void> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const { value, version } = await this.#read(key);
      const grant = value.grants.find((g) => g.id === id);
      if (grant === undefined || grant.until >= until) return;
      this.roundTrips++;
      const result = await this.#storage.put(
        bucketKey(key),
        encode({
          ...value,
          grants: value.grants.map((g) => g.id === id ? { ...g, until } : g),
        }),
        { expectedVersion: version, expireInMs: until - Date.now() + 60_000 },
      );
      if (result.ok) return;
    }
  }

  async #read(key: string): Promise<{ value: BucketValue; version: string | null }> {
    this.roundTrips++;
    const stored = await this.#storage.get(bucketKey(key));
    if (stored === null) return { value: { grants: [], pausedUntil: 0 }, version: null };
    try {
      const value = JSON.parse(new TextDecoder().decode(stored.value));
      if (Array.isArray(value?.grants) && typeof value.pausedUntil === "number") {
        return { value, version: stored.version };
      }
    } catch { /* not a bucket: start afresh */ }
    return { value: { grants: [], pausedUntil: 0 }, version: stored.version };
  }

  /** No more tokens are taken; waiters are left to their signals. */
  stop(): void {
    this.#stopped = true;
    for (const bucket of this.#buckets.values()) bucket.wake?.();
  }
}

function bucketKey(key: string): StorageKey {
  return ["cloud_api", "buckets", key];
}

function encode(value: BucketValue): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value));
}
