/**
 * A store's files are cut in one zone, whoever queries: its `timeZone`, else the server's. And
 * a day file answers a bounded query with the hours it asked for only, whatever earlier queries
 * fetched into it.
 */

import assert from "node:assert/strict";
import { ADMIN, allRecords, baseStore, harness, HOUR, NOW } from "./harness.ts";
import type { User } from "../../engine/contracts/user.ts";
import { localParts } from "../../engine/values/time.ts";
import { creationTime } from "../../connectors/cloudapi/suite_fetcher.ts";

const DAY_START = Date.UTC(2026, 2, 10); // 2026-03-10 00:00 UTC
const KOLKATA: User = { name: "ravi", groups: [], admin: true, timeZone: "Asia/Kolkata" };

type H = Awaited<ReturnType<typeof harness>>;

function auditsOf(h: H, from: number, to: number): string[] {
  return h.emulator.data("contoso.onmicrosoft.com").audits
    .filter((s) => s.time >= from && s.time < to && s.availableAt <= h.clock.now)
    .map((s) => String(s.record.id)).sort();
}

Deno.test("a store without timeZone cuts hours in the server's zone, not the querying user's", async () => {
  const h = await harness();
  try {
    const store = baseStore({ fileNameIncludesHour: true });
    delete store.timeZone;
    await h.writeDefinition("corp", store);
    const first = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: DAY_START,
      to: DAY_START + HOUR,
      user: KOLKATA,
    });
    // The server's zone is UTC (harness settings): the file is the UTC hour 00, not 05:30 IST.
    assert.deepEqual(first.files.map((f) => f.uri), [
      "cloudapi://corp/directory_service/audits/2026/03/10/2026031000.audits.audits.json",
    ]);
    const { ids: early } = await allRecords(h, first.files);
    assert.deepEqual(early.sort(), auditsOf(h, DAY_START, DAY_START + HOUR));

    const from = DAY_START + 5 * HOUR;
    const second = await h.list("cloudapi://corp/directory_service/audits/**", {
      from,
      to: from + HOUR,
      user: ADMIN,
    });
    const { ids, duplicates } = await allRecords(h, second.files);
    assert.deepEqual(duplicates, []);
    assert.deepEqual(ids.sort(), auditsOf(h, from, from + HOUR));
  } finally {
    await h.close();
  }
});

Deno.test("server.timeZone names the files of a store without timeZone", async () => {
  const h = await harness({}, "enterprise", () => ({ serverTimeZone: "Asia/Tokyo" }));
  try {
    const store = baseStore({ fileNameIncludesHour: true });
    delete store.timeZone;
    await h.writeDefinition("corp", store);
    const { files } = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: DAY_START,
      to: DAY_START + HOUR,
    });
    assert.deepEqual(files.map((f) => f.uri), [
      "cloudapi://corp/directory_service/audits/2026/03/10/2026031009.audits.audits.json",
    ]);
  } finally {
    await h.close();
  }
});

Deno.test("a day file serves each bounded query exactly the hours it asked for", async () => {
  const h = await harness();
  try {
    await h.writeDefinition("corp", baseStore()); // the default: one file per day
    const one = DAY_START + HOUR;
    const three = DAY_START + 3 * HOUR;
    const a = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: one,
      to: one + HOUR,
    });
    const b = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: three + 10 * 60_000, // whole hours: [03:00, 04:00)
      to: three + 50 * 60_000,
    });
    const again = await h.list("cloudapi://corp/directory_service/audits/**", {
      from: one,
      to: one + HOUR,
    });
    for (const r of [a, b, again]) {
      assert.deepEqual(r.files.map((f) => f.uri), [
        "cloudapi://corp/directory_service/audits/2026/03/10/20260310.audits.audits.json",
      ]);
    }
    assert.ok(auditsOf(h, one, one + HOUR).length > 0);
    assert.deepEqual((await allRecords(h, a.files)).ids.sort(), auditsOf(h, one, one + HOUR));
    assert.deepEqual((await allRecords(h, b.files)).ids.sort(), auditsOf(h, three, three + HOUR));
    assert.deepEqual(
      (await allRecords(h, again.files)).ids.sort(),
      auditsOf(h, one, one + HOUR),
    );
    // The file itself keeps both hours (the next query of either needs no fetch).
    const unbounded = await h.list("cloudapi://corp/directory_service/audits/**");
    const all = (await allRecords(h, unbounded.files)).ids;
    for (const id of [...auditsOf(h, one, one + HOUR), ...auditsOf(h, three, three + HOUR)]) {
      assert.ok(all.includes(id));
    }
    assert.ok(NOW > three);
  } finally {
    await h.close();
  }
});

for (const zone of ["Asia/Kolkata", "Asia/Kathmandu"]) {
  Deno.test(`suite records of a store in ${zone}: each hourly file holds one local hour`, async () => {
    const h = await harness();
    try {
      await h.writeDefinition("corp", baseStore({ timeZone: zone, fileNameIncludesHour: true }));
      const from = DAY_START + 6 * HOUR;
      const to = DAY_START + 9 * HOUR;
      const { files, warnings } = await h.list("cloudapi://corp/productivity_suite/exchange/**", {
        from,
        to,
      });
      assert.deepEqual(warnings, []);
      assert.ok(files.length >= 3, `files: ${files.map((f) => f.uri)}`);
      let records = 0;
      for (const file of files) {
        // `.../yyyy/MM/dd/yyyyMMddHH.<...>`: the local hour the file holds.
        const named = /\/(\d{10})\.[^/]*$/.exec(file.uri)?.[1];
        assert.ok(named, file.uri);
        for (const r of await h.read(file)) {
          const p = localParts(creationTime(r), zone);
          const local = `${p.year}${pad(p.month)}${pad(p.day)}${pad(p.hour)}`;
          assert.equal(local, named, `${r.CreationTime} (local ${local}) in ${file.uri}`);
          records++;
        }
      }
      assert.ok(records > 0, "the window has records");
      // Every record of the window visible by now is in the files.
      const { ids } = await allRecords(h, files, "Id");
      const expected = h.emulator.data("contoso.onmicrosoft.com").blobs
        .filter((b) => b.contentType === "Audit.Exchange" && b.created <= NOW)
        .flatMap((b) => b.records)
        .filter((r) => creationTime(r) >= from && creationTime(r) < to)
        .map((r) => String(r.Id));
      const got = new Set(ids);
      assert.deepEqual(expected.filter((id) => !got.has(id)), []);
    } finally {
      await h.close();
    }
  });
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}
