/**
 * The CPU time the calling thread has used, in microseconds (user and system).
 *
 * A thread's, not the process's: under `deno test --parallel` other test modules run as threads
 * of the same process, and their CPU is not time this event loop spent (tests/support/
 * loop_gaps.ts). The engine's TimeSlicer keeps the process's figure on purpose: see
 * engine/plan/context.ts.
 * Where the runtime has no per-thread figure (`process.threadCpuUsage` is Node 23.9+ and Deno
 * 2.x), the process's is the fallback: an over-count, never an under-count.
 */
import process from "node:process";

type Usage = { user: number; system: number };
const threadUsage = (process as { threadCpuUsage?: () => Usage }).threadCpuUsage;

export function threadCpuMicros(): number {
  const { user, system } = threadUsage ? threadUsage.call(process) : process.cpuUsage();
  return user + system;
}

/**
 * A stopwatch of this thread's CPU, in milliseconds: for a test that says some work is done "at
 * once" (linear, not exponential; stopped, not read to the end). Unlike the wall clock it does not
 * grow while other processes or test threads have the cores, so a busy machine cannot fail it.
 */
export function cpuStopwatch(): () => number {
  const start = threadCpuMicros();
  return () => (threadCpuMicros() - start) / 1000;
}
