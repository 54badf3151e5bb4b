/**
 * Deno KV's local SQLite backend, shared by several processes, refuses a call now and then with
 * "database is locked" when another process holds the write lock (seen with two servers taking
 * tokens of one bucket: thousands of such refusals in a few seconds of contention). Nothing was
 * written then, so the call is safe to repeat: `busyRetrying()` repeats it after a short,
 * growing, jittered pause, and gives the error up only when the lock stays held.
 */

import type { Storage } from "../../engine/storage.ts";

const ATTEMPTS = 30;
const MAX_PAUSE_MS = 100;

/** Is `e` the refusal of a busy SQLite KV? */
export function isBusy(e: unknown): boolean {
  return e instanceof Error && /database is locked|database is busy/i.test(e.message);
}

async function again<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await work();
    } catch (e) {
      if (!isBusy(e) || attempt >= ATTEMPTS) throw e;
      const pause = Math.min(MAX_PAUSE_MS, 2 * attempt) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** `storage`, its calls repeated while the KV is busy. */
export function busyRetrying(storage: Storage): Storage {
  return {
    kind: storage.kind,
    get: (key) => again(() => storage.get(key)),
    version: (key) => again(() => storage.version(key)),
    put: (key, value, options) => again(() => storage.put(key, value, options)),
    delete: (key, options) => again(() => storage.delete(key, options)),
    list: (prefix) => storage.list(prefix),
    commit: (entries) => again(() => storage.commit(entries)),
    close: () => storage.close(),
  };
}
