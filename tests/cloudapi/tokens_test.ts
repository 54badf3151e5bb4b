/** Graph and the Management Activity API each get a token of their own, for their own origin. */

import assert from "node:assert/strict";
import { allRecords, baseStore, harness, HOUR, NOW } from "./harness.ts";

Deno.test("one token is acquired per API resource, each with that API's scope", async () => {
  const manageOf = (url: string) => url.replace("127.0.0.1", "localhost");
  const h = await harness({}, "enterprise", (url) => ({
    graphHost: url,
    manageHost: manageOf(url),
  }));
  const graph = h.emulator.url;
  const manage = manageOf(graph);
  try {
    assert.notEqual(graph, manage);
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const from = NOW - 3 * HOUR - 30 * 60_000;
    for (const log of ["directory_service/audits", "productivity_suite/exchange"]) {
      const { files, warnings } = await h.list(`cloudapi://corp/${log}/**`, {
        from,
        to: from + 2 * HOUR,
      });
      assert.deepEqual(warnings, [], log);
      const { ids } = await allRecords(h, files, log.startsWith("directory") ? "id" : "Id");
      assert.ok(ids.length > 0, log);
    }
    assert.deepEqual(
      h.emulator.issuedScopes().sort(),
      [
        `${graph}/.default`,
        `${manage}/.default`,
      ].sort(),
    );
    assert.ok(h.emulator.requests.every((r) => r.status !== 401), "no token used off its API");
  } finally {
    await h.close();
  }
});

Deno.test("every request of a store carries its userAgent, token requests included", async () => {
  const h = await harness();
  try {
    await h.writeDefinition("corp", baseStore({ userAgent: "TrawlTest/9.9 (audit)" }));
    const from = NOW - 3 * HOUR;
    const { warnings } = await h.list("cloudapi://corp/directory_service/audits/**", {
      from,
      to: from + HOUR,
    });
    assert.deepEqual(warnings, []);
    const tokenRequests = h.emulator.requests.filter((r) => r.api === "token");
    assert.ok(tokenRequests.length > 0, "a token was requested");
    for (const r of h.emulator.requests.filter((r) => r.api !== "admin")) {
      assert.equal(r.userAgent, "TrawlTest/9.9 (audit)", `${r.method} ${r.path}`);
    }
  } finally {
    await h.close();
  }
});
