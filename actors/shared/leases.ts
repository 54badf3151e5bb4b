/**
 * Leases: each server rewrites `queries/server/<id>` every third of `cluster.lease`; the others
 * watch the leases of the servers named in the slots. A lease that has not changed for
 * `cluster.lease`, seen by the watching server's own clock (so clocks need not agree), belongs to
 * a dead server. A lease also carries the running slots its server brings to the cluster when
 * `query.maxRunning` is left to its default (its cores): the Census adds up the live ones.
 */

import { decodeJson, encodeJson, leaseKey } from "./keys.ts";
import { type Storage } from "../../engine/mod.ts";

/** Writes and removes this server's lease. */
export class Lease {
  /** `slots`: the running slots this server brings (its default `query.maxRunning`), if any. */
  constructor(
    readonly storage: Storage,
    readonly serverId: string,
    readonly leaseMs: number,
    readonly now: () => number,
    readonly slots?: number,
  ) {}

  async renew(): Promise<void> {
    const lease = this.slots === undefined
      ? { at: this.now() }
      : { at: this.now(), slots: this.slots };
    await this.storage.put(leaseKey(this.serverId), encodeJson(lease), {
      expireInMs: 100 * this.leaseMs,
    });
  }

  async remove(): Promise<void> {
    await this.storage.delete(leaseKey(this.serverId));
  }

  /** The version of `server`'s lease (null when it has none). */
  version(server: string): Promise<string | null> {
    return this.storage.version(leaseKey(server));
  }
}

/** Other servers' leases as last seen: when (this server's clock) each last changed. */
export class LeaseWatch {
  readonly #seen = new Map<string, { version: string | null; since: number }>();

  constructor(readonly leaseMs: number) {}

  /**
   * Notes `server`'s lease `version` at `now`; whether the server is dead: its lease (or its
   * absence: a server between its first query and its first lease, or one that deleted it when
   * it stopped) has stayed as it is for longer than `leaseMs`. A dead server is forgotten.
   */
  dead(server: string, version: string | null, now: number): boolean {
    const seen = this.#seen.get(server);
    if (!seen || seen.version !== version) {
      this.#seen.set(server, { version, since: now });
      return false;
    }
    if (now - seen.since <= this.leaseMs) return false;
    this.#seen.delete(server);
    return true;
  }

  /** Forgets the servers not in `servers` (they hold no slot any more). */
  keepOnly(servers: ReadonlySet<string>): void {
    for (const server of this.#seen.keys()) if (!servers.has(server)) this.#seen.delete(server);
  }

  /** How many servers are watched. */
  get size(): number {
    return this.#seen.size;
  }
}

/**
 * The running slots the live servers bring to the cluster (with `query.maxRunning` left to its
 * default, each its cores): every lease is read at each `count`, and one that has not changed
 * for `leaseMs` by this server's clock (a dead server's, or one whose server left) counts no more.
 */
export class Census {
  readonly #seen = new Map<string, { version: string; since: number; slots: number }>();

  constructor(readonly storage: Storage, readonly leaseMs: number) {}

  /** The slots of the live servers other than `self`, as of `now`. */
  async others(self: string, now: number): Promise<number> {
    const present = new Set<string>();
    let slots = 0;
    for await (const key of this.storage.list(leaseKey("").slice(0, -1))) {
      const server = String(key[key.length - 1]);
      if (server === self) continue;
      const stored = await this.storage.get(key);
      if (stored === null) continue;
      present.add(server);
      const seen = this.#seen.get(server);
      if (!seen || seen.version !== stored.version) {
        const lease = decodeJson(stored) as { slots?: unknown } | null;
        const given = typeof lease?.slots === "number" && lease.slots > 0 ? lease.slots : 0;
        this.#seen.set(server, { version: stored.version, since: now, slots: given });
      }
      const live = this.#seen.get(server)!;
      if (now - live.since <= this.leaseMs) slots += live.slots;
    }
    for (const server of this.#seen.keys()) if (!present.has(server)) this.#seen.delete(server);
    return slots;
  }
}
