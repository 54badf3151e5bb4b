/**
 * The server pieces the web console stands on: `GET /queries`, `GET /queries/<id>/events`,
 * `GET /language`, `GET /machines`, `POST /patterns/try`, and the console's assets at `/`.
 */

import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "./server.ts";
import { expectError, finished, SLOW_SCRIPT, startQuery, writeBigLog } from "./client.ts";
import { queryMachine } from "../../actors/query_machine.ts";
import type { ConnectorPool } from "../../actors/connector_pool.ts";
import { CloudEmulator } from "../emulator/emulator.ts";
import { baseStore, CLIENT, HOUR, SECRET, TENANT } from "../cloudapi/harness.ts";
import { languageReference } from "../support/language_reference.ts";
import { sleep } from "../../engine/util/sleep.ts";

const API = "/API/v1.0";

interface Event {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

/** Reads a whole events stream (it ends by itself after the finished state). */
async function readAll(res: Response): Promise<Event[]> {
  const text = await res.text();
  return text.split("\n\n").filter((b) => b.trim() !== "").map((block) => {
    const get = (f: string) =>
      block.split("\n").find((l) => l.startsWith(`${f}: `))?.slice(f.length + 2) ?? "";
    return { id: get("id"), event: get("event"), data: JSON.parse(get("data")) };
  });
}

async function asAdmin(s: TestServer): Promise<string> {
  return await s.deps.users.add("root", { admin: true });
}

Deno.test("GET /queries lists the caller's queries newest first, and everyone's for admins", async () => {
  await using s = await startTestServer();
  const first = await startQuery(s, "VALUES((a: 1))");
  await sleep(5);
  const second = await startQuery(s, "// hits\nVALUES((a: 2))");
  const other = await startQuery(s, "VALUES((b: 1))", { user: "bob" });
  await finished(s, second);
  const mine = await (await s.fetch("alice", `${API}/queries`)).json();
  assert.deepEqual(mine.map((q: { queryId: string }) => q.queryId), [second, first]);
  assert.equal(mine[0].user, "alice");
  assert.equal(mine[0].state, "SUCCEEDED");
  assert.equal(mine[0].scriptPath, "/user");
  assert.equal(mine[0].excerpt, "// hits");
  assert.match(mine[0].submitted, /^\d{4}-\d{2}-\d{2}T/);
  assert.equal(typeof mine[0].progress, "number");
  const token = await asAdmin(s);
  const all = await (await s.fetch("root", `${API}/queries`, {
    headers: { Authorization: `Bearer ${token}` },
  })).json();
  assert.deepEqual(
    new Set(all.map((q: { queryId: string }) => q.queryId)),
    new Set([first, second, other]),
  );
  const bobs = await (await s.fetch("root", `${API}/queries?user=bob`, {
    headers: { Authorization: `Bearer ${token}` },
  })).json();
  assert.deepEqual(bobs.map((q: { queryId: string }) => q.queryId), [other]);
  // A freed query leaves the list.
  await (await s.fetch("alice", `${API}/queries/${second}`, { method: "DELETE" })).body?.cancel();
  const after = await (await s.fetch("alice", `${API}/queries`)).json();
  assert.deepEqual(after.map((q: { queryId: string }) => q.queryId), [first]);
});

Deno.test("the events stream starts with the status, tells each state change and ends after the finished state", async () => {
  await using s = await startTestServer();
  await writeBigLog(s, 200_000);
  const id = await startQuery(s, SLOW_SCRIPT);
  const res = await s.fetch("alice", `${API}/queries/${id}/events`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("Content-Type"), "text/event-stream; charset=UTF-8");
  const events = await readAll(res);
  assert.equal(events[0]!.event, "status");
  assert.equal(events[0]!.data.queryId, id);
  const seen = events[0]!.data.stateChanges as { to: string }[];
  const states = [
    ...seen.map((c) => c.to),
    ...events.filter((e) => e.event === "state").map((e) => e.data.to as string),
  ];
  assert.deepEqual(states, ["QUEUED", "SCHEDULED", "RUNNING", "SUCCEEDED"]);
  assert.equal(events.at(-1)!.event, "stats");
  assert.equal(typeof events.at(-1)!.data.rowsOut, "number");
  // Progress at most every 100 ms.
  const progress = events.filter((e) => e.event === "progress");
  assert.ok(progress.length <= 1 + Math.ceil((events.at(-1)!.data.elapsedMillis as number) / 100));
});

Deno.test("Last-Event-ID resumes the events stream without repeating a state change", async () => {
  await using s = await startTestServer();
  const id = await startQuery(s, "VALUES((a: 1))");
  await finished(s, id);
  const all = await readAll(
    await s.fetch("alice", `${API}/queries/${id}/events`, { headers: { "Last-Event-ID": "1.0" } }),
  );
  // The missed changes first, in order, each with its own id, then the status they lead to.
  assert.deepEqual(
    all.map((e) => `${e.id} ${e.event} ${e.data.to ?? e.data.state ?? ""}`.trim()),
    [
      "2.0 state SCHEDULED",
      "3.0 state RUNNING",
      "4.0 state SUCCEEDED",
      "4.0 status SUCCEEDED",
      "4.0 stats",
    ],
  );
  // An id this server never sent (past the query's changes) resumes from now, not echoed.
  const far = await readAll(
    await s.fetch("alice", `${API}/queries/${id}/events`, {
      headers: { "Last-Event-ID": "99.99" },
    }),
  );
  assert.deepEqual(far.map((e) => `${e.id} ${e.event}`), ["4.0 status", "4.0 stats"]);
});

Deno.test("the events stream of another user's query is 404, and a client that leaves costs nothing", async () => {
  await using s = await startTestServer();
  await writeBigLog(s, 300_000);
  const id = await startQuery(s, SLOW_SCRIPT);
  await expectError(await s.fetch("bob", `${API}/queries/${id}/events`), 404, "NOT_FOUND");
  // Count the stream's subscriptions to the query actor through its public subscribe().
  const ref = s.deps.supervisor!.getSnapshot().context.queries.get(id)!.ref;
  let open = 0;
  const subscribe = ref.subscribe.bind(ref) as (...args: unknown[]) => { unsubscribe(): void };
  (ref as { subscribe: unknown }).subscribe = (...args: unknown[]) => {
    const sub = subscribe(...args);
    open++;
    return { unsubscribe: () => (open--, sub.unsubscribe()) };
  };
  const abort = new AbortController();
  const res = await s.fetch("alice", `${API}/queries/${id}/events`, { signal: abort.signal });
  const reader = res.body!.getReader();
  await reader.read();
  assert.ok(open > 0, "the stream subscribes to the query");
  abort.abort();
  await reader.cancel().catch(() => {});
  // Once the server has noticed the client is gone, nothing observes the query any more.
  for (let i = 0; i < 200 && open > 0; i++) await sleep(10);
  assert.equal(open, 0);
  await (await s.fetch("alice", `${API}/queries/${id}`, { method: "DELETE" })).body?.cancel();
  // A query still running is cancelled; one that had finished already is freed (then 410).
  const after = await s.fetch("alice", `${API}/queries/${id}`);
  await after.body?.cancel();
  if (after.status !== 410) await finished(s, id);
});

Deno.test("GET /language lists the engine's commands, sources, functions and matchers", async () => {
  await using s = await startTestServer();
  const body = await (await s.fetch("alice", `${API}/language`)).json();
  // Every word the reference documents, and no other (docs/language.md, read by the helper).
  const reference = languageReference();
  assert.deepEqual([...body.commands].sort(), reference.commands);
  assert.deepEqual([...body.sources].sort(), reference.sources);
  type Fn = { name: string; aggregate: boolean };
  const lower = (fs: Fn[]) => fs.map((f) => f.name.toLowerCase()).sort();
  assert.deepEqual(lower(body.functions), reference.functions);
  assert.deepEqual(lower(body.functions.filter((f: Fn) => f.aggregate)), reference.aggregates);
  assert.ok(body.matchers.includes("IPV4") && body.matchers.includes("TIMESTAMP"));
  assert.ok(body.keywords.includes("and"));
});

Deno.test("GET /machines serves the definitions of the machines the server runs", async () => {
  await using s = await startTestServer();
  const body = await (await s.fetch("alice", `${API}/machines`)).json();
  assert.deepEqual(body.machines.query, JSON.parse(JSON.stringify(queryMachine.toJSON())));
  assert.deepEqual(Object.keys(body.machines.query.states), [
    "NEW",
    "QUEUED",
    "SCHEDULED",
    "RUNNING",
    "SUCCEEDED",
    "FAILED",
    "CANCELLED",
  ]);
  assert.ok(body.machines.supervisor.states.supervising);
  assert.ok(body.machines.connector.states);
  assert.equal(body.live.supervisor.held, 0);
});

Deno.test("GET /machines shows admins each connector's state, queue and token bucket", async () => {
  await using s = await startTestServer();
  const pool = s.deps.connectors as ConnectorPool;
  const release = await pool.acquire({
    tenant: "contoso.onmicrosoft.com",
    family: "directory",
    providerLimit: { limit: 25, unitMs: 10_000 },
    store: "corp",
  }, new AbortController().signal);
  const token = await asAdmin(s);
  const body = await (await s.fetch("root", `${API}/machines`, {
    headers: { Authorization: `Bearer ${token}` },
  })).json();
  assert.deepEqual(body.live.connectors, [{
    key: "tenant|contoso.onmicrosoft.com|graph",
    state: "pacing",
    waiting: 0,
    spent: 1,
    limit: 25,
    unitMs: 10_000,
  }]);
  const user = await (await s.fetch("alice", `${API}/machines`)).json();
  assert.equal(user.live.connectors, undefined);
  release();
  pool.stop();
});

Deno.test("POST /patterns/try gives the fields of each matching line and null for the others", async () => {
  await using s = await startTestServer();
  const res = await s.fetch("alice", `${API}/patterns/try`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      pattern: "IPV4:ip ' ' INT:status",
      lines: ["10.0.0.1 200", "not a line", "192.168.1.9 404"],
    }),
  });
  const body = await res.json();
  assert.equal(body.ok, true);
  assert.deepEqual(body.fields, { ip: "?IPADDR", status: "?INTEGER" });
  // Each line's spans and stop: tests/api/language_help_test.ts.
  assert.deepEqual(body.lines.map((l: { row: unknown }) => ({ row: l.row })), [
    { row: { ip: "10.0.0.1", status: 200 } },
    { row: null },
    { row: { ip: "192.168.1.9", status: 404 } },
  ]);
  const bad = await (await s.fetch("alice", `${API}/patterns/try`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ pattern: "INT:n NOPE:x", lines: ["1"] }),
  })).json();
  assert.equal(bad.ok, false);
  assert.match(bad.message, /NOPE/);
  await expectError(
    await s.fetch("alice", `${API}/patterns/try`, { method: "POST", body: "{" }),
    400,
    "BAD_PARAMETER",
  );
});

