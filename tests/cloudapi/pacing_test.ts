import assert from "node:assert/strict";
import { baseStore, harness, HOUR, NOW } from "./harness.ts";

Deno.test("paced requests stay within the configured limit and draw no throttling answers", async () => {
  // The emulator allows 20 requests per second per tenant; the store asks for the same.
  const h = await harness({ graphLimit: { limit: 20, unitMs: 1_000 } });
  try {
    await h.writeDefinition(
      "corp",
      baseStore({ directoryRateLimit: 20, directoryRateTimeunit: "1 sec" }),
    );
    const started = performance.now();
    await h.list("cloudapi://corp/directory_service/**", { from: NOW - 12 * HOUR, to: NOW });
    const elapsed = performance.now() - started;
    const graph = h.emulator.requests.filter((r) => r.api === "graph");
    assert.ok(graph.length > 20, `enough requests to bind (${graph.length})`);
    assert.equal(h.emulator.throttledCount(), 0);
    for (const r of graph) {
      const inWindow = graph.filter((q) => q.at > r.at - 1_000 && q.at <= r.at).length;
      assert.ok(inWindow <= 20, `at most 20 requests in any second (saw ${inWindow})`);
    }
    // The pacing is near the limit, not far below it.
    assert.ok(graph.length / (elapsed / 1000) > 14, `rate ${graph.length / (elapsed / 1000)}/s`);
  } finally {
    await h.close();
  }
});
