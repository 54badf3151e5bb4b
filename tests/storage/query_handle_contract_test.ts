/**
 * The contract of a query's handle (actors/query_handle.ts), run over both implementations: a
 * query of this server (the local handle: its actor) and one of another server sharing the KV
 * (the remote handle: its record and stored result). Two servers are built in this process on
 * one KV file, as main.ts builds them; the queries are submitted to server A through its HTTP
 * app, and found through A (local) or B (remote). Same assertions for both.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ensureHome } from "../../home/layout.ts";
import { createLogger } from "../../home/log.ts";
import { loadSettings } from "../../home/settings.ts";
import { openKvStorage } from "../../home/storage/kv_storage.ts";
import { buildDeps, storagePlace } from "../../main.ts";
import { createApp } from "../../routes/app.ts";
import { type Found, QueryDirectory } from "../../actors/query_directory.ts";
import type { QueryHandle } from "../../actors/query_handle.ts";
import type { QueryEvent } from "../../actors/query_event_feed.ts";
import type { User } from "../../engine/contracts/user.ts";
import { sleep } from "../../engine/util/sleep.ts";

const API = "/API/v1.0";
const ALICE: User = { name: "alice", groups: [], admin: false };
const BOB: User = { name: "bob", groups: [], admin: false };
const ROOT: User = { name: "root", groups: [], admin: true };

/** Every line of pairs.log joined with every other: far longer than any test waits. */
const SLOW_SCRIPT =
  "@a = PARSE(pattern: '''INT:n LD:x EOL''', src: 'file://logs/pairs.log') | select(1 as k, n);\n" +
  "@a | join(@a on left.k = right.k) | select(count(*) as pairs)";
const ROWS_SCRIPT = "VALUES((n: 1, s: 'a'), (n: 2, s: 'b'), (n: 3, s: 'c'), (n: 4, s: 'd'))";

interface Pair extends AsyncDisposable {
  /** Submits to server A as `user`; the query id. */
  submit(script: string, user?: string, sync?: boolean): Promise<string>;
  /** The directory of the server the handles come from (A: local, B: remote). */
  readonly directory: QueryDirectory;
  readonly kind: "live" | "remote";
  /** A request as `user` to the HTTP app of that server (silent streams beat every 30 ms). */
  request(path: string, user?: string): Promise<Response>;
}

async function pair(through: "a" | "b", settings: Record<string, string> = {}): Promise<Pair> {
  const root = await Deno.makeTempDir({ prefix: "trawl-handle-" });
  const storage = await openKvStorage(join(root, "state.kv"));
  const log = createLogger(() => {});
  const logs = join(root, "logs");
  await Deno.mkdir(logs);
  const pairs = Array.from({ length: 3000 }, (_, i) => `${i} x\n`).join("");
  await Deno.writeTextFile(join(logs, "pairs.log"), pairs);
  const servers: ReturnType<typeof buildDeps>[] = [];
  for (const name of ["a", "b"]) {
    const home = await ensureHome(join(root, name));
    const loaded = loadSettings(null, { "server.timeZone": "UTC", ...settings }).settings;
    const deps = buildDeps(home, loaded, log, undefined, storage, await storagePlace(storage, log));
    await deps.sharedQueries!.start(deps.supervisor!);
    servers.push(deps);
  }
  const [a, b] = servers;
  const tokens: Record<string, string> = {
    alice: await a!.users.add("alice", {}),
    bob: await a!.users.add("bob", {}),
    root: await a!.users.add("root", { admin: true }),
  };
  const app = createApp(a!);
  const put = await app.request(`${API}/datastores/logs`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${tokens.root}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      type: "FILE",
      fileStore: { root: logs, acl: { users: { alice: ["read", "list"] }, groups: {} } },
    }),
  });
  assert.equal(put.status, 201, await put.text());
  const from = through === "a" ? a : b;
  return {
    kind: through === "a" ? "live" : "remote",
    directory: new QueryDirectory(from!.supervisor!, from!.sharedQueries),
    request(path, user = "alice") {
      const looked = createApp({ ...from!, heartbeatMs: 30 });
      return Promise.resolve(
        looked.request(`${API}${path}`, { headers: { Authorization: `Bearer ${tokens[user]}` } }),
      );
    },
    async submit(script, user = "alice", sync = false) {
      const res = await app.request(
        sync ? `${API}/?scriptPath=/user` : `${API}/queries?scriptPath=/user`,
        {
          method: "POST",
          headers: { Authorization: `Bearer ${tokens[user]}`, "Content-Type": "text/plain" },
          body: script,
        },
      );
      if (sync) {
        await res.body?.cancel();
        assert.equal(res.status, 200);
        return res.headers.get("Trawl-Query-Id")!;
      }
      const body = await res.json();
      assert.equal(res.status, 201, JSON.stringify(body));
      return body.queryId;
    },
    async [Symbol.asyncDispose]() {
      for (const deps of servers) {
        await deps.sharedQueries?.stop();
        deps.supervisor?.stop();
        deps.lifetimes.pacer.stop();
      }
      storage.close();
      await Deno.remove(root, { recursive: true });
    },
  };
}

/** Finds `id` through the pair's server until `ready` holds for its handle (a remote record lags). */
async function found(
  p: Pair,
  id: string,
  ready: (h: QueryHandle) => boolean,
  user: User = ALICE,
): Promise<QueryHandle> {
  for (let i = 0; i < 600; i++) {
    const f: Found = await p.directory.find(user, id);
    if ("handle" in f && ready(f.handle)) return f.handle;
    await sleep(25);
  }
  throw new Error(`query ${id} never got ready through the pair`);
}

const isState = (...states: string[]) => (h: QueryHandle) => states.includes(h.status().state);

