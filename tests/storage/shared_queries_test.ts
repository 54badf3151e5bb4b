/**
 * Queries across real `main.ts serve` processes on one Deno KV file or one PostgreSQL database
 * (each test runs on both: tests/support/shared_state.ts; actors/shared_queries.ts):
 * a query submitted to one server is read, paged, cancelled and freed through another; the
 * limits on running and queued queries hold across the servers; a server killed while its query
 * runs has that query marked FAILED by the others once its lease expires.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, type ServerProcess, startServerProcess } from "../foundation/server_process.ts";
import { api } from "../support/server_api.ts";
import { type Backend, eachBackend, sharedStorage, stateHome } from "../support/shared_state.ts";
import { sleep } from "../../engine/util/sleep.ts";

interface Cluster {
  readonly root: string;
  readonly logs: string;
  readonly servers: ServerProcess[];
  readonly homes: string[];
  readonly token: string;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * `count` servers on one KV file with `settings`, and a FILE datastore `logs` (defined through
 * the first) over a folder the test fills.
 */
async function cluster(
  backend: Backend,
  count: number,
  settings: readonly string[] = [],
): Promise<Cluster> {
  const root = await Deno.makeTempDir({ prefix: "trawl-kvq-" });
  const state = await sharedStorage(backend, root);
  const logs = join(root, "logs");
  await Deno.mkdir(logs);
  const servers: ServerProcess[] = [];
  const homes: string[] = [];
  // One thread each: three servers on two cores (tests/storage/kv_scan_workers_test.ts runs
  // a KV server on workers).
  const args = ["query.workers=1", ...settings].flatMap((s) => ["--set", s]);
  try {
    for (let i = 0; i < count; i++) {
      const home = await stateHome(root, `s${i}`, state);
      homes.push(home);
      servers.push(await startServerProcess(home, args));
    }
    const token = servers[0]!.firstToken!;
    const put = await fetch(`${servers[0]!.url}/API/v1.0/datastores/logs`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        type: "FILE",
        fileStore: { root: logs, acl: { users: { admin: ["read", "list"] }, groups: {} } },
      }),
    });
    assert.equal(put.status, 201, await put.text());
    return {
      root,
      logs,
      servers,
      homes,
      token,
      async [Symbol.asyncDispose]() {
        for (const s of servers) await s.stop("SIGKILL").catch(() => {});
        await Deno.remove(root, { recursive: true });
      },
    };
  } catch (e) {
    for (const s of servers) await s.stop("SIGKILL").catch(() => {});
    await Deno.remove(root, { recursive: true });
    throw e;
  }
}

/** `lines` lines `<n> host-17 GET /index.html 200 5120`. */
async function writeLog(path: string, lines: number): Promise<void> {
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const encoder = new TextEncoder();
  for (let first = 0; first < lines; first += 100_000) {
    const parts: string[] = [];
    for (let i = first; i < Math.min(lines, first + 100_000); i++) {
      parts.push(`${i} host-17 GET /index.html 200 5120\n`);
    }
    await file.write(encoder.encode(parts.join("")));
  }
  file.close();
}

const ROWS_SCRIPT = "PARSE(pattern: '''INT:n LD:x EOL''', src: 'file://logs/rows.log')";
/**
 * Every line of pairs.log joined with every other: 10^8 pairs of 10 000 lines, counted (about
 * 15 s on an idle machine; the tests cancel or kill it within a few).
 */
const SLOW_SCRIPT =
  "@a = PARSE(pattern: '''INT:n LD:x EOL''', src: 'file://logs/pairs.log') | select(1 as k, n);\n" +
  "@a | join(@a on left.k = right.k) | select(count(*) as pairs)";
const QUICK_SCRIPT = "PARSE(pattern: '''INT:n LD:x EOL''', src: 'file://logs/rows.log') | " +
  "select(count(*) as rows)";

async function submit(server: ServerProcess, token: string, script: string): Promise<Response> {
  return await api(server, token, "/queries?scriptPath=/user", {
    method: "POST",
    headers: { "Content-Type": "text/vnd.engine.script" },
    body: script,
  });
}

