import assert from "node:assert/strict";
import { failedRecord, Records, type SharedRecord } from "./records.ts";
import { memoryStorage } from "../test_support.ts";

function record(queryId: string, extra: Partial<SharedRecord> = {}): SharedRecord {
  return {
    queryId,
    owner: "alice",
    server: "s1",
    submitted: 1,
    scriptPath: "/user",
    excerpt: "VALUES",
    status: { queryId, state: "RUNNING", stateChanges: [{ millis: 1, from: "NEW", to: "QUEUED" }] },
    ...extra,
  };
}

const OPTIONS = { retentionMs: 60_000, expiredMemoryMs: 120_000 };

Deno.test("a record is created once, updated over its version only, and its tombstone answers for it", async () => {
  await using storage = await memoryStorage();
  const records = new Records(storage, OPTIONS);
  assert.equal(await records.get("q1"), null);
  const created = await storage.commit([records.create(record("q1"))]);
  assert.ok(created.ok);
  // Created twice: refused (create-if-absent).
  assert.equal((await storage.commit([records.create(record("q1"))])).ok, false);
  const found = (await records.get("q1"))!;
  assert.equal(found.record.status.state, "RUNNING");
  const v2 = await records.update(record("q1", { excerpt: "new" }), found.version);
  assert.notEqual(v2, null);
  // Over a version that is no longer its: lost (another server changed it).
  assert.equal(await records.update(record("q1"), found.version), null);
  await records.tombstone((await records.get("q1"))!);
  const gone = (await records.get("q1"))!;
  assert.equal(gone.record.freed, true);
  assert.equal(gone.record.owner, "alice");
  assert.equal(gone.record.status.state, "RUNNING");
  assert.equal(gone.record.excerpt, "");
});

Deno.test("list gives the held queries others may see: not freed, not answered synchronously, only visible owners'", async () => {
  await using storage = await memoryStorage();
  const records = new Records(storage, OPTIONS);
  await storage.commit([
    records.create(record("held")),
    records.create(record("bobs", { owner: "bob" })),
    records.create(record("answered", { answered: true })),
    records.create(record("freed")),
  ]);
  await records.tombstone((await records.get("freed"))!);
  const listed = await records.list((owner) => owner === "alice");
  assert.deepEqual(listed.map((r) => r.queryId), ["held"]);
  const all = await records.list(() => true);
  assert.deepEqual(all.map((r) => r.queryId).sort(), ["bobs", "held"]);
});

Deno.test("failedRecord marks a query FAILED with its error and the state change that led there", () => {
  const scheduled = record("q");
  const failed = failedRecord(
    { ...scheduled, status: { ...scheduled.status, state: "SCHEDULED" } },
    "the server stopped",
    99,
  );
  assert.equal(failed.status.state, "FAILED");
  assert.deepEqual(failed.status.error, { code: "RUNTIME_ERROR", message: "the server stopped" });
  assert.deepEqual(failed.status.stateChanges, [
    { millis: 1, from: "NEW", to: "QUEUED" },
    { millis: 99, from: "SCHEDULED", to: "FAILED" },
  ]);
  assert.equal(failed.owner, "alice");
});

Deno.test("a final record is kept for the retention and written over the version the server holds", async () => {
  await using storage = await memoryStorage();
  const records = new Records(storage, OPTIONS);
  const entry = records.final(record("q"), "v1");
  assert.equal(entry.expireInMs, 60_000);
  assert.equal(entry.expectedVersion, "v1");
  assert.equal(records.remove("q").value, null);
});
