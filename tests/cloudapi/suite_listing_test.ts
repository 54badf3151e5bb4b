/**
 * How the Management Activity API is walked: content listed in windows of at most 24 hours
 * that tile the asked span, never more than 167 h 55 min back (with a warning), expired
 * content skipped with a warning, and requests paced under the provider's limit.
 */

import assert from "node:assert/strict";
import { allRecords, baseStore, harness, HOUR, NOW } from "./harness.ts";
import { SUITE_MAX_AGE_MS } from "../../connectors/cloudapi/suite_fetcher.ts";

const DAY = 24 * HOUR;
const TENANT = "contoso.onmicrosoft.com";

type H = Awaited<ReturnType<typeof harness>>;

/** [start, end) of every first-page content listing, in order. */
function listingWindows(h: H): [number, number][] {
  return h.emulator.requests
    .filter((r) => r.path.endsWith("/subscriptions/content") && !r.url.includes("nextPage="))
    .map((r) => {
      const q = new URL(r.url, "http://x").searchParams;
      return [Date.parse(q.get("startTime")! + "Z"), Date.parse(q.get("endTime")! + "Z")];
    });
}

function suiteIds(h: H, from: number, to: number, skip = new Set<string>()): string[] {
  return h.emulator.data(TENANT).blobs
    .filter((b) => b.contentType === "Audit.Exchange" && b.created <= NOW)
    .filter((b) => !skip.has(b.contentId))
    .flatMap((b) => b.records)
    .filter((r) => {
      const t = Date.parse(String(r.CreationTime) + "Z");
      return t >= from && t < to;
    })
    .map((r) => String(r.Id)).sort();
}

Deno.test("content is listed in windows of at most 24 hours that tile the span", async () => {
  const h = await harness();
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const from = NOW - 40 * HOUR - 30 * 60_000;
    const { warnings } = await h.list("cloudapi://corp/productivity_suite/exchange/**", {
      from,
      to: NOW,
    });
    assert.deepEqual(warnings, []);
    const windows = listingWindows(h);
    assert.ok(windows.length >= 2, `several windows (${windows.length})`);
    assert.equal(windows[0]![0], from);
    assert.equal(windows.at(-1)![1], NOW);
    for (const [i, [start, end]] of windows.entries()) {
      assert.ok(end > start && end - start <= DAY, `window ${i} is at most 24 hours`);
      if (i > 0) assert.equal(start, windows[i - 1]![1], `window ${i} starts where ${i - 1} ended`);
    }
  } finally {
    await h.close();
  }
});

Deno.test("content older than 167 h 55 min is not asked for, and the query says so", async () => {
  const h = await harness();
  try {
    await h.writeDefinition("corp", baseStore({ suiteTimeWindow: "10 days" }));
    const { warnings } = await h.list("cloudapi://corp/productivity_suite/exchange/**", {
      from: NOW - 8 * DAY,
      to: NOW - 6 * DAY,
    });
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.equal(warnings[0]!.level, "WARN");
    assert.match(warnings[0]!.message, /older than 7 days cannot be listed/);
    const windows = listingWindows(h);
    assert.ok(windows.length > 0);
    assert.equal(windows[0]![0], NOW - SUITE_MAX_AGE_MS);
    assert.ok(windows.every(([start]) => start >= NOW - SUITE_MAX_AGE_MS));
    assert.ok(h.emulator.requests.every((r) => r.status < 400), "no request was refused");
  } finally {
    await h.close();
  }
});

Deno.test("expired content (AF20051) is skipped with a warning and the rest is read", async () => {
  const h = await harness({ faults: [{ kind: "expired-content", match: "/blobs/" }] });
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const from = NOW - 6 * HOUR - 30 * 60_000;
    const to = NOW - 30 * 60_000;
    const { files, warnings } = await h.list("cloudapi://corp/productivity_suite/exchange/**", {
      from,
      to,
    });
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.match(warnings[0]!.message, /lost a content blob: 400 AF20051/);
    assert.equal(h.emulator.fired.length, 1);
    const expired = decodeURIComponent(h.emulator.fired[0]!.url.split("/")[3]!.split("?")[0]!);
    const { ids, duplicates } = await allRecords(h, files, "Id");
    assert.deepEqual(duplicates, []);
    const expected = suiteIds(h, from, to, new Set([expired]));
    assert.ok(expected.length > 0);
    assert.deepEqual(ids.filter((id) => expected.includes(id)).sort(), expected);
    const lost = suiteIds(h, from, to).filter((id) => !expected.includes(id));
    assert.ok(lost.every((id) => !ids.includes(id)), "only the expired blob's records are missing");
  } finally {
    await h.close();
  }
});

Deno.test("suite requests are paced under the provider's limit and draw no throttling", async () => {
  const h = await harness({ manageLimit: { limit: 8, unitMs: 1_000 } });
  try {
    await h.writeDefinition(
      "corp",
      baseStore({ suiteRateLimit: 8, suiteRateTimeunit: "1 sec", fileNameIncludesHour: true }),
    );
    const { warnings } = await h.list("cloudapi://corp/productivity_suite/exchange/**", {
      from: NOW - 6 * HOUR,
      to: NOW,
    });
    assert.deepEqual(warnings, []);
    const manage = h.emulator.requests.filter((r) => r.api === "manage");
    assert.ok(manage.length > 8, `enough requests to bind (${manage.length})`);
    assert.equal(h.emulator.throttledCount(), 0);
    assert.equal(h.stats.throttled, 0);
    for (const r of manage) {
      const inWindow = manage.filter((q) => q.at > r.at - 1_000 && q.at <= r.at).length;
      assert.ok(inWindow <= 8, `at most 8 requests in any second (saw ${inWindow})`);
    }
  } finally {
    await h.close();
  }
});

Deno.test("'Tenant … does not exist' is reported with the hint that unified audit logging is off", async () => {
  const h = await harness({ faults: [{ kind: "tenant-not-found", match: "subscriptions/start" }] });
  try {
    await h.writeDefinition("corp", baseStore());
    const { files, warnings } = await h.list("cloudapi://corp/productivity_suite/exchange/**", {
      from: NOW - 2 * HOUR,
      to: NOW,
    });
    assert.equal(files.length, 0);
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.ok(
      warnings[0]!.message.includes(`Tenant ${h.emulator.guidOf(TENANT)} does not exist`),
      warnings[0]!.message,
    );
    assert.match(warnings[0]!.message, /unified audit logging turned off/);
    assert.ok(!/\n|\s+at Microsoft/.test(warnings[0]!.message), "no stack trace");
  } finally {
    await h.close();
  }
});