async function submitted(server: ServerProcess, token: string, script: string): Promise<string> {
  const res = await submit(server, token, script);
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  return body.queryId;
}

async function json(res: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  const text = await res.text();
  return { status: res.status, body: text === "" ? {} : JSON.parse(text) };
}

/** Polls the status through `server` until `done` holds; fails after `timeoutMs`. */
async function waitForStatus(
  server: ServerProcess,
  token: string,
  queryId: string,
  done: (status: Record<string, unknown>) => boolean,
  timeoutMs = 30_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const { status, body } = await json(await api(server, token, `/queries/${queryId}`));
    last = { status, body };
    if (status === 200 && done(body)) return body;
    await sleep(50);
  }
  throw new Error(`query ${queryId} did not get there in ${timeoutMs} ms: ${JSON.stringify(last)}`);
}

const stateIs = (...states: string[]) => (s: Record<string, unknown>) =>
  states.includes(s.state as string);

await eachBackend(
  "a query submitted to one server is read, paged, listed, seen by its owner only and freed through others",
  async (backend) => {
    await using c = await cluster(backend, 3);
    const [a, b, third] = c.servers as [ServerProcess, ServerProcess, ServerProcess];
    await writeLog(join(c.logs, "rows.log"), 40_000);
    const bob = await runCli(["user", "add", "bob", "--home", c.homes[1]!]);
    assert.equal(bob.code, 0, bob.stderr);
    const bobToken = bob.lastLine;

    const id = await submitted(a, c.token, ROWS_SCRIPT);
    const status = await waitForStatus(b, c.token, id, stateIs("SUCCEEDED"));
    assert.equal(status.queryId, id);
    assert.equal((status.stats as { rowsOut: number }).rowsOut, 40_000);

    // The same rows, formats and pages from both servers (more than one page of the stored result).
    const variants: Record<string, string>[] = [
      {},
      { Accept: "application/csv" },
      { Accept: "application/vnd.apache.arrow.stream", Range: "items=100-16500" },
      { Range: "items=20000-20004" },
    ];
    for (const headers of variants) {
      const fromA = await api(a, c.token, `/queries/${id}/result`, { headers });
      const fromB = await api(b, c.token, `/queries/${id}/result`, { headers });
      assert.equal(fromA.status, headers.Range ? 206 : 200);
      assert.equal(fromB.status, fromA.status);
      assert.equal(fromB.headers.get("Content-Type"), fromA.headers.get("Content-Type"));
      assert.equal(fromB.headers.get("Content-Range"), fromA.headers.get("Content-Range"));
      assert.deepEqual(await fromB.bytes(), await fromA.bytes(), JSON.stringify(headers));
    }
    // A format fixed at POST: the rows were stored serialised, and are served so by B.
    const fixedRes = await api(
      a,
      c.token,
      "/queries?scriptPath=/user&acceptContentType=application/csv",
      {
        method: "POST",
        headers: { "Content-Type": "text/vnd.engine.script" },
        body: ROWS_SCRIPT,
      },
    );
    assert.equal(fixedRes.status, 201);
    const fixed = (await fixedRes.json()).queryId;
    await waitForStatus(b, c.token, fixed, stateIs("SUCCEEDED"));
    const csvA = await api(a, c.token, `/queries/${fixed}/result`, {
      headers: { Range: "items=5-9" },
    });
    const csvB = await api(b, c.token, `/queries/${fixed}/result`, {
      headers: { Range: "items=5-9" },
    });
    assert.equal(csvB.status, 206);
    assert.equal(csvB.headers.get("Content-Type"), csvA.headers.get("Content-Type"));
    const csv = await csvB.text();
    assert.equal(csv, await csvA.text());
    assert.match(csv, /^"n";"x"\n5;/);
    const paged = await api(b, c.token, `/queries/${id}/result`, {
      headers: { Range: "items=39998-" },
    });
    assert.equal(paged.status, 206);
    assert.equal(paged.headers.get("Content-Range"), "items 39998-39999/40000");
    assert.deepEqual((await paged.json()).map((r: { n: number }) => r.n), [39998, 39999]);
    const schemaA = await json(await api(a, c.token, `/queries/${id}/result/schema`));
    const schemaB = await json(await api(b, c.token, `/queries/${id}/result/schema`));
    assert.equal(schemaB.status, 200);
    assert.deepEqual(schemaB.body, schemaA.body);

    // Listed by the third server, for its owner only.
    const listed = await (await api(third, c.token, "/queries")).json();
    const item = listed.find((q: { queryId: string }) => q.queryId === id);
    assert.equal(item?.state, "SUCCEEDED", JSON.stringify(listed));
    assert.equal(item.user, "admin");
    assert.match(item.excerpt, /^PARSE\(pattern/);
    assert.deepEqual(await (await api(third, bobToken, "/queries")).json(), []);

    // Another user gets what an id that does not exist gets, through any server.
    const unknownId = crypto.randomUUID();
    const none = await json(await api(b, bobToken, `/queries/${unknownId}`));
    for (const server of [a, b, third]) {
      for (const path of ["", "/result", "/result/schema", "/events"]) {
        const theirs = await json(await api(server, bobToken, `/queries/${id}${path}`));
        assert.equal(theirs.status, 404, `${path}: ${JSON.stringify(theirs.body)}`);
        assert.equal(theirs.body.code, none.body.code);
      }
      const deleted = await json(
        await api(server, bobToken, `/queries/${id}`, { method: "DELETE" }),
      );
      assert.equal(deleted.status, 404);
    }

    // Freed through B: gone on both (410, as a freed query on one server).
    const freed = await api(b, c.token, `/queries/${id}`, { method: "DELETE" });
    assert.equal(freed.status, 204);
    await freed.body?.cancel();
    assert.equal((await json(await api(b, c.token, `/queries/${id}/result`))).status, 410);
    const deadline = Date.now() + 10_000;
    let onA = 0;
    while (Date.now() < deadline) {
      onA = (await json(await api(a, c.token, `/queries/${id}`))).status;
      if (onA === 410) break;
      await sleep(50);
    }
    assert.equal(onA, 410);
    const after = await (await api(third, c.token, "/queries")).json();
    assert.equal(after.some((q: { queryId: string }) => q.queryId === id), false);
  },
);

await eachBackend(
  "query.maxRunning and query.maxQueued hold across servers; a DELETE through another server cancels",
  async (backend) => {
    await using c = await cluster(backend, 2, ["query.maxRunning=1", "query.maxQueued=1"]);
    const [a, b] = c.servers as [ServerProcess, ServerProcess];
    await writeLog(join(c.logs, "rows.log"), 10);
    await writeLog(join(c.logs, "pairs.log"), 10_000);

    const slow = await submitted(a, c.token, SLOW_SCRIPT);
    await waitForStatus(b, c.token, slow, stateIs("RUNNING"));
    // B has no query running, but the one slot is taken: its query waits, and a third is refused.
    const queued = await submitted(b, c.token, QUICK_SCRIPT);
    const refused = await json(await submit(a, c.token, QUICK_SCRIPT));
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.equal(refused.body.code, "TOO_MANY_QUERIES");
    const refusedB = await json(await submit(b, c.token, QUICK_SCRIPT));
    assert.equal(refusedB.status, 429);
    assert.equal((await waitForStatus(a, c.token, queued, () => true)).state, "QUEUED");

    // The slow query's events through B, while it is cancelled through B.
    const events = await api(b, c.token, `/queries/${slow}/events`);
    assert.equal(events.status, 200);
    const cancel = await json(await api(b, c.token, `/queries/${slow}`, { method: "DELETE" }));
    assert.equal(cancel.status, 200);
    assert.equal(cancel.body.queryId, slow);
    const stream = await events.text();
    assert.match(stream, /^id: \S+\nevent: status\n/);
    assert.match(stream, /event: state\ndata: \{[^\n]*"to":"CANCELLED"/);
    const cancelled = await waitForStatus(a, c.token, slow, stateIs("CANCELLED"));
    assert.equal(cancelled.state, "CANCELLED");

    // The slot is free: B's queued query runs.
    const done = await waitForStatus(a, c.token, queued, stateIs("SUCCEEDED", "FAILED"));
    assert.equal(done.state, "SUCCEEDED", JSON.stringify(done));
    const rows = await api(a, c.token, `/queries/${queued}/result`);
    assert.deepEqual(await rows.json(), [{ rows: 10 }]);
  },
);

await eachBackend(
  "a server killed while its query runs: the others mark the query FAILED once its lease expires, and free its slot",
  async (backend) => {
    await using c = await cluster(backend, 2, [
      "query.maxRunning=1",
      "query.maxQueued=0",
      "cluster.lease=2 s",
    ]);
    const [a, b] = c.servers as [ServerProcess, ServerProcess];
    await writeLog(join(c.logs, "rows.log"), 10);
    await writeLog(join(c.logs, "pairs.log"), 10_000);

    const slow = await submitted(a, c.token, SLOW_SCRIPT);
    await waitForStatus(b, c.token, slow, stateIs("RUNNING"));
    const full = await json(await submit(b, c.token, QUICK_SCRIPT));
    assert.equal(full.status, 429, JSON.stringify(full.body));
    await a.stop("SIGKILL");
    const failed = await waitForStatus(b, c.token, slow, stateIs("FAILED", "SUCCEEDED"), 20_000);
    assert.equal(failed.state, "FAILED", JSON.stringify(failed));
    assert.match(
      (failed.error as { message: string }).message,
      /the server that ran this query stopped responding/,
    );
    const result = await json(await api(b, c.token, `/queries/${slow}/result`));
    assert.equal(result.status, 409);
    assert.equal(result.body.code, "QUERY_FAILED");

    // Its slot is free: B runs a query.
    const quick = await submitted(b, c.token, QUICK_SCRIPT);
    const done = await waitForStatus(b, c.token, quick, stateIs("SUCCEEDED", "FAILED"));
    assert.equal(done.state, "SUCCEEDED");
  },
);

await eachBackend(
  "a server stopped with SIGTERM while its query runs marks it FAILED at once and frees its slot",
  async (backend) => {
    await using c = await cluster(backend, 2, ["query.maxRunning=1", "query.maxQueued=0"]);
    const [a, b] = c.servers as [ServerProcess, ServerProcess];
    await writeLog(join(c.logs, "rows.log"), 10);
    await writeLog(join(c.logs, "pairs.log"), 10_000);

    const slow = await submitted(a, c.token, SLOW_SCRIPT);
    await waitForStatus(b, c.token, slow, stateIs("RUNNING"));
    const code = await a.stop("SIGTERM");
    assert.equal(
      code,
      0,
      `exit ${code}; the server's last lines:\n${a.stderr.slice(-30).join("\n")}`,
    );
    // Well before the lease (10 s by default) would have run out.
    const failed = await waitForStatus(b, c.token, slow, stateIs("FAILED", "SUCCEEDED"), 3_000);
    assert.equal(failed.state, "FAILED", JSON.stringify(failed));
    assert.equal(
      (failed.error as { message: string }).message,
      "the server that ran this query stopped",
    );
    const quick = await submitted(b, c.token, QUICK_SCRIPT);
    assert.equal(
      (await waitForStatus(b, c.token, quick, stateIs("SUCCEEDED", "FAILED"))).state,
      "SUCCEEDED",
    );
  },
);

await eachBackend(
  "a burst of queries through two servers with one running slot: all answered, and the slots counted exactly after",
  async (backend) => {
    await using c = await cluster(backend, 2, ["query.maxRunning=1", "query.maxQueued=40"]);
    const [a, b] = c.servers as [ServerProcess, ServerProcess];
    await writeLog(join(c.logs, "rows.log"), 10);
    await writeLog(join(c.logs, "pairs.log"), 10_000);
    const sync = async (server: ServerProcess) => {
      const res = await api(server, c.token, "/?scriptPath=/user", {
        method: "POST",
        headers: { "Content-Type": "text/vnd.engine.script" },
        body: QUICK_SCRIPT,
      });
      return { status: res.status, body: await res.text() };
    };
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => sync(i % 2 ? a : b)));
    for (const answer of answers) {
      assert.equal(answer.status, 200, answer.body);
      assert.deepEqual(JSON.parse(answer.body), [{ rows: 10 }]);
    }

    // No slot was kept by the burst: the slow query runs, 40 wait, the 41st is refused.
    const slow = await submitted(a, c.token, SLOW_SCRIPT);
    await waitForStatus(b, c.token, slow, stateIs("RUNNING"));
    const queued = await Promise.all(
      Array.from({ length: 40 }, (_, i) => submitted(i % 2 ? a : b, c.token, QUICK_SCRIPT)),
    );
    assert.equal((await json(await submit(b, c.token, QUICK_SCRIPT))).status, 429);
    const cancelled = await api(a, c.token, `/queries/${slow}`, { method: "DELETE" });
    assert.equal(cancelled.status, 200);
    await cancelled.body?.cancel();
    for (const [i, id] of queued.entries()) {
      const done = await waitForStatus(i % 2 ? b : a, c.token, id, stateIs("SUCCEEDED", "FAILED"));
      assert.equal(done.state, "SUCCEEDED", JSON.stringify(done));
    }
  },
);

