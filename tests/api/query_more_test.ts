/**
 * The query API beyond the specification (API.md, "Queries, more"): `stats` in the status,
 * `waitMillis`, `Idempotency-Key`, and what a synchronous answer tells (`Trawl-Query-Id`,
 * `Trawl-Warnings`, `opt.failOnWarning`).
 */

import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "./server.ts";
import {
  expectError,
  finished,
  pollUntil,
  postQuery,
  SCRIPT_TYPE,
  SLOW_SCRIPT,
  startQuery,
  status,
  writeBigLog,
} from "./client.ts";
import { sleep } from "../../engine/util/sleep.ts";

interface Stats {
  filesRead: number;
  bytesRead: number;
  recordsRead: number;
  recordsUnmatched: number;
  rowsOut: number;
  cloudRequests: number;
  cloudLost: number;
  elapsedMillis: number;
}

async function statsOf(s: TestServer, id: string): Promise<{ state: string; stats: Stats }> {
  return await status(s, id) as unknown as { state: string; stats: Stats };
}

/** Two good lines and one the pattern does not match. */
const MIXED_LOG = "1 a\nx b\n3 c\n";
const MIXED_SCRIPT = "PARSE(pattern: '''INT:n LD:x EOL''', src: '/shared/mixed.log')";

Deno.test("the status counts files, bytes, records and rows, and counts them while it runs", async () => {
  await using s = await startTestServer();
  const lines = 1_500_000;
  const real = await writeBigLog(s, lines);
  const size = (await Deno.stat(real)).size;
  const id = await startQuery(s, SLOW_SCRIPT);
  const running = await pollUntil(
    s,
    id,
    (st) => {
      const stats = (st as unknown as { stats: Stats }).stats;
      return st.state !== "RUNNING" && st.state !== "QUEUED" && st.state !== "SCHEDULED" ||
        (st.state === "RUNNING" && stats.bytesRead > 0);
    },
    30_000,
  ) as unknown as { state: string; stats: Stats };
  assert.equal(running.state, "RUNNING", "the stats moved while the query ran");
  assert.ok(running.stats.bytesRead < size, "part of the file read");
  await finished(s, id);
  const done = await statsOf(s, id);
  assert.equal(done.state, "SUCCEEDED");
  assert.deepEqual({ ...done.stats, elapsedMillis: 0 }, {
    filesRead: 1,
    bytesRead: size,
    recordsRead: lines,
    recordsUnmatched: 0,
    rowsOut: lines / 500,
    cloudRequests: 0,
    cloudLost: 0,
    // No column cache (cache.enabled is off by default).
    cacheBytes: 0,
    cacheBlocks: 0,
    cacheBlocksSkipped: 0,
    elapsedMillis: 0,
  });
  assert.ok(done.stats.elapsedMillis > 0);
  // Finished: the time it ran stays put.
  await sleep(20);
  assert.equal((await statsOf(s, id)).stats.elapsedMillis, done.stats.elapsedMillis);
});

Deno.test("records a pattern does not match are counted as unmatched", async () => {
  await using s = await startTestServer();
  await s.write("/shared/mixed.log", MIXED_LOG);
  const id = await startQuery(s, MIXED_SCRIPT);
  await finished(s, id);
  const { stats } = await statsOf(s, id);
  assert.equal(stats.recordsRead, 3);
  assert.equal(stats.recordsUnmatched, 1);
  assert.equal(stats.rowsOut, 2);
  assert.equal(stats.bytesRead, MIXED_LOG.length);
});

Deno.test("waitMillis answers 200 with the finished status, or 201 when the query runs on", async () => {
  await using s = await startTestServer();
  const quick = await postQuery(s, "VALUES((a: 1))", { query: "waitMillis=10000" });
  const st = await quick.json();
  assert.equal(quick.status, 200, JSON.stringify(st));
  assert.equal(st.state, "SUCCEEDED");
  assert.equal(st.stats.rowsOut, 1);
  assert.equal(quick.headers.get("Location"), `/API/v1.0/queries/${st.queryId}/result`);
  const rows = await s.fetch("alice", quick.headers.get("Location")!);
  assert.equal(await rows.text(), '[{"a":1}]');

  await writeBigLog(s, 1_500_000);
  const slow = await postQuery(s, SLOW_SCRIPT, { query: "waitMillis=1" });
  const body = await slow.json();
  assert.equal(slow.status, 201);
  assert.equal(slow.headers.get("Location"), `/API/v1.0/queries/${body.queryId}`);
  await s.fetch("alice", `/API/v1.0/queries/${body.queryId}`, { method: "DELETE" })
    .then((r) => r.body?.cancel());

  for (const bad of ["60001", "-1", "1.5", "soon", ""]) {
    const res = await postQuery(s, "VALUES((a: 1))", { query: `waitMillis=${bad}` });
    const e = await expectError(res, 400, "BAD_PARAMETER");
    assert.match(String(e.message), /waitMillis/);
  }
  assert.equal(s.deps.supervisor!.getSnapshot().context.queries.size, 2, "no query for bad ones");
});

