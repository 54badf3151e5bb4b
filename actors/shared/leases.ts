/**
 * Leases: each server rewrites `queries/server/<id>` every third of `cluster.lease`; the others
 * watch the leases of the servers named in the slots. A lease that has not changed for
 * `cluster.lease`, seen by the watching server's own clock (so clocks need not agree), belongs to
 * a dead server.
 */

import { encodeJson, leaseKey } from "./keys.ts";
import { type Storage } from "../../engine/mod.ts";

/** Writes and removes this server's lease. */
export class Lease {
  constructor(
    readonly storage: Storage,
    readonly serverId: string,
    readonly leaseMs: number,
    readonly now: () => number,
  ) {}

  async renew(): Promise<void> {
    await this.storage.put(leaseKey(this.serverId), encodeJson({ at: this.now() }), {
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
