/**
 * Nothing is lost silently: every hour given up is a warning naming it and is counted, and a
 * throttling answer's Retry-After is honoured as seconds or as an HTTP date.
 */

import assert from "node:assert/strict";
import { allRecords, baseStore, graphIds, harness, HOUR, NOW } from "./harness.ts";

const FROM = NOW - 4 * HOUR - 30 * 60_000;

Deno.test("under sustained throttling every hour given up is a warning naming it, and counted", async () => {
  const h = await harness({
    faults: [{ kind: "429", retryAfter: "0", match: "directoryAudits", times: 1_000 }],
  });
  try {
    await h.writeDefinition("corp", baseStore());
    const { files, warnings } = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: FROM,
      to: FROM + 2 * HOUR,
    });
    assert.equal(files.length, 0);
    assert.equal(warnings.length, 2, JSON.stringify(warnings));
    for (const [i, w] of warnings.entries()) {
      assert.equal(w.level, "WARN");
      const hour = new Date(FROM + i * HOUR).toISOString();
      assert.ok(w.message.includes(`hour ${hour} given up`), w.message);
      assert.match(w.message, /still throttled after \d+ waits/);
    }
    assert.equal(h.stats.lostHours, 2);
  } finally {
    await h.close();
  }
});

Deno.test("a Retry-After given as an HTTP date is waited out, counted from the answer's Date", async () => {
  // The emulator's clock (and Date header) is months away from the real one: the wait must
  // come from the two dates of the answer, not from our clock.
  const h = await harness();
  try {
    h.emulator.inject({
      kind: "429",
      match: "directoryAudits",
      retryAfter: new Date(NOW + 2_000).toUTCString(),
    });
    await h.writeDefinition("corp", baseStore());
    const { files, warnings } = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: FROM,
      to: FROM + HOUR,
    });
    assert.deepEqual(warnings, []);
    const graph = h.emulator.requests.filter((r) => r.api === "graph");
    assert.equal(graph[0]!.status, 429);
    const waited = graph[1]!.at - graph[0]!.at;
    assert.ok(waited >= 1_900 && waited < 4_000, `waited ${waited} ms for a 2 s Retry-After`);
    const { ids } = await allRecords(h, files);
    assert.deepEqual(ids.sort(), graphIds(h, "audits", FROM, FROM + HOUR));
  } finally {
    await h.close();
  }
});

Deno.test("a Retry-After given in seconds is waited out", async () => {
  const h = await harness({ faults: [{ kind: "429", match: "directoryAudits", retryAfter: "1" }] });
  try {
    await h.writeDefinition("corp", baseStore());
    const { warnings } = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: FROM,
      to: FROM + HOUR,
    });
    assert.deepEqual(warnings, []);
    const graph = h.emulator.requests.filter((r) => r.api === "graph");
    const waited = graph[1]!.at - graph[0]!.at;
    assert.ok(waited >= 950, `waited ${waited} ms for a 1 s Retry-After`);
  } finally {
    await h.close();
  }
});
