import assert from "node:assert/strict";
import { join } from "node:path";
import { hourStamp, markFetched, mergeIntoFile, readRecords, readState } from "./hour_store.ts";

const HOUR = Date.UTC(2026, 2, 10, 11);

function merge(file: string, records: Record<string, unknown>[], now = HOUR + 7_200_000) {
  return mergeIntoFile(file, records, {
    idField: "id",
    timeField: "time",
    fetched: new Map([[HOUR, records.length]]),
    now,
  });
}

Deno.test("mergeIntoFile() replaces a stored record by a re-fetched one with the same id", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-hour-" });
  try {
    const file = join(dir, "audits", "2026031011.json");
    await merge(file, [
      { id: "a", time: "2026-03-10T11:05:00Z", status: "pending" },
      { id: "b", time: "2026-03-10T11:01:00Z", status: "done" },
    ]);
    const count = await merge(file, [
      { id: "a", time: "2026-03-10T11:05:00Z", status: "done" },
      { id: "c", time: "2026-03-10T11:03:00Z", status: "done" },
    ]);
    assert.equal(count, 3);
    // One copy of each id, the newer one, sorted by time.
    assert.deepEqual(await readRecords(file), [
      { id: "b", time: "2026-03-10T11:01:00Z", status: "done" },
      { id: "c", time: "2026-03-10T11:03:00Z", status: "done" },
      { id: "a", time: "2026-03-10T11:05:00Z", status: "done" },
    ]);
    assert.deepEqual((await readState(file)).hours, {
      [String(HOUR)]: { fetchedAt: HOUR + 7_200_000, records: 2 },
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mergeIntoFile() keeps records without an id, and one copy of a repeated id in one fetch", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-hour-" });
  try {
    const file = join(dir, "x.json");
    await merge(file, [{ time: "2026-03-10T11:00:00Z", n: 1 }]);
    await merge(file, [
      { time: "2026-03-10T11:00:00Z", n: 1 },
      { id: "7", time: "2026-03-10T11:02:00Z", v: 1 },
      { id: "7", time: "2026-03-10T11:02:00Z", v: 2 },
    ]);
    const records = await readRecords(file);
    assert.equal(records.filter((r) => r.id === undefined).length, 2);
    assert.deepEqual(records.filter((r) => r.id !== undefined), [
      { id: "7", time: "2026-03-10T11:02:00Z", v: 2 },
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("markFetched(): an hour given records by another hour's fetch changes its stamp only", () => {
  const state = { hours: { "0": { fetchedAt: 10, records: 2 } } };
  const hours = markFetched(state, {
    fetched: new Map([[3_600_000, 5]]),
    touched: new Set([0, 7_200_000]),
    now: 50,
  });
  // Still fetched at 10 (the refresh policy is unchanged), but its records changed at 50.
  assert.deepEqual(hours["0"], { fetchedAt: 10, records: 2, touchedAt: 50 });
  assert.notEqual(hourStamp(hours["0"]), hourStamp(state.hours["0"]));
  assert.deepEqual(hours["3600000"], { fetchedAt: 50, records: 5 });
  // An hour never fetched stays so: a read fetches it whole.
  assert.equal(hours["7200000"], undefined);
  assert.equal(hourStamp(undefined), null);
});
