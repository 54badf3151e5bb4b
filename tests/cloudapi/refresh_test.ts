import assert from "node:assert/strict";
import { allRecords, baseStore, harness, HOUR, NOW } from "./harness.ts";

const HOUR_START = NOW - 90 * 60_000; // 11:00, the last full hour

Deno.test("a refetch within the lag picks up late records; after the lag the hour is final, also after a restart", async () => {
  const h = await harness({
    seed: { from: NOW - 4 * HOUR, to: NOW, perHour: 20, lateFraction: 0.3, lateMaxMs: 90 * 60_000 },
  });
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const uri = "cloudapi://corp/directory_service/audits/**";
    const window = { from: HOUR_START, to: HOUR_START + HOUR };
    const truth = (at: number) =>
      h.emulator.data("contoso.onmicrosoft.com").audits
        .filter((s) => s.time >= HOUR_START && s.time < HOUR_START + HOUR && s.availableAt <= at)
        .map((s) => String(s.record.id)).sort();
    const graphCalls = () => h.emulator.requests.filter((r) => r.api === "graph").length;

    const first = await h.list(uri, window);
    assert.deepEqual((await allRecords(h, first.files)).ids.sort(), truth(NOW));
    const late = truth(NOW + 3 * HOUR).length - truth(NOW).length;
    assert.ok(late > 0, "the seed has late records");

    // Within the update frequency: nothing is fetched.
    h.clock.now = NOW + 10 * 60_000;
    let calls = graphCalls();
    await h.list(uri, window);
    assert.equal(graphCalls(), calls);

    // Past the update frequency, within the lag: fetched again, late records arrive.
    h.clock.now = NOW + 60 * 60_000;
    const second = await h.list(uri, window);
    assert.ok(graphCalls() > calls);
    const { ids, duplicates } = await allRecords(h, second.files);
    assert.deepEqual(duplicates, []);
    assert.deepEqual(ids.sort(), truth(h.clock.now));

    // Past the lag: one last fetch (the previous one was within the lag), then final.
    h.clock.now = NOW + 3 * HOUR;
    await h.list(uri, window);
    calls = graphCalls();
    h.clock.now = NOW + 5 * HOUR;
    const final = await h.list(uri, window);
    assert.equal(graphCalls(), calls);
    assert.deepEqual((await allRecords(h, final.files)).ids.sort(), truth(NOW + 3 * HOUR));

    // A "restart": a new datastore over the same home reads the stored state.
    const again = await h.list(uri, window);
    assert.equal(graphCalls(), calls);
    assert.equal(again.files.length, 1);
  } finally {
    await h.close();
  }
});
