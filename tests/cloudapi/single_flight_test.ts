/** One fetch per hour at a time: a second query over the same hours waits and reads the file. */

import assert from "node:assert/strict";
import { allRecords, baseStore, graphIds, harness, HOUR, NOW } from "./harness.ts";

const FROM = NOW - 5 * HOUR - 30 * 60_000; // 07:00, a whole hour
const TO = FROM + 3 * HOUR;

Deno.test("two concurrent queries over the same hours fetch each hour once", async () => {
  // A slow first page keeps the first query's fetch under way while the second one starts.
  const h = await harness({ faults: [{ kind: "slow", delayMs: 300, match: "directoryAudits" }] });
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const uri = "cloudapi://corp/directory_service/audits/**";
    const [a, b] = await Promise.all([
      h.list(uri, { from: FROM, to: TO }),
      h.list(uri, { from: FROM, to: TO }),
    ]);
    assert.deepEqual([...a.warnings, ...b.warnings], []);
    const graph = h.emulator.requests.filter((r) => r.api === "graph");
    const firstPages = graph.filter((r) => !r.url.includes("skiptoken"));
    assert.equal(firstPages.length, 3, "one window request per hour");
    assert.equal(new Set(graph.map((r) => r.url)).size, graph.length, "no page asked twice");
    for (const run of [a, b]) {
      const { ids, duplicates } = await allRecords(h, run.files);
      assert.deepEqual(duplicates, []);
      assert.deepEqual(ids.sort(), graphIds(h, "audits", FROM, TO));
    }
  } finally {
    await h.close();
  }
});

Deno.test("two concurrent queries over one suite log list its content once", async () => {
  const h = await harness({
    faults: [{ kind: "slow", delayMs: 300, match: "subscriptions/list" }],
  });
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const uri = "cloudapi://corp/productivity_suite/exchange/**";
    const [a, b] = await Promise.all([
      h.list(uri, { from: FROM, to: TO }),
      h.list(uri, { from: FROM, to: TO }),
    ]);
    assert.deepEqual([...a.warnings, ...b.warnings], []);
    const manage = h.emulator.requests.filter((r) => r.api === "manage");
    assert.equal(new Set(manage.map((r) => r.url)).size, manage.length, "nothing asked twice");
    const first = await allRecords(h, a.files, "Id");
    const second = await allRecords(h, b.files, "Id");
    assert.deepEqual(first.duplicates, []);
    assert.deepEqual(second.ids.sort(), first.ids.sort());
  } finally {
    await h.close();
  }
});
