import assert from "node:assert/strict";
import { filterRows, ROWS_PER_LOOK } from "./filter.ts";
import { projectRows } from "./project.ts";
import { type ExecContext, TimeSlicer } from "../plan/context.ts";
import { testContext } from "../../tests/support/temp_tree.ts";
import type { Row } from "../values/values.ts";

async function* of(...batches: Row[][]) {
  for (const b of batches) yield b;
}

/** Rows evaluated since a timer last ran, and the most seen: how long the loop went without a turn. */
const stretch = { rows: 0, longest: 0 };

/** A condition or expression taking `ms` a row, as a slow regular expression over long lines does. */
const slow = (ms: number) => (row: Row) => {
  stretch.longest = Math.max(stretch.longest, ++stretch.rows);
  const end = performance.now() + ms;
  while (performance.now() < end) { /* work */ }
  return (row.i as number) % 2 === 0;
};

/**
 * Runs `work` with a slicer; returns its result and the most rows evaluated without a timer
 * running between them. Counted in rows, not milliseconds: a loaded machine that takes the
 * process off its core for 100 ms changes the time between two turns, not the rows.
 */
async function longestStretch<T>(work: (ctx: ExecContext) => Promise<T>) {
  const signal = new AbortController().signal;
  const slicer = new TimeSlicer(signal);
  stretch.rows = 0;
  stretch.longest = 0;
  const timer = setInterval(() => stretch.rows = 0, 1);
  try {
    const result = await work({ ...testContext(signal), slicer });
    return { result, longest: stretch.longest };
  } finally {
    clearInterval(timer);
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
  // 60 rows of 4 ms: all 60 in one go without turns; with them a slice (10-25 ms) ends within
  // the ROWS_PER_LOOK (8) rows between two looks.
  assert.ok(longest <= 2 * ROWS_PER_LOOK, `${longest} rows without a turn of the loop`);
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
  assert.ok(longest <= 2 * ROWS_PER_LOOK, `${longest} rows without a turn of the loop`);
});