async function eventsOf(stream: ReadableStream<QueryEvent>): Promise<QueryEvent[]> {
  const out: QueryEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

async function collect(items: AsyncIterable<readonly unknown[]>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const batch of items) out.push(...batch);
  return out;
}

function contract(through: "a" | "b") {
  const name = through === "a" ? "local handle" : "remote handle";

  Deno.test(`${name}: a SUCCEEDED query gives its status, its items by range, its schema and its events`, async () => {
    await using p = await pair(through);
    const id = await p.submit(ROWS_SCRIPT);
    const handle = await found(p, id, isState("SUCCEEDED"));
    assert.equal((await p.directory.find(ALICE, id)).kind, p.kind);
    assert.equal(handle.queryId, id);
    assert.equal(handle.owner, "alice");
    assert.equal(handle.kept, true);
    assert.equal(handle.finished(), true);
    assert.equal(handle.status().queryId, id);
    const result = handle.result();
    assert.ok(result.ok);
    assert.equal(result.items.count, 4);
    assert.deepEqual(result.items.schema.map((f) => f.name), ["n", "s"]);
    assert.deepEqual(await collect(result.items.read(1, 2)), [{ n: 2, s: "b" }, { n: 3, s: "c" }]);
    assert.deepEqual((await collect(result.items.read(3, 99))).length, 1);
    // The whole life, ending after the finished state; resumed, nothing is repeated.
    const events = await eventsOf(handle.events(undefined));
    assert.equal(events[0]!.event, "status");
    assert.equal(events.at(-1)!.event, "stats");
    const changes = (handle.status().stateChanges as unknown[]).length;
    const resumed = await eventsOf(handle.events({ changes: 1, warnings: 0 }));
    const states = resumed.filter((e) => e.event === "state");
    assert.equal(states.length, changes - 1);
    assert.equal(resumed[0]!.event, "state");
    assert.equal(resumed[0]!.id, "2.0");
    assert.ok(resumed.findIndex((e) => e.event === "status") === changes - 1);
  });

  Deno.test(`${name}: stop() cancels an unfinished query and frees a finished one; the id then expires`, async () => {
    await using p = await pair(through);
    const slow = await p.submit(SLOW_SCRIPT);
    const running = await found(p, slow, isState("RUNNING"));
    assert.equal(running.finished(), false);
    const refused = running.result();
    assert.ok(!refused.ok && refused.why === "state" && refused.state === "RUNNING");
    const events = running.events(undefined);
    const stopped = await running.stop();
    assert.equal(stopped.stopped, "cancelled");
    assert.equal(stopped.status.queryId, slow);
    const told = await eventsOf(events);
    assert.ok(
      told.some((e) => e.event === "state" && (e.data as { to: string }).to === "CANCELLED"),
      `no CANCELLED state among the events told: ${JSON.stringify(told)}`,
    );
    const cancelled = await found(p, slow, isState("CANCELLED"));
    const result = cancelled.result();
    assert.ok(!result.ok && result.why === "state" && result.state === "CANCELLED");
    assert.equal((await cancelled.stop()).stopped, "freed");
    for (let i = 0; i < 400 && (await p.directory.find(ALICE, slow)).kind !== "expired"; i++) {
      await sleep(25);
    }
    assert.equal((await p.directory.find(ALICE, slow)).kind, "expired");
  });

  Deno.test(`${name}: an answered synchronous query keeps only its status`, async () => {
    await using p = await pair(through);
    const id = await p.submit(ROWS_SCRIPT, "alice", true);
    const handle = await found(p, id, isState("SUCCEEDED"));
    assert.equal(handle.kept, false);
    assert.equal(handle.finished(), true);
    assert.equal(handle.status().queryId, id);
    assert.deepEqual(handle.result(), { ok: false, why: "not-kept" });
  });

  Deno.test(`${name}: another user's id is unknown, an admin finds it, a never-made id is unknown`, async () => {
    await using p = await pair(through);
    const id = await p.submit(ROWS_SCRIPT);
    await found(p, id, isState("SUCCEEDED"));
    assert.equal((await p.directory.find(BOB, id)).kind, "unknown");
    const admin = await found(p, id, isState("SUCCEEDED"), ROOT);
    assert.equal(admin.owner, "alice");
    const read = admin.result();
    assert.ok(read.ok);
    assert.equal(read.items.owner.name, "alice");
    assert.equal((await p.directory.find(ALICE, crypto.randomUUID())).kind, "unknown");
  });

  Deno.test(`${name}: a silent events stream (a queued query) gets a comment heartbeat`, async () => {
    await using p = await pair(through, { "query.maxRunning": "1" });
    const slow = await p.submit(SLOW_SCRIPT);
    await found(p, slow, isState("RUNNING"));
    const queued = await p.submit(ROWS_SCRIPT);
    await found(p, queued, isState("QUEUED"));
    const res = await p.request(`/queries/${queued}/events`);
    assert.equal(res.status, 200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    // Bounded: with no heartbeat the stream stays silent for as long as the slow query runs.
    const started = Date.now();
    while (!text.includes(": keep-alive\n\n")) {
      assert.ok(Date.now() - started < 10_000, `no heartbeat in 10 s: ${text}`);
      const next = await Promise.race([
        reader.read(),
        new Promise<{ done: false; value: string }>((r) =>
          setTimeout(() => r({ done: false, value: "" }), 200)
        ),
      ]);
      assert.equal(next.done, false, text);
      text += next.value;
    }
    assert.match(text, /^id: \S+\nevent: status\n/);
    await reader.cancel();
    await (await found(p, slow, () => true)).stop();
  });
}

contract("a");
contract("b");
