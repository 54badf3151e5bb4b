/**
 * One user cannot fill the server with results: the number each user holds and the bytes they
 * take are bounded (query.maxResultsPerUser, query.maxResultBytesPerUser), with an answer that
 * names the limit, and the first rows of a result count against query.resultMemoryBytes.
 */

import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "./server.ts";
import { expectError, finished, postQuery, startQuery, writeBigLog } from "./client.ts";
import { sleep } from "../../engine/util/sleep.ts";

async function assertHealthy(s: TestServer): Promise<void> {
  const res = await fetch(`${s.url}/healthz`);
  assert.equal(res.status, 200);
  await res.body?.cancel();
}

Deno.test("a user holding query.maxResultsPerUser results gets 429 naming it; others do not", async () => {
  await using s = await startTestServer({ "query.maxResultsPerUser": "2" });
  const held = [await startQuery(s, "VALUES((a: 1))"), await startQuery(s, "VALUES((a: 2))")];
  for (const id of held) assert.equal((await finished(s, id)).state, "SUCCEEDED");
  const refused = await expectError(await postQuery(s, "VALUES((a: 3))"), 429, "TOO_MANY_RESULTS");
  assert.match(String(refused.message), /query\.maxResultsPerUser = 2/);
  // The synchronous API holds its result while answering: refused the same way.
  const sync = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { "Content-Type": "text/vnd.engine.script" },
    body: "VALUES((a: 4))",
  });
  await expectError(sync, 429, "TOO_MANY_RESULTS");
  // Another user is not held up by alice's results.
  const bob = await s.fetch("bob", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { "Content-Type": "text/vnd.engine.script" },
    body: "VALUES((b: 1))",
  });
  assert.equal(await bob.text(), '[{"b":1}]');
  // Freeing one makes room again.
  const freed = await s.fetch("alice", `/API/v1.0/queries/${held[0]}`, { method: "DELETE" });
  assert.equal(freed.status, 204);
  assert.equal((await finished(s, await startQuery(s, "VALUES((a: 5))"))).state, "SUCCEEDED");
  await assertHealthy(s);
});

Deno.test("a result growing past query.maxResultBytesPerUser fails its query naming the limit", async () => {
  await using s = await startTestServer({
    "query.maxResultBytesPerUser": "2 MiB",
    "query.resultMemoryBytes": "1 MiB",
  });
  await writeBigLog(s, 100_000);
  const id = await startQuery(s, "PARSE(pattern: '''INT:n LD:x EOL''', src: '/shared/big.log')");
  const st = await finished(s, id);
  assert.equal(st.state, "FAILED");
  const result = await expectError(
    await s.fetch("alice", `/API/v1.0/queries/${id}/result`),
    409,
    "QUERY_FAILED",
  );
  assert.match(String(result.message), /more than 2 MiB \(query\.maxResultBytesPerUser\)/);
  // What it had stored is gone: its spill file, and its bytes from alice's share.
  // (The file goes once the writes queued before the refusal are done.)
  const spilled = () => [...Deno.readDirSync(`${s.home}/engine_data/results`)].map((e) => e.name);
  for (const until = Date.now() + 5000; spilled().length > 0 && Date.now() < until;) {
    await sleep(20);
  }
  assert.deepEqual(spilled(), []);
  assert.equal(s.deps.resultQuota?.usage("alice").bytes, 0);
  // Smaller results still fit.
  assert.equal((await finished(s, await startQuery(s, "VALUES((a: 1))"))).state, "SUCCEEDED");
  await assertHealthy(s);
});

Deno.test("the first rows of a result count against query.resultMemoryBytes", async () => {
  await using s = await startTestServer({ "query.resultMemoryBytes": "1 MiB" });
  // 1000 rows of 10 kB: 10 MB, all among the first 1024 rows that used to be kept uncounted.
  const line = "x".repeat(10_000);
  await s.write(
    "/shared/wide.log",
    Array.from({ length: 1000 }, (_, i) => `${i} ${line}\n`).join(""),
  );
  const id = await startQuery(s, "PARSE(pattern: '''INT:n LD:x EOL''', src: '/shared/wide.log')");
  assert.equal((await finished(s, id)).state, "SUCCEEDED");
  const spill = await Deno.stat(`${s.home}/engine_data/results/${id}`);
  assert.ok(spill.size > 8_000_000, `spilled ${spill.size} bytes`);
  const rows = await (await s.fetch("alice", `/API/v1.0/queries/${id}/result`)).json();
  assert.equal(rows.length, 1000);
  assert.ok(rows[999].x.length >= 10_000);
  await assertHealthy(s);
});

Deno.test("results kept for their retention share query.resultMemoryTotalBytes: past it they spill, and a DELETE gives memory back", async () => {
  await using s = await startTestServer({
    "query.resultMemoryBytes": "16 MiB",
    "query.resultMemoryTotalBytes": "1 MiB",
  });
  // 3000 rows of 1 kB: 3 MB, under the result's own 16 MiB.
  const line = "y".repeat(1000);
  await s.write(
    "/shared/mid.log",
    Array.from({ length: 3000 }, (_, i) => `${i} ${line}\n`).join(""),
  );
  const script = "PARSE(pattern: '''INT:n LD:x EOL''', src: '/shared/mid.log')";
  const ids = [await startQuery(s, script), await startQuery(s, script)];
  for (const id of ids) assert.equal((await finished(s, id)).state, "SUCCEEDED");
  const quota = s.deps.resultQuota!;
  assert.ok(quota.inMemory <= 1 << 20, `${quota.inMemory} bytes of results in memory`);
  for (const id of ids) {
    const spill = await Deno.stat(`${s.home}/engine_data/results/${id}`);
    assert.ok(spill.size > 1_000_000, `result ${id} spilled ${spill.size} bytes`);
    const rows = await (await s.fetch("alice", `/API/v1.0/queries/${id}/result`)).json();
    assert.equal(rows.length, 3000);
    assert.equal(rows[2999].n, 2999);
  }
  for (const id of ids) {
    const res = await s.fetch("alice", `/API/v1.0/queries/${id}`, { method: "DELETE" });
    assert.ok(res.ok, `DELETE ${res.status}`);
    await res.body?.cancel();
  }
  assert.equal(quota.inMemory, 0);
  await assertHealthy(s);
});
