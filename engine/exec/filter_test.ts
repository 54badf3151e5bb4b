import assert from "node:assert/strict";
import { filterRows } from "./filter.ts";
import { projectRows } from "./project.ts";
import { type ExecContext, TimeSlicer } from "../plan/context.ts";
import { watchLoopGaps } from "../../tests/support/loop_gaps.ts";
import { testContext } from "../../tests/support/temp_tree.ts";
import type { Row } from "../values/values.ts";

async function* of(...batches: Row[][]) {
  for (const b of batches) yield b;
}

/** A condition or expression taking `ms` a row, as a slow regular expression over long lines does. */
const slow = (ms: number) => (row: Row) => {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* work */ }
  return (row.i as number) % 2 === 0;
};

/** Runs `work` with a slicer; returns its result and the longest stretch without a timer firing. */
async function longestStretch<T>(work: (ctx: ExecContext) => Promise<T>) {
  const signal = new AbortController().signal;
  const slicer = new TimeSlicer(signal);
  const gaps = watchLoopGaps(1);
  try {
    const result = await work({ ...testContext(signal), slicer });
    gaps.stop();
    return { result, longest: gaps.longest };
  } finally {
    gaps.stop();
    slicer.stop();
  }
}

const batch = Array.from({ length: 60 }, (_, i) => ({ i }));

Deno.test("filterRows() with a slow condition takes turns of the event loop inside a batch", async () => {
  const { result, longest } = await longestStretch(async (ctx) => {
    const out: Row[] = [];
    for await (const b of filterRows(of(batch), slow(4), { negated: false, ctx })) out.push(...b);
    return out;
  });
  assert.deepEqual(result, batch.filter((r) => r.i % 2 === 0));
  // 60 rows of 4 ms: 240 ms in one go without turns; with them a slice (10-25 ms) and at most 8
  // rows (32 ms) between two looks: room for a loaded machine's preemptions below the bound.
  assert.ok(longest < 120, `the loop waited ${longest.toFixed(0)} ms`);
});

Deno.test("projectRows() with a slow expression takes turns of the event loop inside a batch", async () => {
  const { result, longest } = await longestStretch(async (ctx) => {
    const out: Row[] = [];
    const columns = [{ name: "even", fn: slow(4) }];
    for await (const b of projectRows(of(batch), { columns, copyInput: true } as never, ctx)) {
      out.push(...b);
    }
    return out;
  });
  assert.deepEqual(result, batch.map((r) => ({ i: r.i, even: r.i % 2 === 0 })));
  assert.ok(longest < 120, `the loop waited ${longest.toFixed(0)} ms`);
});
