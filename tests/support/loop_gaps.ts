/**
 * The longest stretch the event loop went without running a timer, while some work runs: the
 * measure of the tests that a query takes turns of the loop (the server answers between them).
 *
 *   const gaps = watchLoopGaps(2);
 *   try { await work(); } finally { gaps.stop(); }
 *   assert.ok(gaps.longest < 60);
 */
export function watchLoopGaps(everyMs: number): { readonly longest: number; stop(): void } {
  let last = performance.now();
  let longest = 0;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  };
  const timer = setInterval(tick, everyMs);
  let stopped = false;
  return {
    get longest() {
      return longest;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      // The stretch since the last tick counts too: work that never let a timer run at all.
      tick();
    },
  };
}
