/**
 * The connector actors of the process: one per (tenant, API family), created on first use.
 * Their buckets use the tighter of the provider's limit (settings) and the store's own.
 */

import { type Actor, createActor } from "xstate";
import { type BucketLimit, connectorMachine } from "../../actors/connector_machine.ts";
import type { Family } from "./families.ts";

/** The lower of two rates (requests per time unit). */
export function tighter(a: BucketLimit, b: BucketLimit | undefined): BucketLimit {
  if (!b) return a;
  return b.limit / b.unitMs < a.limit / a.unitMs ? b : a;
}

export class ConnectorPool {
  #actors = new Map<string, Actor<typeof connectorMachine>>();
  #nextId = 0;

  constructor(private readonly now: () => number = () => Date.now()) {}

  #actor(tenant: string, family: Family, limit: BucketLimit): Actor<typeof connectorMachine> {
    const key = `${tenant.toLowerCase()}|${family}`;
    let actor = this.#actors.get(key);
    if (!actor) {
      actor = createActor(connectorMachine, { input: { ...limit, now: this.now } });
      actor.start();
      this.#actors.set(key, actor);
    } else {
      const ctx = actor.getSnapshot().context;
      const t = tighter({ limit: ctx.limit, unitMs: ctx.unitMs }, limit);
      if (t.limit !== ctx.limit || t.unitMs !== ctx.unitMs) {
        actor.send({ type: "SET_LIMIT", ...t });
      }
    }
    return actor;
  }

  /** Waits for a token of the (tenant, family) bucket. */
  acquire(tenant: string, family: Family, limit: BucketLimit, signal: AbortSignal): Promise<void> {
    const actor = this.#actor(tenant, family, limit);
    const id = ++this.#nextId;
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
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
      });
    });
  }

  /** The provider throttled the (tenant, family): pause its bucket. */
  throttled(tenant: string, family: Family, pauseMs: number): void {
    this.#actors.get(`${tenant.toLowerCase()}|${family}`)?.send({ type: "THROTTLED", pauseMs });
  }

  /** Stops every actor (tests, shutdown). */
  stop(): void {
    for (const a of this.#actors.values()) a.stop();
    this.#actors.clear();
  }
}
