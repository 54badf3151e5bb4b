import assert from "node:assert/strict";
import { allRecords, baseStore, harness, HOUR, NOW, SECRET, TENANT } from "./harness.ts";

const FROM = NOW - 6 * HOUR - 30 * 60_000; // 06:00
const TO = NOW - 30 * 60_000; // 12:00

function expectedAudits(h: Awaited<ReturnType<typeof harness>>, upTo = h.clock.now) {
  return h.emulator.data("contoso.onmicrosoft.com").audits
    .filter((s) => s.time >= FROM && s.time < TO && s.availableAt <= upTo)
    .map((s) => String(s.record.id)).sort();
}

Deno.test("directory audits of a window come back exactly as the emulator holds them", async () => {
  const h = await harness();
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const { files, warnings, progress } = await h.list(
      "cloudapi://corp/directory_service/audits/$yyyy$/$MM$/$dd$/*",
      { from: FROM, to: TO },
    );
    assert.deepEqual(warnings, []);
    assert.equal(files.length, 6);
    assert.equal(
      files[0]!.uri,
      "cloudapi://corp/directory_service/audits/2026/03/10/2026031006.audits.audits.json",
    );
    const { ids, duplicates } = await allRecords(h, files);
    assert.deepEqual(duplicates, []);
    assert.deepEqual(ids.sort(), expectedAudits(h));
    assert.equal(progress.at(-1), 1);
    const graph = h.emulator.requests.filter((r) => r.api === "graph");
    assert.ok(graph.every((r) => r.userAgent === "Trawl/0.1.0"));
    assert.ok(graph.every((r) => r.url.includes("activityDateTime")));
  } finally {
    await h.close();
  }
});

for (
  const fault of [
    { kind: "429" },
    { kind: "429-no-retry-after" },
    { kind: "500", times: 2 },
    { kind: "drop" },
    { kind: "malformed" },
    { kind: "slow", delayMs: 2500 },
    { kind: "expired-skiptoken" },
  ] as const
) {
  Deno.test(`no record is lost or doubled when the emulator injects '${fault.kind}'`, async () => {
    const h = await harness({ faults: [{ ...fault, match: "directoryAudits" }] });
    try {
      await h.writeDefinition("corp", baseStore());
      const { files, warnings } = await h.list(
        "cloudapi://corp/directory_service/audits/**",
        { from: FROM, to: TO },
      );
      assert.deepEqual(warnings, []);
      const { ids, duplicates } = await allRecords(h, files);
      assert.deepEqual(duplicates, []);
      assert.deepEqual(ids.sort(), expectedAudits(h));
      const faulted = h.stats.retries + h.stats.throttled > 0 ||
        h.emulator.requests.some((r) => r.status === 400);
      assert.ok(faulted, "the fault was injected and dealt with");
    } finally {
      await h.close();
    }
  });
}

Deno.test("an hour that fails past maxErrorRetries is given up with a warning", async () => {
  const h = await harness({ faults: [{ kind: "500", times: 4, match: "directoryAudits" }] });
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const { files, warnings } = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: FROM,
      to: FROM + HOUR,
    });
    assert.equal(files.length, 0);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!.message, /given up after 3 retries/);
    assert.ok(!warnings[0]!.message.includes(SECRET));
  } finally {
    await h.close();
  }
});

Deno.test("activity non-interactive sign-ins use the beta API and the event type filter", async () => {
  const h = await harness();
  try {
    await h.writeDefinition("corp", baseStore());
    const { files } = await h.list("cloudapi://corp/cloud_activity/ni/**", { from: FROM, to: TO });
    const { ids, duplicates } = await allRecords(h, files);
    const expected = h.emulator.data("contoso.onmicrosoft.com").signIns
      .filter((s) =>
        s.time >= FROM && s.time < TO && s.availableAt <= NOW &&
        (s.record.signInEventTypes as string[]).includes("nonInteractiveUser")
      )
      .map((s) => String(s.record.id)).sort();
    assert.deepEqual(duplicates, []);
    assert.ok(expected.length > 0);
    assert.deepEqual(ids.sort(), expected);
    assert.ok(h.emulator.requests.some((r) => r.url.startsWith("/beta/auditLogs/signIns")));
  } finally {
    await h.close();
  }
});

for (
  const fault of [undefined, { kind: "af429-403" }, { kind: "drop" }, { kind: "500" }] as const
) {
  Deno.test(`suite records of a window come back exactly once${fault ? ` under '${fault.kind}'` : ""}`, async () => {
    const h = await harness({ faults: fault ? [{ ...fault, match: "/blobs/" }] : [] });
    try {
      await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
      const { files, warnings } = await h.list("cloudapi://corp/productivity_suite/exchange/**", {
        from: FROM,
        to: TO,
      });
      assert.deepEqual(warnings, []);
      const { ids, duplicates } = await allRecords(h, files, "Id");
      // Content created up to the lag after the window's hours is read; records are placed by
      // CreationTime, so the window's files hold every record of the window visible by now.
      const expected = h.emulator.data("contoso.onmicrosoft.com").blobs
        .filter((b) => b.contentType === "Audit.Exchange" && b.created <= NOW)
        .flatMap((b) => b.records)
        .filter((r) => {
          const t = Date.parse(String(r.CreationTime) + "Z");
          return t >= FROM && t < TO;
        })
        .map((r) => String(r.Id)).sort();
      const inWindow = new Set(expected);
      assert.deepEqual(duplicates, []);
      assert.deepEqual(ids.filter((id) => inWindow.has(id)).sort(), expected);
      const manage = h.emulator.requests.filter((r) => r.api === "manage");
      assert.ok(
        manage.length > 0 && manage.every((r) => r.publisher === h.emulator.guidOf(TENANT)),
      );
      assert.ok(manage.some((r) => r.url.includes("nextPage=")), "NextPageUri was followed");
      if (fault) assert.ok(h.stats.retries + h.stats.throttled > 0, "the fault was injected");
    } finally {
      await h.close();
    }
  });
}

Deno.test("a subscription disabled by an admin is reported plainly", async () => {
  const h = await harness();
  try {
    h.emulator.disableSubscription("contoso.onmicrosoft.com", "Audit.Exchange");
    await h.writeDefinition("corp", baseStore());
    const { files, warnings } = await h.list("cloudapi://corp/productivity_suite/**", {
      from: FROM,
      to: TO,
    });
    assert.equal(files.length, 0);
    assert.match(warnings[0]!.message, /disabled by an administrator/);
  } finally {
    await h.close();
  }
});