Deno.test("the console is served at / without a token under a strict Content-Security-Policy", async () => {
  await using s = await startTestServer();
  for (
    const [path, type] of [["/", "text/html"], ["/console.js", "text/javascript"], [
      "/console.css",
      "text/css",
    ]]
  ) {
    const res = await fetch(s.url + path);
    assert.equal(res.status, 200, path);
    assert.ok(res.headers.get("Content-Type")!.startsWith(type!), path);
    const csp = res.headers.get("Content-Security-Policy")!;
    assert.match(csp, /default-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
    const text = await res.text();
    if (path === "/") {
      assert.doesNotMatch(text, /<script>|<script [^>]*>[^<]+<\/script>|style=/);
      assert.match(text, /<script type="module" src="\/console.js">/);
    }
  }
  // The API still wants its token.
  assert.equal((await fetch(s.url + `${API}/queries`)).status, 401);
});

Deno.test("POST /datastores/<name>/test gets a token and reads once per enabled family, never showing the secret", async () => {
  const emulator = new CloudEmulator({
    tenants: [{ tenantId: TENANT, clientId: CLIENT, secret: SECRET }],
    seed: { from: Date.now() - 2 * HOUR, to: Date.now(), perHour: 2 },
  });
  await emulator.start();
  try {
    await using s = await startTestServer({
      "cloudapi.loginHost": emulator.url,
      "cloudapi.graphHost": emulator.url,
      "cloudapi.manageHost": emulator.url,
    });
    const token = await asAdmin(s);
    const root = (path: string, init: RequestInit = {}) =>
      s.fetch("root", path, {
        ...init,
        headers: { Authorization: `Bearer ${token}`, ...init.headers },
      });
    const define = async (name: string, store: Record<string, unknown>) => {
      const res = await root(`${API}/datastores/${name}`, {
        method: "PUT",
        body: JSON.stringify({ type: "CLOUDAPI", cloudapiStore: store }),
      });
      assert.ok(res.ok, await res.text());
    };
    await define("corp", baseStore());
    const res = await root(`${API}/datastores/corp/test`, { method: "POST" });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const body = JSON.parse(text);
    assert.deepEqual(
      body.families.map((f: { family: string; ok: boolean }) => [f.family, f.ok]),
      [["directory", true], ["activity", true], ["suite", true]],
    );
    // A wrong secret: each family says so, and the secret is in no answer.
    await define("wrong", baseStore({ secret: "Not.The.Secret-42", activityLogs: undefined }));
    const bad = await (await root(`${API}/datastores/wrong/test`, { method: "POST" })).text();
    const families = JSON.parse(bad).families;
    assert.deepEqual(families.map((f: { ok: boolean }) => f.ok), [false, false]);
    assert.match(families[0].message, /token/);
    assert.ok(!bad.includes("Not.The.Secret-42") && !text.includes(SECRET));
    // Admins only; unknown stores 404.
    await expectError(
      await s.fetch("alice", `${API}/datastores/corp/test`, { method: "POST" }),
      403,
      "FORBIDDEN",
    );
    await expectError(
      await root(`${API}/datastores/nope/test`, { method: "POST" }),
      404,
      "NOT_FOUND",
    );
  } finally {
    await emulator.stop();
  }
});

Deno.test("POST /datastores/<name>/test with a definition tests it unsaved, with the stored secret only where it was entered for", async () => {
  const emulator = new CloudEmulator({
    tenants: [{ tenantId: TENANT, clientId: CLIENT, secret: SECRET }],
    seed: { from: Date.now() - 2 * HOUR, to: Date.now(), perHour: 2 },
  });
  await emulator.start();
  try {
    await using s = await startTestServer({
      "cloudapi.loginHost": emulator.url,
      "cloudapi.graphHost": emulator.url,
      "cloudapi.manageHost": emulator.url,
    });
    const token = await asAdmin(s);
    const root = (path: string, init: RequestInit = {}) =>
      s.fetch("root", path, {
        ...init,
        headers: { Authorization: `Bearer ${token}`, ...init.headers },
      });
    const test = (name: string, store: Record<string, unknown>, user = "root") =>
      (user === "root" ? root : (p: string, i?: RequestInit) => s.fetch(user, p, i))(
        `${API}/datastores/${name}/test`,
        { method: "POST", body: JSON.stringify({ type: "CLOUDAPI", cloudapiStore: store }) },
      );
    // A new store, tested before it is saved: each family answers, nothing is stored.
    const res = await test("fresh", baseStore({ activityLogs: undefined }));
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.deepEqual(
      JSON.parse(text).families.map((f: { family: string; ok: boolean }) => [f.family, f.ok]),
      [["directory", true], ["suite", true]],
    );
    assert.ok(!text.includes(SECRET));
    await expectError(await root(`${API}/datastores/fresh`), 404, "NOT_FOUND");
    // A wrong secret fails, named by the service's answer, never echoed.
    const wrong = await (await test("fresh", baseStore({ secret: "Not.The.Secret-42" }))).text();
    assert.ok(JSON.parse(wrong).families.every((f: { ok: boolean }) => !f.ok), wrong);
    assert.ok(!wrong.includes("Not.The.Secret-42"));
    // A stored store's form without the secret: tested with the stored one, unless it changes
    // a key the secret is bound to.
    const put = await root(`${API}/datastores/corp`, {
      method: "PUT",
      body: JSON.stringify({ type: "CLOUDAPI", cloudapiStore: baseStore() }),
    });
    assert.ok(put.ok, await put.text());
    const kept = await test("corp", baseStore({ secret: undefined, timeZone: "Europe/Tallinn" }));
    assert.equal(kept.status, 200, await kept.clone().text());
    assert.ok((await kept.json()).families.every((f: { ok: boolean }) => f.ok));
    const moved = await test(
      "corp",
      baseStore({ secret: undefined, tenantId: "elsewhere.example" }),
    );
    assert.equal(moved.status, 400);
    assert.match(await moved.text(), /tenantId/);
    // The stored definition is unchanged by the tests.
    assert.equal(
      (await (await root(`${API}/datastores/corp`)).json()).cloudapiStore.timeZone,
      "UTC",
    );
    // Admins only; a body that is not JSON is refused by name.
    await expectError(await test("corp", baseStore(), "alice"), 403, "FORBIDDEN");
    await expectError(
      await root(`${API}/datastores/corp/test`, { method: "POST", body: "{nope" }),
      400,
      "BAD_DATASTORE",
    );
  } finally {
    await emulator.stop();
  }
});

Deno.test("with inspect.statelyUrl the supervisor and its queries report to Stately's inspector", async () => {
  const messages: string[] = [];
  const relay = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onmessage = (e) => messages.push(String(e.data));
    return response;
  });
  const url = `ws://127.0.0.1:${(relay.addr as Deno.NetAddr).port}`;
  try {
    await using s = await startTestServer({ "inspect.statelyUrl": url });
    const id = await startQuery(s, "VALUES((a: 1))");
    await finished(s, id);
    for (let i = 0; i < 100 && !messages.some((m) => m.includes('"RUNNING"')); i++) {
      await sleep(20);
    }
    assert.ok(messages.some((m) => m.includes('"supervisor"')), "the supervisor reported");
    assert.ok(messages.some((m) => m.includes(id)), "the query reported");
    (s.deps as { lifetimes?: { inspector?: { stop(): void } } }).lifetimes?.inspector?.stop();
  } finally {
    await relay.shutdown();
  }
});
