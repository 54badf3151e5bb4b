/**
 * Waits until the process has no Worker thread left (Linux: the threads named `worker-N` in
 * /proc/self/task), at most `timeoutMs`.
 *
 * `Worker.terminate()` returns before the worker's thread has ended, and Deno tells the parent
 * nothing when it has. A process that exits while such a thread is still tearing its isolate
 * down can crash in V8's own threads: a server stopped with SIGTERM right after its scan workers
 * were closed ended with SIGSEGV (exit 139) about one time in seven on a busy machine, and never
 * with this wait before the exit (tests/storage/shared_queries_test.ts, the SIGTERM test). A rarer
 * crash at the runtime's own teardown remained (5 in 71 loops of that test at load 9): main.ts now
 * ends the process with `Deno.exit` after this wait.
 *
 * Where the threads cannot be listed (another OS, no read permission on /proc), returns at once.
 */
const POLL_MS = 5;

export async function workerThreadsEnded(timeoutMs = 5_000): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const alive = workerThreads();
    if (alive === undefined || alive === 0) return true;
    if (performance.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The Worker threads of this process, or undefined when they cannot be listed. */
function workerThreads(): number | undefined {
  if (Deno.build.os !== "linux") return undefined;
  try {
    let n = 0;
    for (const task of Deno.readDirSync("/proc/self/task")) {
      try {
        if (Deno.readTextFileSync(`/proc/self/task/${task.name}/comm`).startsWith("worker-")) n++;
      } catch { /* the thread ended while listed */ }
    }
    return n;
  } catch {
    return undefined;
  }
}
