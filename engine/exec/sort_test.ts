import assert from "node:assert/strict";
import { type SortKeyFn, sortRows } from "./sort.ts";
import { testContext } from "../../tests/support/temp_tree.ts";
import type { Row } from "../values.ts";

async function* batches(rows: Row[], size: number) {
  for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
}

async function collect(source: AsyncIterable<readonly Row[]>): Promise<Row[]> {
  const out: Row[] = [];
  for await (const b of source) out.push(...b);
  return out;
}

const byScore: SortKeyFn[] = [{ fn: (r) => r.score, label: "score", descending: true }];

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
