import assert from "node:assert/strict";
import fc from "fast-check";
import { type SortKeyFn, sortRows } from "./sort.ts";
import { testContext } from "../../tests/support/temp_tree.ts";
import { cpuMs, watchLoopGaps } from "../../tests/support/loop_gaps.ts";
import type { Row } from "../values/values.ts";
import { compareValues } from "../values/value_ops.ts";

async function* batches(rows: Row[], size: number) {
  for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
}

async function collect(source: AsyncIterable<readonly Row[]>): Promise<Row[]> {
  const out: Row[] = [];
  for await (const b of source) out.push(...b);
  return out;
}

const byScore: SortKeyFn[] = [{ fn: (r) => r.score!, label: "score", descending: true }];

Deno.test("sortRows() with keep gives the first rows of the full sort, ties in input order", async () => {
  // Scores with many ties and nulls, so that stability and nulls-last both matter.
  const rows: Row[] = Array.from({ length: 5000 }, (_, i) => ({
    id: i,
    score: i % 7 === 0 ? null : (i * 7919) % 13,
  }));
  const full = await collect(sortRows(batches(rows, 512), byScore, testContext()));
  for (const keep of [0, 1, 10, 400, 5000, 6000]) {
    const ctx = testContext();
    const top = await collect(sortRows(batches(rows, 512), byScore, ctx, { keep }));
    assert.deepEqual(top, full.slice(0, keep), `keep ${keep}`);
    assert.equal(ctx.memory.used, 0);
  }
});

/** What sortRows must give: one stable sort of the whole input, nulls last in both directions. */
function plainSort(rows: Row[], keys: readonly SortKeyFn[]): Row[] {
  return rows.map((row, i) => ({ row, i })).sort((a, b) => {
    for (const k of keys) {
      const x = k.fn(a.row), y = k.fn(b.row);
      if (x === y) continue;
      if (x === null) return 1;
      if (y === null) return -1;
      const c = compareValues(x, y);
      if (c === 0) continue;
      return k.descending ? -c : c;
    }
    return a.i - b.i;
  }).map((e) => e.row);
}

Deno.test("sortRows() in runs and a heap merge gives what one plain stable sort gives (property)", async () => {
  const value = fc.oneof(fc.constant(null), fc.integer({ min: -3, max: 3 }));
  const text = fc.oneof(fc.constant(null), fc.constantFrom("", "a", "b", "ab", "B"));
  // A first key of one kind is compared inline (numbers without NaN, or texts), any other the
  // generic way: mixed kinds, NaN and -0 must order alike either way.
  const mixed = fc.oneof(value, text, fc.constantFrom(NaN, -0, 0.5, true, false));
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ x: value, s: text, m: mixed }), { maxLength: 300 }),
      fc.array(fc.record({ field: fc.constantFrom("x", "s", "m"), descending: fc.boolean() }), {
        minLength: 1,
        maxLength: 2,
      }),
      fc.integer({ min: 1, max: 40 }),
      fc.integer({ min: 1, max: 50 }),
      fc.option(fc.integer({ min: 0, max: 320 }), { nil: undefined }),
      async (values, keySpecs, runRows, batchRows, keep) => {
        const rows: Row[] = values.map((v, id) => ({ id, ...v }));
        const keys: SortKeyFn[] = keySpecs.map(({ field, descending }) => ({
          fn: (r: Row) => r[field] ?? null,
          label: field,
          descending,
        }));
        const expected = plainSort(rows, keys);
        const ctx = testContext();
        // insertTop 4: keep above it takes the buffer that is cut back to the best rows.
        const got = await collect(
          sortRows(batches(rows, batchRows), keys, ctx, { keep, runRows, insertTop: 4 }),
        );
        assert.deepEqual(got, keep === undefined ? expected : expected.slice(0, keep));
        assert.equal(ctx.memory.used, 0);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("sortRows() of 300 000 rows gives the event loop turns and stops when cancelled", async () => {
  const rows: Row[] = Array.from(
    { length: 300_000 },
    (_, i) => ({ id: i, score: (i * 7919) % 100_003 }),
  );
  const gaps = watchLoopGaps(2);
  const started = performance.now();
  try {
    const out = await collect(sortRows(batches(rows, 1024), byScore, testContext()));
    assert.equal(out.length, rows.length);
    for (let i = 1; i < out.length; i++) {
      assert.ok((out[i - 1]!.score as number) >= (out[i]!.score as number));
    }
  } finally {
    gaps.stop();
  }
  const ms = performance.now() - started;
  // Slices of 10 ms; a run of 4096 rows may stretch one a little. CPU time, not wall time: a
  // busy machine taking the process off its core is no longer turn of the loop withheld.
  assert.ok(
    gaps.longestCpu < Math.max(60, ms / 5),
    `the loop was held ${gaps.longestCpu.toFixed(0)} ms of CPU (sort ${ms.toFixed(0)} ms)`,
  );

  const abort = new AbortController();
  const ctx = testContext(abort.signal);
  let abortedAtCpu = 0;
  setTimeout(() => {
    abortedAtCpu = cpuMs();
    abort.abort(new DOMException("cancelled", "AbortError"));
  }, 20);
  await assert.rejects(collect(sortRows(batches(rows, 1024), byScore, ctx)), {
    name: "AbortError",
  });
  const after = cpuMs() - abortedAtCpu;
  assert.ok(after < 100, `the sort worked on ${after.toFixed(0)} ms of CPU after the abort`);
  assert.equal(ctx.memory.used, 0);
});
