/**
 * Type-checks the scan worker's module graph once, before the test files run in parallel.
 *
 * Under `deno test` (and `deno run --check`) a Web Worker's module is type-checked when the
 * first worker of a process loads it. With a cold check cache (a fresh machine or clone, or an
 * edit in the engine) every test file that starts a worker checks the whole engine at once: 10
 * to 24 s each on a busy two-core machine, which a test's first query waits for. Loading one
 * worker here fills the cache, so that the test processes find their check done.
 *
 *   deno run --check --allow-all tests/support/check_workers.ts
 */

const WORKERS = [new URL("../../actors/scan_worker.ts", import.meta.url)];

for (const url of WORKERS) {
  const worker = new Worker(url.href, { type: "module" });
  // The module answers its first message only once it is loaded (and so checked): an empty
  // task, which it fails at once.
  const loaded = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 300_000);
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    worker.onmessage = done;
    worker.onerror = (e) => {
      e.preventDefault();
      done();
    };
    worker.postMessage({ dataDir: "/nonexistent", grants: [], task: null });
  });
  worker.terminate();
  if (!loaded) {
    // deno-lint-ignore no-console -- what a developer sees when the suite cannot start
    console.error(`${url.pathname} did not load within 300 s`);
    Deno.exit(1);
  }
}
