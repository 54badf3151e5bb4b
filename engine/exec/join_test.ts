/**
 * A join whose keys multiply rows (every row of 1000 matches every other, twice over: a billion
 * rows) streams them in bounded batches: a limit stops it early, the event loop keeps turning,
 * a cancel stops it, and what it must hold is charged to the memory budget.
 */

import { cpuMs } from "../../tests/support/loop_gaps.ts";
import assert from "node:assert/strict";
import { engineHome } from "../../tests/support/engine_home.ts";
import { compile, execute } from "../engine.ts";
import { QueryError } from "../front/diagnostics.ts";
import { cpuStopwatch } from "../../tests/support/thread_cpu.ts";

const LEFT = "@l = VALUES((k: null, a: 1), (k: 1, a: 2), (k: null, a: 3));";
const RIGHT = "@r = VALUES((k: null, b: 'x'), (k: 1, b: 'y'), (k: null, b: 'z'));";

Deno.test("join() never matches a null key with a null key", async () => {
  await using home = await engineHome();
  const { rows } = await home.run(
    `${LEFT} ${RIGHT} @l | join(@r on left.k = right.k) | select(a, b) | sort(a)`,
  );
  assert.deepEqual(rows, [{ a: 2, b: "y" }]);
});

Deno.test("leftjoin() keeps a left row with a null key, unmatched, its right fields null", async () => {
  await using home = await engineHome();
  const { rows } = await home.run(
    `${LEFT} ${RIGHT} @l | leftjoin(@r on left.k = right.k) | select(a, b) | sort(a)`,
  );
  assert.deepEqual(rows, [{ a: 1, b: null }, { a: 2, b: "y" }, { a: 3, b: null }]);
});

Deno.test("join() on two keys matches nothing where either key is null", async () => {
  await using home = await engineHome();
  const { rows } = await home.run(
    "@l = VALUES((h: 'a', p: null, n: 1), (h: 'a', p: 80, n: 2));" +
      "@r = VALUES((h: 'a', p: null, m: 'x'), (h: 'a', p: 80, m: 'y'));" +
      "@l | join(@r on left.h = right.h and left.p = right.p) | select(n, m)",
  );
  assert.deepEqual(rows, [{ n: 2, m: "y" }]);
});

const ROWS = `VALUES(${Array.from({ length: 1000 }, (_, i) => `(k: 1, i: ${i})`).join(", ")})`;
const SQUARED = `@a = ${ROWS};
@b = @a | join(@a on left.k = right.k) | select(k, i);
@b | join(@a on left.k = right.k) | select(k, i)`;

Deno.test("a join multiplying rows under a limit answers its 10 rows at once", async () => {
  await using home = await engineHome();
  const started = cpuStopwatch();
  const { rows } = await home.run(`${SQUARED} | limit(10)`);
  assert.equal(rows.length, 10);
  const ms = started();
  assert.ok(ms < 3000, `took ${ms.toFixed(0)} ms`);
});

Deno.test("a join multiplying rows keeps the event loop turning and stops on cancel", async () => {
  await using home = await engineHome();
  const compiled = await compile({ text: SQUARED }, home.context());
  assert.ok(compiled.ok);
  const controller = new AbortController();
  const run = execute(compiled.plan, { signal: controller.signal });
  // The CPU the process spent between two turns of the timer: the time the loop was held by
  // work, which a busy machine taking the process off its core does not stretch.
  let last = cpuMs();
  const gaps: number[] = [];
  const timer = setInterval(() => {
    const now = cpuMs();
    gaps.push(now - last);
    last = now;
  }, 10);
  let rows = 0;
  try {
    await assert.rejects(async () => {
      for await (const batch of run.batches) {
        rows += batch.length;
        assert.ok(batch.length <= 1024, `a batch of ${batch.length} rows`);
        if (rows >= 2_000_000) controller.abort(new DOMException("stopped", "AbortError"));
      }
    }, (e: Error) => e.name === "AbortError");
  } finally {
    clearInterval(timer);
  }
  assert.ok(rows >= 2_000_000 && rows < 2_100_000, `rows before the cancel: ${rows}`);
  // Without the batches' turns the timer waits for the whole join (seconds of CPU). The collector
  // (on other threads too) lengthens a few turns: the bound holds for nearly all.
  gaps.sort((a, b) => a - b);
  const p95 = gaps[Math.floor(gaps.length * 0.95)]!;
  assert.ok(gaps.length > 5, `the timer fired ${gaps.length} times`);
  assert.ok(p95 < 100, `the loop was held ${p95.toFixed(0)} ms of CPU (95th percentile)`);
  assert.ok(gaps[gaps.length - 1]! < 500, `the loop was held ${gaps.at(-1)!.toFixed(0)} ms of CPU`);
});

Deno.test("rows a join multiplies into a build side fail with MEMORY_LIMIT", async () => {
  await using home = await engineHome();
  const text = `@a = ${ROWS};
@b = @a | join(@a on left.k = right.k) | select(k, i);
@a | join(@b on left.k = right.k)`;
  const compiled = await compile(
    { text },
    home.context({ limits: { memoryLimit: 4 * 1024 * 1024 } }),
  );
  assert.ok(compiled.ok);
  const run = execute(compiled.plan, { signal: new AbortController().signal });
  await assert.rejects(
    async () => {
      for await (const _ of run.batches) { /* drain */ }
    },
    (e: unknown) => e instanceof QueryError && e.diagnostic.code === "MEMORY_LIMIT",
  );
});

Deno.test("the row-multiplying join without a limit fails with MEMORY_LIMIT under a small limit", async () => {
  await using home = await engineHome();
  const compiled = await compile(
    { text: SQUARED },
    home.context({ limits: { memoryLimit: 256 * 1024 } }),
  );
  assert.ok(compiled.ok);
  const run = execute(compiled.plan, { signal: new AbortController().signal });
  const started = cpuStopwatch();
  await assert.rejects(
    async () => {
      for await (const _ of run.batches) { /* drain */ }
    },
    (e: unknown) => e instanceof QueryError && e.diagnostic.code === "MEMORY_LIMIT",
  );
  assert.ok(started() < 3000, "it failed at once, not after a billion rows");
});

Deno.test("a joined batch is charged to the memory budget while the consumer holds it", async () => {
  await using home = await engineHome();
  // The build side (1000 small rows) fits; one batch of joined rows does not.
  const compiled = await compile(
    { text: `@a = ${ROWS}; @a | join(@a on left.k = right.k)` },
    home.context({ limits: { memoryLimit: 160 * 1024 } }),
  );
  assert.ok(compiled.ok);
  const run = execute(compiled.plan, { signal: new AbortController().signal });
  await assert.rejects(
    async () => {
      for await (const _ of run.batches) { /* drain */ }
    },
    (e: unknown) =>
      e instanceof QueryError && e.diagnostic.code === "MEMORY_LIMIT" &&
      /join output/.test(e.message),
  );
});