await eachBackend(
  "a synchronous query answered by one server: its status through another, its result gone (410)",
  async (backend) => {
    await using c = await cluster(backend, 2);
    const [a, b] = c.servers as [ServerProcess, ServerProcess];
    await writeLog(join(c.logs, "rows.log"), 10);
    const res = await api(a, c.token, "/?scriptPath=/user", {
      method: "POST",
      headers: { "Content-Type": "text/vnd.engine.script" },
      body: QUICK_SCRIPT,
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), [{ rows: 10 }]);
    const id = res.headers.get("Trawl-Query-Id")!;
    const status = await waitForStatus(b, c.token, id, stateIs("SUCCEEDED"));
    assert.equal(status.queryId, id);
    for (const path of ["/result", "/result/schema", "/events"]) {
      const gone = await json(await api(b, c.token, `/queries/${id}${path}`));
      assert.equal(gone.status, 410, path);
      assert.equal(gone.body.code, "QUERY_EXPIRED");
    }
  },
);

await eachBackend(
  "many small asynchronous queries through one server with one running slot all succeed (queued ones run on the slot freed)",
  async (backend) => {
    await using c = await cluster(backend, 1, [
      "query.maxRunning=1",
      "query.maxQueued=100",
      "query.maxResultsPerUser=1000",
    ]);
    const [a] = c.servers as [ServerProcess];
    await writeLog(join(c.logs, "rows.log"), 10);
    let done = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (let i = 0; i < 15; i++) {
        const id = await submitted(a, c.token, QUICK_SCRIPT);
        const status = await waitForStatus(a, c.token, id, stateIs("SUCCEEDED", "FAILED"), 15_000);
        assert.equal(status.state, "SUCCEEDED", JSON.stringify(status));
        done++;
      }
    }));
    assert.equal(done, 120);
  },
);

