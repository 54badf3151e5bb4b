/**
 * A lease per store and hour (per store and log for the suite, whose fetch spans hours), kept in
 * the Storage that several servers share: one server fetches an hour, the others that need it at
 * the same moment wait for its result and then read what it stored. The holder renews its lease
 * every third of `cloudapi.fetchLease` while it fetches; a holder that died (kill -9, a lost
 * machine) stops renewing, its lease runs out, and a waiting server takes the fetch over.
 *
 * The lease is one key, `["cloud_api", <store>, "lease", ...]`, holding `{owner, until}`; it is
 * taken and renewed by compare-and-swap on its version, so two servers never both hold it. Its
 * `until` is wall-clock time: the servers sharing a KV must agree on the time to within a small
 * part of the lease (true of the processes of one machine; NTP between machines).
 *
 * When the holder's fetch fails for a reason every server would meet (the provider's outage, past
 * its retries), it leaves the failure in the lease for a moment instead of releasing it: the
 * servers waiting for it report that failure rather than each sending the same requests again.
 *
 * Within one process FetchFlights already lets one query fetch and the others wait: the lease is
 * taken once per process, inside that flight.
 */

import type { Storage, StorageKey } from "../../engine/contracts/storage.ts";
import { sleep } from "../../engine/util/sleep.ts";

/** This process, as lease holders are named (for a person reading the KV). */
const OWNER = `${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;

interface Lease {
  readonly owner: string;
  /** Epoch ms after which the lease is free, unless renewed. */
  readonly until: number;
  /** The holder's fetch failed with this message (shown to the servers waiting for it). */
  readonly failed?: string;
}

/** Which failures of a fetch the servers waiting for it share, and how they are rethrown. */
export interface SharedFailure {
  /** The message of a failure every server would meet; undefined for one of the holder's own. */
  readonly messageOf: (e: unknown) => string | undefined;
  readonly rethrow: (message: string) => Error;
}

export interface LeaseOptions {
  /** How long a lease lasts without renewal (`cloudapi.fetchLease`). */
  readonly leaseMs: number;
  /** How often a waiting server looks at the lease; a tenth of the lease, 50–500 ms, if absent. */
  readonly pollMs?: number;
  /** Named in the lease; this process when absent (tests run two "servers" in one process). */
  readonly owner?: string;
}

export class HourLeases {
  readonly #owner: string;
  readonly #pollMs: number;

  constructor(private readonly storage: Storage, private readonly options: LeaseOptions) {
    this.#owner = options.owner ?? OWNER;
    this.#pollMs = options.pollMs ?? Math.min(500, Math.max(50, options.leaseMs / 10));
  }

  /**
   * Runs `work` holding the lease of `key` while `isDue()` says the fetch is still needed; while
   * another server holds it, waits (until `signal` aborts) and asks `isDue()` again when it is
   * released or has run out, so the holder's result is used rather than fetched again.
   */
  async run(
    key: StorageKey,
    isDue: () => Promise<boolean>,
    work: () => Promise<void>,
    signal: AbortSignal,
    failure?: SharedFailure,
  ): Promise<void> {
    const leaseKey: StorageKey = ["cloud_api", ...key];
    while (true) {
      signal.throwIfAborted();
      if (!await isDue()) return;
      const version = await this.#take(leaseKey);
      if (version === null) {
        const failed = await this.#waitWhileHeld(leaseKey, signal);
        if (failed !== undefined && failure) throw failure.rethrow(failed);
        continue;
      }
      const held = { version };
      let renewing = Promise.resolve();
      const renewal = setInterval(() => {
        renewing = renewing.then(() => this.#renew(leaseKey, held))
          .catch(() => {/* the next renewal, or the end */});
      }, Math.max(10, this.options.leaseMs / 3));
      let failed: string | undefined;
      try {
        // The previous holder may have finished between our look at the state and our taking.
        if (await isDue()) await work();
      } catch (e) {
        failed = failure?.messageOf(e);
        throw e;
      } finally {
        clearInterval(renewal);
        await renewing;
        if (failed !== undefined && held.version !== null) {
          // Long enough for every waiting server to look once more.
          const until = Date.now() + Math.max(1_000, 3 * this.#pollMs);
          const lease: Lease = { owner: this.#owner, until, failed };
          await this.storage.put(leaseKey, new TextEncoder().encode(JSON.stringify(lease)), {
            expectedVersion: held.version,
            expireInMs: until - Date.now() + this.options.leaseMs,
          }).catch(() => {});
        } else {
          await this.storage.delete(leaseKey, { expectedVersion: held.version }).catch(() => {});
        }
      }
      return;
    }
  }

  /** Takes the lease when it is free or ran out; its version, or null when another holds it. */
  async #take(key: StorageKey): Promise<string | null> {
    const now = Date.now();
    const current = await this.storage.get(key);
    if (current !== null && leaseOf(current.value).until > now) return null;
    const result = await this.storage.put(key, this.#value(now), {
      expectedVersion: current?.version ?? null,
      expireInMs: 2 * this.options.leaseMs,
    });
    return result.ok ? result.version : null;
  }

  async #renew(key: StorageKey, held: { version: string | null }): Promise<void> {
    if (held.version === null) return;
    const result = await this.storage.put(key, this.#value(Date.now()), {
      expectedVersion: held.version,
      expireInMs: 2 * this.options.leaseMs,
    });
    // Lost (we were too slow and another server took over): our merge still lands whole.
    held.version = result.ok ? result.version : null;
  }

  #value(now: number): Uint8Array {
    const lease: Lease = { owner: this.#owner, until: now + this.options.leaseMs };
    return new TextEncoder().encode(JSON.stringify(lease));
  }

  /**
   * Waits until the lease is released or has run out (or `signal` aborts); the holder's failure
   * when it left one.
   */
  async #waitWhileHeld(key: StorageKey, signal: AbortSignal): Promise<string | undefined> {
    while (true) {
      const current = await this.storage.get(key);
      if (current === null) return undefined;
      const lease = leaseOf(current.value);
      if (lease.until <= Date.now()) return undefined;
      if (lease.failed !== undefined) return lease.failed;
      await sleep(this.#pollMs, signal);
    }
  }
}

function leaseOf(bytes: Uint8Array): Lease {
  try {
    const lease = JSON.parse(new TextDecoder().decode(bytes));
    if (typeof lease?.until === "number") return lease;
  } catch { /* not a lease: free */ }
  return { owner: "", until: 0 };
}
