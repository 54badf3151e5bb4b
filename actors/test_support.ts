/**
 * Helpers for the actor tests: a stand-in engine run over given batches (the engine's own
 * tests cover the engine; these cover the lifecycle around it) and a user.
 */

import { waitFor as waitForever } from "xstate";
import type { Plan, QueryRun, Row, Schema, User, Warning } from "../engine/mod.ts";
import { type KvStorage, openKvStorage } from "../home/storage/kv_storage.ts";
import { createLogger } from "../home/log.ts";

export const ALICE: User = { name: "alice", groups: [], admin: false };
export const BOB: User = { name: "bob", groups: [], admin: false };

export const PLAN: Plan = { kind: "plan" };

export interface FakeRunOptions {
  readonly batches: readonly (readonly Row[])[];
  readonly schema?: Schema;
  /** Resolves when the run may go on after its first batch (to hold it RUNNING). */
  readonly gate?: Promise<void>;
  readonly fail?: Error;
  readonly warning?: Warning;
  /** Counts runs whose batches are still being read (an open "file handle"). */
  readonly open?: { count: number };
}

/**
 * An engine starter (query_machine.ts's EngineStarter, given by `withEngine`) whose runs yield
 * the given batches and honour the abort signal.
 */
export function fakeEngine(options: FakeRunOptions) {
  return (
    _plan: Plan,
    signal: AbortSignal,
    report: { onProgress: (f: number) => void; onWarning: (w: Warning) => void },
  ): QueryRun => {
    const input = { report };
    async function* batches() {
      if (options.open) options.open.count++;
      try {
        let i = 0;
        for (const batch of options.batches) {
          if (signal.aborted) throw signal.reason;
          if (options.warning && i === 0) input.report.onWarning(options.warning);
          input.report.onProgress((i + 1) / (options.batches.length + 1));
          yield batch;
          if (i++ === 0 && options.gate) {
            await Promise.race([
              options.gate,
              new Promise((_, reject) =>
                signal.addEventListener("abort", () => reject(signal.reason), { once: true })
              ),
            ]);
          }
        }
        if (options.fail) throw options.fail;
      } finally {
        if (options.open) options.open.count--;
      }
    }
    return { batches: batches(), schema: () => options.schema ?? [] } as QueryRun;
  };
}

/**
 * XState's waitFor with a deadline (its own waits forever by default): a machine that never
 * reaches the state fails its test after 10 s, alone, instead of hanging the suite.
 */
export const waitFor: typeof waitForever = (actor, predicate, options) =>
  waitForever(actor, predicate, { timeout: 10_000, ...options });

/** A Deno KV storage in memory, closed when the test's `await using` ends. */
export async function memoryStorage(): Promise<KvStorage & AsyncDisposable> {
  const storage = await openKvStorage(":memory:");
  return Object.assign(storage, { [Symbol.asyncDispose]: () => Promise.resolve(storage.close()) });
}

/**
 * The options of a SharedQueries (actors/shared_queries.ts) in the tests: one running slot, a
 * 1 s lease, no log, its loops driven by the test (`poll`, `sweep`).
 */
export const sharedTestOptions = {
  maxRunning: 1,
  maxQueued: 10,
  retentionMs: 60_000,
  expiredMemoryMs: 60_000,
  leaseMs: 1000,
  log: createLogger(() => {}),
  loops: false,
} as const;
