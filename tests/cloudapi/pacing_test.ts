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
    await h.list("cloudapi://corp/directory_service/**", { from: NOW - 12 * HOUR, to: NOW });
    const graph = h.emulator.requests.filter((r) => r.api === "graph");
    assert.ok(graph.length > 20, `enough requests to bind (${graph.length})`);
    assert.equal(h.emulator.throttledCount(), 0);
    for (const r of graph) {
      const inWindow = graph.filter((q) => q.at > r.at - 1_000 && q.at <= r.at).length;
      assert.ok(inWindow <= 20, `at most 20 requests in any second (saw ${inWindow})`);
    }
    // That the pacing is near the limit and not far below it is pinned in simulated time
    // (actors/connector_machine_test.ts): a token comes back a unit after its request completed,
    // so the rate reached here depends on the machine's load, and a bound on it would be flaky.
  } finally {
    await h.close();
  }
});
