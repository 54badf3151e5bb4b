/**
 * The longest stretch the event loop went without running a timer, while some work runs: the
 * measure of the tests that a query takes turns of the loop (the server answers between them).
 *
 *   const gaps = watchLoopGaps(2);
 *   try { await work(); } finally { gaps.stop(); }
 *   assert.ok(gaps.longestCpu < 60);
 *
 * `longest` is wall time, which a busy machine stretches whatever the code does (the process is
 * taken off its core); `longestCpu` is the process's CPU time spent in that stretch: the time the
 * loop was really held by work, which the machine's load does not change. Tests assert on it.
 * The thread's CPU, not the process's: `deno test --parallel` runs other test modules as threads
 * of this process, and counting their work made a sort that took its turns look like one that
 * held the loop 219 ms (CI on 85effdb).
 */
import { threadCpuMicros } from "./thread_cpu.ts";

export function watchLoopGaps(everyMs: number): {
  readonly longest: number;
  readonly longestCpu: number;
  stop(): void;
} {
  let last = performance.now();
  let lastCpu = cpuMs();
  let longest = 0;
  let longestCpu = 0;
  const tick = () => {
    const now = performance.now();
    const cpu = cpuMs();
    longest = Math.max(longest, now - last);
    longestCpu = Math.max(longestCpu, cpu - lastCpu);
    last = now;
    lastCpu = cpu;
  };
  const timer = setInterval(tick, everyMs);
  let stopped = false;
  return {
    get longest() {
      return longest;
    },
    get longestCpu() {
      return longestCpu;
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

/** The CPU time this thread (this event loop) has used, in milliseconds. */
export function cpuMs(): number {
  return threadCpuMicros() / 1000;
}
