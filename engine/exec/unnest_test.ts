import assert from "node:assert/strict";
import { unnestRows } from "./unnest.ts";
import { BATCH_ROWS, TimeSlicer } from "../plan/context.ts";
import { testContext } from "../../tests/support/temp_tree.ts";
import type { Row } from "../values/values.ts";

async function* of(...batches: Row[][]) {
  for (const b of batches) yield b;
}

Deno.test("unnestRows() hands a huge array out in batches of at most BATCH_ROWS, in order", async () => {
  const big = Array.from({ length: 5000 }, (_, i) => i);
  const signal = new AbortController().signal;
  const slicer = new TimeSlicer(signal);
  const ctx = { ...testContext(signal), slicer };
  const sizes: number[] = [];
  const values: unknown[] = [];
  try {
    const rows = unnestRows(
      of([{ k: 1, a: big }, { k: 2, a: [] }], [{ k: 3, a: [7, 8] }]),
      { array: (r) => r.a!, name: "x" },
      ctx,
    );
    for await (const batch of rows) {
      sizes.push(batch.length);
      for (const r of batch) values.push([r.k, r.x]);
    }
  } finally {
    slicer.stop();
  }
  assert.ok(sizes.every((n) => n <= BATCH_ROWS), `batches of ${sizes.join(", ")}`);
  assert.deepEqual(values, [...big.map((x) => [1, x]), [3, 7], [3, 8]]);
  // The first input batch's rows go out before the second batch is read.
  assert.deepEqual(sizes, [1024, 1024, 1024, 1024, 904, 2]);
});
