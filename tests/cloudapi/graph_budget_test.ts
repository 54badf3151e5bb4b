/**
 * Directory and activity logs share one Graph budget per tenant (Microsoft throttles
 * `auditLogs` per app and tenant across v1.0 and beta), and its rate adapts to throttling.
 */

import assert from "node:assert/strict";
import { allRecords, baseStore, graphIds, harness, HOUR, NOW, TENANT } from "./harness.ts";
import { tenantKey } from "../../actors/connector_pool.ts";
import type { RequestRecord } from "../emulator/emulator.ts";

const FROM = NOW - 8 * HOUR - 30 * 60_000;
const TO = FROM + 6 * HOUR;
/** Nine whole hours, for a run long enough to settle. */
const LONG_FROM = NOW - 20 * HOUR - 30 * 60_000;

/** The most requests of `requests` in any `unitMs` window. */
function busiest(requests: RequestRecord[], unitMs: number): number {
  const times = requests.map((r) => r.at).sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= unitMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

Deno.test("directory and activity logs of one tenant share one Graph budget and stay within it", async () => {
  const h = await harness(
    { graphLimit: { limit: 8, unitMs: 1_000 } },
    "enterprise",
    () => ({ graphRateLimit: 8, graphRateTimeunit: "1 sec" }),
  );
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const [directory, activity] = await Promise.all([
      h.list("cloudapi://corp/directory_service/audits/**", { from: FROM, to: TO }),
      h.list("cloudapi://corp/cloud_activity/**", { from: FROM, to: TO }),
    ]);
    assert.deepEqual([...directory.warnings, ...activity.warnings], []);
    const graph = h.emulator.requests.filter((r) => r.api === "graph");
    assert.ok(graph.some((r) => r.path.startsWith("/v1.0/")), "v1.0 was called");
    assert.ok(graph.some((r) => r.path.startsWith("/beta/")), "beta was called");
    assert.ok(graph.length > 16, `enough requests to bind (${graph.length})`);
    assert.equal(h.emulator.throttledCount(), 0, "no throttling answer");
    assert.ok(busiest(graph, 1_000) <= 8, `at most 8 in any second (${busiest(graph, 1_000)})`);
    const audits = await allRecords(h, directory.files);
    assert.deepEqual(audits.duplicates, []);
    assert.deepEqual(audits.ids.sort(), graphIds(h, "audits", FROM, TO));
    const ni = await allRecords(h, activity.files);
    assert.deepEqual(ni.duplicates, []);
    assert.deepEqual(ni.ids.sort(), graphIds(h, "nonInteractiveUser", FROM, TO));
  } finally {
    await h.close();
  }
});

Deno.test("a tenant whose real Graph limit is below the configured one settles under it with no answer lost", async () => {
  // Configured 24 per second; the tenant really allows 6. Six queries at once keep it busy.
  const h = await harness(
    {
      graphLimit: { limit: 6, unitMs: 1_000 },
      seed: { from: NOW - 48 * HOUR, to: NOW, perHour: 14 },
    },
    "enterprise",
    () => ({ graphRateLimit: 24, graphRateTimeunit: "1 sec" }),
  );
  const key = tenantKey(h.emulator.guidOf(TENANT), "graph");
  const limits: number[] = [];
  const sampler = setInterval(() => limits.push(h.pool.limitOf(key)?.limit ?? 24), 50);
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const ranges = [0, 1, 2].map((i) => LONG_FROM + i * 3 * HOUR);
    const runs = await Promise.all(
      ranges.flatMap((from) =>
        ["directory_service/audits/**", "cloud_activity/**"].map((uri) =>
          h.list(`cloudapi://corp/${uri}`, { from, to: from + 3 * HOUR })
        )
      ),
    );
    clearInterval(sampler);
    assert.deepEqual(runs.flatMap((r) => r.warnings), [], "no hour given up");
    assert.equal(h.stats.lostHours ?? 0, 0);
    assert.ok(Math.min(...limits) <= 6, `the rate came down to the real limit (${limits})`);
    assert.ok(Math.min(...limits) >= 3, `and not far below it (${limits})`);
    // Settled after the first bursts: then a throttling answer is a rare probe (without
    // adaptation, each of the six queries meets one about every second).
    const graph = h.emulator.requests.filter((r) => r.api === "graph");
    const start = graph[0]!.at;
    const seconds = (graph[graph.length - 1]!.at - start) / 1000;
    assert.ok(seconds > 6, `long enough to settle (${seconds} s)`);
    const late = graph.filter((r) => r.status === 429 && r.at > start + 3_000).length;
    assert.ok(late <= 2 + (seconds - 3) / 2, `${late} throttling answers after 3 s of ${seconds}`);
    const to = LONG_FROM + 9 * HOUR;
    const audits = await allRecords(h, runs.filter((_, i) => i % 2 === 0).flatMap((r) => r.files));
    assert.deepEqual(audits.duplicates, []);
    assert.deepEqual(audits.ids.sort(), graphIds(h, "audits", LONG_FROM, to));
    const ni = await allRecords(h, runs.filter((_, i) => i % 2 === 1).flatMap((r) => r.files));
    assert.deepEqual(ni.duplicates, []);
    assert.deepEqual(ni.ids.sort(), graphIds(h, "nonInteractiveUser", LONG_FROM, to));
  } finally {
    clearInterval(sampler);
    await h.close();
  }
});

Deno.test("stores naming one tenant by domain and by GUID share its Graph budget", async () => {
  const h = await harness(
    { graphLimit: { limit: 6, unitMs: 1_000 } },
    "enterprise",
    () => ({ graphRateLimit: 6, graphRateTimeunit: "1 sec" }),
  );
  try {
    await h.writeDefinition("byname", baseStore());
    await h.writeDefinition("byguid", baseStore({ tenantId: h.emulator.guidOf(TENANT) }));
    const runs = await Promise.all(
      ["byname", "byguid"].map((store) =>
        h.list(`cloudapi://${store}/directory_service/audits/**`, { from: FROM, to: TO })
      ),
    );
    assert.deepEqual(runs.flatMap((r) => r.warnings), []);
    const graph = h.emulator.requests.filter((r) => r.api === "graph");
    assert.ok(graph.length > 12, `enough requests to bind (${graph.length})`);
    assert.equal(h.emulator.throttledCount(), 0);
    assert.ok(busiest(graph, 1_000) <= 6, `at most 6 in any second (${busiest(graph, 1_000)})`);
  } finally {
    await h.close();
  }
});
