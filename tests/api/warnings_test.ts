/**
 * What a query says about the files it could not read (LANGUAGE.md §3, §6): each warning once,
 * whatever path the answer takes (synchronous, a fixed format, an aggregate that might have run
 * in workers), one account per file, and `opt.failOnWarning` making the query FAILED.
 */

import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "./server.ts";
import { expectError, finished, SCRIPT_TYPE, startQuery, status } from "./client.ts";

/** The warnings' messages of a synchronous answer: its header's count, then its status's. */
async function syncWarnings(s: TestServer, script: string, user = "alice"): Promise<string[]> {
  const res = await s.fetch(user, "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: script,
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const id = res.headers.get("Trawl-Query-Id")!;
  const messages = (await status(s, id, user)).warnings.map((w) => w.message);
  assert.equal(res.headers.get("Trawl-Warnings"), String(messages.length), messages.join("\n"));
  return messages;
}

async function asyncWarnings(s: TestServer, script: string, query?: string): Promise<string[]> {
  const id = await startQuery(s, script, query ? { query } : {});
  const st = await finished(s, id);
  assert.equal(st.state, "SUCCEEDED");
  return st.warnings.map((w) => w.message);
}

Deno.test("a listing's warning is given once, synchronous or not, fixed format or not", async () => {
  await using s = await startTestServer();
  const parse = "PARSE(pattern: '''LD:x EOL''', src: '/shared/missing*.log')";
  const once = ["no file matches '/shared/missing*.log'"];
  assert.deepEqual(await syncWarnings(s, parse), once);
  assert.deepEqual(await asyncWarnings(s, parse), once);
  assert.deepEqual(await asyncWarnings(s, parse, "acceptContentType=application/csv"), once);
  // An aggregate over a source that may be shared by workers lists it to share it: too small
  // to share, it runs here from that listing, not from a second one.
  const json = "READ_JSON(src: '/shared/nomatch/*.json') | select(count(*))";
  const folder = ["cannot list folder '/shared/nomatch' (it does not exist); skipped"];
  assert.deepEqual(await syncWarnings(s, json), folder);
  assert.deepEqual(await asyncWarnings(s, json), folder);
  // A file that is there but too small to share is read from that listing too.
  await s.write("/shared/j/a.json", '{"n": 1}\n{"n": 2}\n');
  const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: "READ_JSON(src: '/shared/j/*.json') | select(sum(n) as s, count(*) as c)",
  });
  assert.equal(await res.text(), '[{"s":3,"c":2}]');
  assert.equal(res.headers.get("Trawl-Warnings"), "0");
});

Deno.test("a file one may list but not read is 'no right to read', never also 'does not exist'", async () => {
  await using s = await startTestServer({}, {
    grants: [{ path: "/users/bob/listonly", user: "alice", rights: ["list"] }],
  });
  await s.write("/users/bob/listonly/s.json", '{"a": 1}\n');
  await s.write("/users/bob/secret.json", '{"a": 1}\n');
  const noRight = ["no right to read '/users/bob/listonly/s.json'; skipped"];
  for (const src of ["/users/bob/listonly/s.json", "/users/bob/listonly/*.json"]) {
    assert.deepEqual(await syncWarnings(s, `READ_JSON(src: '${src}')`), noRight);
    assert.deepEqual(await syncWarnings(s, `READ_JSON(src: '${src}') | select(count(*))`), noRight);
    assert.deepEqual(
      await syncWarnings(s, `PARSE(pattern: '''LD:x EOL''', src: '${src}')`),
      noRight,
    );
  }
  // In a folder alice may not list, a file that is there and one that is not read the same.
  const unseen = async (src: string) =>
    (await syncWarnings(s, `READ_JSON(src: '${src}')`)).map((m) => m.replace(src, "<src>"));
  const there = await unseen("/users/bob/secret.json");
  assert.deepEqual(there, await unseen("/users/bob/none.json"));
  assert.deepEqual(there, ["file '<src>' does not exist or cannot be read"]);
});

Deno.test("opt.failOnWarning: a query that warned is FAILED, its error naming the warnings", async () => {
  await using s = await startTestServer();
  const script = "READ_JSON(src: '/shared/missing.json')";
  const warning = "file '/shared/missing.json' does not exist or cannot be read";
  const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user&opt.failOnWarning=true", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: script,
  });
  const id = res.headers.get("Trawl-Query-Id")!;
  assert.equal(res.headers.get("Trawl-Warnings"), "1");
  const body = await expectError(res, 409, "QUERY_FAILED");
  assert.equal(body.state, "FAILED");
  const error = body.error as { code: string; message: string };
  assert.equal(error.code, "WARNING");
  assert.ok(error.message.includes(warning), error.message);
  assert.deepEqual((body.warnings as { message: string }[]).map((w) => w.message), [warning]);
  // The status tells the same story as the answer.
  const st = await status(s, id) as unknown as { state: string; error: unknown };
  assert.equal(st.state, "FAILED");
  assert.deepEqual(st.error, error);
  // Without warnings, or without the option, it succeeds; POST /queries ignores the option.
  const clean = await s.fetch("alice", "/API/v1.0/?scriptPath=/user&opt.failOnWarning=true", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: "VALUES((a: 1))",
  });
  assert.equal(clean.status, 200);
  assert.equal(await clean.text(), '[{"a":1}]');
  assert.deepEqual(await syncWarnings(s, script), [warning]);
  assert.deepEqual(await asyncWarnings(s, script, "opt.failOnWarning=true"), [warning]);
});

Deno.test("in scan workers too, a listing's warning is given once", async () => {
  await using s = await startTestServer({ "query.workers": "2" }, {
    grants: [
      { path: "/users/bob/logs", user: "alice", rights: ["list"] },
      { path: "/users/bob/logs/big.log", user: "alice", rights: ["read"] },
    ],
  });
  // Over 1 MiB: its scan runs in a worker (ISOLATE_BYTES), split in shares.
  await s.write("/users/bob/logs/big.log", "1 x\n".repeat(400_000));
  await s.write("/users/bob/logs/secret.log", "2 y\n");
  // Shares started on the workers: the queries below must run there.
  const pool = s.deps.scanWorkers as { start: (...args: unknown[]) => unknown };
  const start = pool.start.bind(pool);
  let shares = 0;
  pool.start = (...args) => (shares++, start(...args));
  const noRight = ["no right to read '/users/bob/logs/secret.log'; skipped"];
  const src = "src: '/users/bob/logs/*.log'";
  const count = `PARSE(pattern: '''INT:n LD:x EOL''', ${src}) | select(count(*) as c)`;
  assert.deepEqual(await syncWarnings(s, count), noRight);
  assert.deepEqual(await asyncWarnings(s, count), noRight);
  const rows = `PARSE(pattern: '''INT:n LD:x EOL''', ${src}) | filter(n = 2)`;
  assert.deepEqual(await syncWarnings(s, rows), noRight);
  assert.ok(shares >= 3, `${shares} shares started`);
});
