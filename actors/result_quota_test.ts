import assert from "node:assert/strict";
import { ResultQuota } from "./result_quota.ts";
import { QueryError } from "../engine/mod.ts";

Deno.test("ResultQuota counts each user's results and refuses one past maxResults, naming it", () => {
  const quota = new ResultQuota({ maxResults: 2, maxBytes: 1000 });
  const a = quota.open("alice");
  const b = quota.open("alice");
  assert.ok(a.ok && b.ok);
  const refused = quota.open("alice");
  assert.equal(refused.ok, false);
  assert.match(!refused.ok ? refused.message : "", /query\.maxResultsPerUser = 2/);
  assert.ok(quota.open("bob").ok, "another user has a share of their own");
  a.account.close();
  a.account.close(); // a second close gives nothing back twice
  assert.equal(quota.usage("alice").results, 1);
  assert.ok(quota.open("alice").ok);
});

Deno.test("ResultQuota refuses a charge past maxBytes with MEMORY_LIMIT and gives bytes back on close", () => {
  const quota = new ResultQuota({ maxResults: 10, maxBytes: 1024 });
  const first = quota.open("alice");
  const second = quota.open("alice");
  assert.ok(first.ok && second.ok);
  first.account.charge(600);
  assert.throws(
    () => second.account.charge(600),
    (e) =>
      e instanceof QueryError && e.diagnostic.code === "MEMORY_LIMIT" &&
      /more than 1 KiB \(query\.maxResultBytesPerUser\)/.test(e.message),
  );
  assert.equal(quota.usage("alice").bytes, 600);
  first.account.close();
  assert.equal(quota.usage("alice").bytes, 0);
  second.account.charge(1000);
  second.account.close();
  assert.deepEqual(quota.usage("alice"), { results: 0, bytes: 0 });
});

Deno.test("ResultQuota's pool lets results keep bytes in memory, all users together, and takes them back on close", () => {
  const quota = new ResultQuota({ maxResults: 10, maxBytes: 1 << 20, memoryBytes: 1000 });
  const a = quota.open("alice");
  const b = quota.open("bob");
  assert.ok(a.ok && b.ok);
  assert.equal(a.account.keep(600), true);
  assert.equal(b.account.keep(600), false, "bob's bytes go to disk: alice's fill the pool");
  assert.equal(b.account.keep(400), true);
  assert.equal(quota.inMemory, 1000);
  a.account.close();
  a.account.close();
  assert.equal(quota.inMemory, 400);
  assert.equal(a.account.keep(1), false, "a closed account keeps nothing");
  assert.equal(b.account.keep(600), true);
  b.account.close();
  assert.equal(quota.inMemory, 0);
  // Without a pool, only the result's own limit (the store's) counts.
  const open = new ResultQuota({ maxResults: 10, maxBytes: 1 << 20 }).open("alice");
  assert.ok(open.ok && open.account.keep(1 << 40));
});
