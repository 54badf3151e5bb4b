/**
 * connectTimeout and readTimeout each apply on their own; 0 makes that one infinite and leaves
 * the other in force. Also: a throttling answer's Retry-After is waited out.
 */

import assert from "node:assert/strict";
import { allRecords, baseStore, harness, HOUR, NOW } from "./harness.ts";

const FROM = NOW - 3 * HOUR - 30 * 60_000; // 09:00
const TO = FROM + HOUR;

type H = Awaited<ReturnType<typeof harness>>;

function expected(h: H): string[] {
  return h.emulator.data("contoso.onmicrosoft.com").audits
    .filter((s) => s.time >= FROM && s.time < TO && s.availableAt <= h.clock.now)
    .map((s) => String(s.record.id)).sort();
}

Deno.test("readTimeout applies when connectTimeout is 0", async () => {
  const h = await harness({
    faults: [{ kind: "slow", delayMs: 60_000, match: "directoryAudits" }],
  });
  try {
    await h.writeDefinition("corp", baseStore({ connectTimeout: 0, readTimeout: "1 sec" }));
    const started = performance.now();
    const { files, warnings } = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: FROM,
      to: TO,
    });
    const elapsed = performance.now() - started;
    assert.deepEqual(warnings, []);
    // The slow answer would take a minute: given up after ~1 s (a busy machine adds seconds).
    assert.ok(elapsed < 20_000, `the slow answer was given up after ~1 s (took ${elapsed} ms)`);
    assert.equal(h.stats.retries, 1);
    assert.ok(h.emulator.requests.some((r) => r.aborted), "the slow request was abandoned");
    assert.deepEqual((await allRecords(h, files)).ids.sort(), expected(h));
  } finally {
    await h.close();
  }
});

Deno.test("connectTimeout does not cut a slow answer short when readTimeout is 0", async () => {
  const h = await harness({
    faults: [{ kind: "slow", delayMs: 1_500, match: "directoryAudits" }],
  });
  try {
    await h.writeDefinition("corp", baseStore({ connectTimeout: "1 sec", readTimeout: 0 }));
    const { files, warnings } = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: FROM,
      to: TO,
    });
    assert.deepEqual(warnings, []);
    assert.equal(h.stats.retries, 0, "the 1.5 s answer was waited for");
    assert.ok(!h.emulator.requests.some((r) => r.aborted));
    assert.deepEqual((await allRecords(h, files)).ids.sort(), expected(h));
  } finally {
    await h.close();
  }
});

Deno.test("the request after a 429 waits for its Retry-After", async () => {
  const h = await harness({
    faults: [{ kind: "429", retryAfter: "0.6", match: "directoryAudits" }],
  });
  try {
    await h.writeDefinition("corp", baseStore());
    const { files } = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: FROM,
      to: TO,
    });
    const graph = h.emulator.requests.filter((r) => r.api === "graph");
    const i = graph.findIndex((r) => r.status === 429);
    assert.ok(i >= 0 && i + 1 < graph.length, "a throttled request and one after it");
    const gap = graph[i + 1]!.at - graph[i]!.at;
    // Without Retry-After the backoff would be 20 ms (backoffMs 10).
    assert.ok(gap >= 580, `waited ${gap} ms after a Retry-After of 0.6 s`);
    assert.equal(h.stats.throttled, 1);
    assert.deepEqual((await allRecords(h, files)).ids.sort(), expected(h));
  } finally {
    await h.close();
  }
});