await eachBackend(
  "an admin reads, cancels and frees another user's query through another server; a non-admin gets 404",
  async (backend) => {
    await using c = await cluster(backend, 2);
    const [a, b] = c.servers as [ServerProcess, ServerProcess];
    await writeLog(join(c.logs, "rows.log"), 10);
    await writeLog(join(c.logs, "pairs.log"), 10_000);
    const token = async (name: string, ...options: string[]) => {
      const added = await runCli(["user", "add", name, ...options, "--home", c.homes[1]!]);
      assert.equal(added.code, 0, added.stderr);
      return added.lastLine;
    };
    const [bob, carol] = [await token("bob", "--timezone", "Asia/Kolkata"), await token("carol")];
    const put = await api(a, c.token, "/datastores/logs", {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        type: "FILE",
        fileStore: { root: c.logs, acl: { users: { bob: ["read", "list"] }, groups: {} } },
      }),
    });
    assert.equal(put.status, 200, await put.text());

    // Bob's runaway query on A, seen and cancelled by the admin through B.
    const slow = await submitted(a, bob, SLOW_SCRIPT);
    await waitForStatus(b, c.token, slow, stateIs("RUNNING"));
    for (const path of ["", "/events"]) {
      const theirs = await json(await api(b, carol, `/queries/${slow}${path}`));
      assert.equal(theirs.status, 404, `${path}: ${JSON.stringify(theirs.body)}`);
    }
    assert.equal(
      (await json(await api(b, carol, `/queries/${slow}`, { method: "DELETE" }))).status,
      404,
    );
    const events = await api(b, c.token, `/queries/${slow}/events`);
    assert.equal(events.status, 200);
    const cancel = await json(await api(b, c.token, `/queries/${slow}`, { method: "DELETE" }));
    assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
    assert.equal(cancel.body.queryId, slow);
    assert.match(await events.text(), /event: state\ndata: \{[^\n]*"to":"CANCELLED"/);
    assert.equal((await waitForStatus(a, bob, slow, stateIs("CANCELLED"))).state, "CANCELLED");
    // The server the admin's DELETE went to says so in its log (its log is written in batches).
    const said = new RegExp(`INFO admin 'admin' cancelled query ${slow} of user 'bob'`);
    for (let i = 0; i < 50 && !b.stderr.some((l) => said.test(l)); i++) {
      await sleep(100);
    }
    assert.ok(b.stderr.some((l) => said.test(l)), b.stderr.slice(-5).join("\n"));
    // Resumed through B (the query's record in the KV): the missed changes first, then the status.
    const resumed = await api(b, c.token, `/queries/${slow}/events`, {
      headers: { "Last-Event-ID": "1.0" },
    });
    const kinds = [...(await resumed.text()).matchAll(/^id: (\S+)\nevent: (\w+)/gm)]
      .map((m) => `${m[1]} ${m[2]}`);
    assert.equal(kinds[0], "2.0 state", kinds.join(", "));
    assert.ok(kinds.indexOf(kinds.find((k) => k.endsWith(" status"))!) > 0, kinds.join(", "));

    // Bob's finished query on A: its status, result and schema for the admin through B.
    const quick = await submitted(a, bob, QUICK_SCRIPT);
    const done = await waitForStatus(b, c.token, quick, stateIs("SUCCEEDED", "FAILED"));
    assert.equal(done.state, "SUCCEEDED", JSON.stringify(done));
    const rows = await api(b, c.token, `/queries/${quick}/result`);
    assert.equal(rows.status, 200);
    assert.deepEqual(await rows.json(), [{ rows: 10 }]);
    const schema = await json(await api(b, c.token, `/queries/${quick}/result/schema`));
    assert.equal(schema.status, 200);
    for (const path of ["", "/result", "/result/schema", "/events"]) {
      const theirs = await json(await api(b, carol, `/queries/${quick}${path}`));
      assert.equal(theirs.status, 404, `${path}: ${JSON.stringify(theirs.body)}`);
    }
    // A time read by the admin through B as bob reads it through A: in bob's zone.
    const timed = await submitted(a, bob, "VALUES((t: T('2024-05-01T13:00:00Z')))");
    await waitForStatus(b, c.token, timed, stateIs("SUCCEEDED"));
    const bobs = await (await api(a, bob, `/queries/${timed}/result`)).json();
    assert.deepEqual(bobs, [{ t: "2024-05-01T18:30:00.000+05:30" }]);
    const admins = await api(b, c.token, `/queries/${timed}/result`);
    assert.equal(admins.status, 200);
    assert.deepEqual(await admins.json(), bobs);
    const freed = await api(b, c.token, `/queries/${quick}`, { method: "DELETE" });
    assert.equal(freed.status, 204);
    await freed.body?.cancel();
    const deadline = Date.now() + 10_000;
    let onA = 0;
    while (Date.now() < deadline) {
      onA = (await json(await api(a, bob, `/queries/${quick}`))).status;
      if (onA === 410) break;
      await sleep(50);
    }
    assert.equal(onA, 410);
  },
);
