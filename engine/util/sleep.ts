/**
 * Waits `ms`, ending early when `signal` aborts: then it rejects with the signal's reason (as
 * `fetch` does), not with an AbortError of its own, so a caller's `catch` sees why it stopped.
 * In `engine/` so that every layer (and tests) may use the one copy.
 *
 *   await sleep(backoffMs, ctx.signal);
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