Deno.test("the same Idempotency-Key from the same user answers with the same query", async () => {
  await using s = await startTestServer();
  const key = { "Idempotency-Key": "job-2024-05-01" };
  const first = await startQuery(s, "VALUES((a: 1))", { headers: key });
  const again = await startQuery(s, "VALUES((a: 1))", { headers: key });
  assert.equal(again, first);
  // Posted at once: still one query.
  const [x, y] = await Promise.all([
    startQuery(s, "VALUES((a: 2))", { headers: { "Idempotency-Key": "k2" } }),
    startQuery(s, "VALUES((a: 2))", { headers: { "Idempotency-Key": "k2" } }),
  ]);
  assert.equal(x, y);
  // Another user's key is their own.
  const bobs = await startQuery(s, "VALUES((a: 1))", { user: "bob", headers: key });
  assert.notEqual(bobs, first);
  assert.equal(s.deps.supervisor!.getSnapshot().context.queries.size, 3);
  // Once the query is freed, the key starts a new one.
  await finished(s, first);
  const del = await s.fetch("alice", `/API/v1.0/queries/${first}`, { method: "DELETE" });
  assert.equal(del.status, 204);
  assert.notEqual(await startQuery(s, "VALUES((a: 1))", { headers: key }), first);
  for (const bad of ["", "x".repeat(256), "a b"]) {
    const res = await postQuery(s, "VALUES((a: 1))", { headers: { "Idempotency-Key": bad } });
    await expectError(res, 400, "BAD_PARAMETER");
  }
});

Deno.test("an Idempotency-Key expires with its query's retention", async () => {
  await using s = await startTestServer({ "query.retention": "300 ms" });
  const key = { "Idempotency-Key": "nightly" };
  const first = await startQuery(s, "VALUES((a: 1))", { headers: key });
  await finished(s, first);
  // Watched from the supervisor: a status read would restart the retention.
  const until = Date.now() + 10_000;
  while (s.deps.supervisor!.getSnapshot().context.queries.has(first)) {
    if (Date.now() > until) throw new Error("the query did not expire");
    await sleep(50);
  }
  assert.equal((await s.fetch("alice", `/API/v1.0/queries/${first}`)).status, 410);
  assert.notEqual(await startQuery(s, "VALUES((a: 1))", { headers: key }), first);
});

Deno.test("a synchronous answer names its query and its warnings, which stay readable", async () => {
  await using s = await startTestServer();
  await s.write("/shared/mixed.log", MIXED_LOG);
  const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: MIXED_SCRIPT,
  });
  assert.equal(res.status, 200);
  assert.equal((await res.json()).length, 2);
  const id = res.headers.get("Trawl-Query-Id")!;
  assert.match(id, /^[0-9a-f-]{36}$/);
  assert.equal(res.headers.get("Trawl-Warnings"), "1");
  const st = await status(s, id);
  assert.equal(st.state, "SUCCEEDED");
  assert.equal(st.warnings.length, 1);
  assert.match(st.warnings[0]!.message, /does not match the pattern/);
  assert.equal((st as unknown as { stats: Stats }).stats.rowsOut, 2);
  // Another user does not see it.
  assert.equal((await s.fetch("bob", `/API/v1.0/queries/${id}`)).status, 404);
  // Only the status is kept: no actor, no result.
  assert.equal(s.deps.supervisor!.getSnapshot().context.queries.size, 0);
  await expectError(await s.fetch("alice", `/API/v1.0/queries/${id}/result`), 410, "QUERY_EXPIRED");
  const freed = await s.fetch("alice", `/API/v1.0/queries/${id}`, { method: "DELETE" });
  assert.equal(freed.status, 204);
  await expectError(await s.fetch("alice", `/API/v1.0/queries/${id}`), 410, "QUERY_EXPIRED");

  const clean = await s.fetch("alice", "/API/v1.0/?scriptPath=/user&opt.failOnWarning=true", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: "VALUES((a: 1))",
  });
  assert.equal(clean.status, 200);
  assert.equal(clean.headers.get("Trawl-Warnings"), "0");
  await clean.body?.cancel();
});

Deno.test("opt.failOnWarning turns a synchronous answer with a warning into a FAILED query (409 QUERY_FAILED)", async () => {
  await using s = await startTestServer();
  await s.write("/shared/mixed.log", MIXED_LOG);
  const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user&opt.failOnWarning=true", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: MIXED_SCRIPT,
  });
  const id = res.headers.get("Trawl-Query-Id");
  assert.equal(res.headers.get("Trawl-Warnings"), "1");
  const body = await expectError(res, 409, "QUERY_FAILED");
  assert.match(String(body.message), /does not match the pattern/);
  assert.equal((body.warnings as unknown[]).length, 1);
  assert.equal(body.state, "FAILED");
  assert.equal((body.error as { code: string }).code, "WARNING");
  assert.ok(id);
  const st = await status(s, id);
  assert.equal(st.warnings.length, 1);
  assert.equal(st.state, "FAILED");
  const bad = await s.fetch("alice", "/API/v1.0/?scriptPath=/user&opt.failOnWarning=yes", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: "VALUES((a: 1))",
  });
  await expectError(bad, 400, "BAD_PARAMETER");
});

Deno.test("answered synchronous queries keep their status but not a share of the result limits", async () => {
  await using s = await startTestServer({ "query.maxResultsPerUser": "2" });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT_TYPE,
      body: `VALUES((a: ${i}))`,
    });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), `[{"a":${i}}]`);
    ids.push(res.headers.get("Trawl-Query-Id")!);
  }
  for (const id of ids) assert.equal((await status(s, id)).state, "SUCCEEDED");
});

Deno.test("the status of an answered synchronous query expires with the retention", async () => {
  await using s = await startTestServer({ "query.retention": "200 ms" });
  const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: "VALUES((a: 1))",
  });
  await res.body?.cancel();
  const id = res.headers.get("Trawl-Query-Id")!;
  assert.equal((await s.fetch("alice", `/API/v1.0/queries/${id}`)).status, 200);
  await sleep(300);
  await expectError(await s.fetch("alice", `/API/v1.0/queries/${id}`), 410, "QUERY_EXPIRED");
});
