/**
 * Token requests follow the data requests' retry policy, one is in flight per client and
 * resource, and a token that expires mid-paging is replaced and the page asked again.
 */

import assert from "node:assert/strict";
import { allRecords, baseStore, graphIds, harness, HOUR, NOW } from "./harness.ts";

const FROM = NOW - 4 * HOUR - 30 * 60_000;

function tokenPosts(h: Awaited<ReturnType<typeof harness>>) {
  return h.emulator.requests.filter((r) => r.api === "token" && r.method === "POST");
}

Deno.test("a token endpoint that is temporarily unavailable (AADSTS90033) is retried, and the query succeeds", async () => {
  const h = await harness({ faults: [{ kind: "token-unavailable", times: 2 }] });
  try {
    await h.writeDefinition("corp", baseStore({ maxErrorRetries: 3 }));
    const { files, warnings } = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: FROM,
      to: FROM + 2 * HOUR,
    });
    assert.deepEqual(warnings, []);
    assert.equal(tokenPosts(h).length, 3, "two 503s, then the token");
    assert.deepEqual(tokenPosts(h).map((r) => r.status), [503, 503, 200]);
    const { ids } = await allRecords(h, files);
    assert.deepEqual(ids.sort(), graphIds(h, "audits", FROM, FROM + 2 * HOUR));
  } finally {
    await h.close();
  }
});

Deno.test("a token endpoint's Retry-After is waited out before the token request is retried", async () => {
  const h = await harness({ faults: [{ kind: "token-unavailable", retryAfter: "1" }] });
  try {
    await h.writeDefinition("corp", baseStore());
    const { warnings } = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: FROM,
      to: FROM + HOUR,
    });
    assert.deepEqual(warnings, []);
    const [first, second] = tokenPosts(h);
    assert.ok(second!.at - first!.at >= 950, `waited ${second!.at - first!.at} ms`);
  } finally {
    await h.close();
  }
});

Deno.test("a token outage past maxErrorRetries loses the hours with an ERROR warning, not the query", async () => {
  const h = await harness({ faults: [{ kind: "token-unavailable", times: 50 }] });
  try {
    await h.writeDefinition("corp", baseStore({ maxErrorRetries: 2 }));
    const { files, warnings } = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: FROM,
      to: FROM + 2 * HOUR,
    });
    assert.equal(files.length, 0);
    assert.equal(tokenPosts(h).length, 3, "the first try and two retries");
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.equal(warnings[0]!.level, "ERROR");
    assert.match(warnings[0]!.message, /log 'audits', 2 hours from .* given up/);
    assert.match(warnings[0]!.message, /AADSTS90033/);
    assert.equal(h.stats.lostHours, 2);
  } finally {
    await h.close();
  }
});

Deno.test("ten cold queries at once send one token request", async () => {
  const h = await harness();
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const runs = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        h.list("cloudapi://corp/directory_service/audits/**", {
          from: FROM - i * HOUR,
          to: FROM - i * HOUR + HOUR,
        })),
    );
    assert.deepEqual(runs.flatMap((r) => r.warnings), []);
    assert.equal(tokenPosts(h).length, 1);
  } finally {
    await h.close();
  }
});

Deno.test("a token that expires mid-paging is replaced and the page asked again, every record once", async () => {
  const h = await harness({ faults: [{ kind: "token-expired" }] });
  try {
    await h.writeDefinition("corp", baseStore());
    const { files, warnings } = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: FROM,
      to: FROM + 2 * HOUR,
    });
    assert.deepEqual(warnings, []);
    assert.equal(h.emulator.fired.length, 1, "the token expired on a later page");
    assert.equal(tokenPosts(h).length, 2, "a fresh token");
    const expired = h.emulator.requests.find((r) => r.status === 401)!;
    assert.ok(expired.url.includes("skiptoken"));
    const again = h.emulator.requests.filter((r) => r.url === expired.url);
    assert.deepEqual(again.map((r) => r.status), [401, 200], "the same page, again");
    const { ids, duplicates } = await allRecords(h, files);
    assert.deepEqual(duplicates, []);
    assert.deepEqual(ids.sort(), graphIds(h, "audits", FROM, FROM + 2 * HOUR));
  } finally {
    await h.close();
  }
});
