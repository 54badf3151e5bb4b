/**
 * Scan workers of a server whose tree is in a KV file (`storage = kv:<path>`, main.ts): the
 * workers open the same KV (actors/worker_tree.ts) and read the files put through the API and
 * the FILE datastores defined through it. Two real servers started as main.ts starts them, on
 * one KV file: one with `query.workers=2`, one with a single thread, answer every script alike,
 * and the first really ran its scans on workers (its pool's starts counted, each share done).
 * A user reading through a grant of the KV's rights document reads on the workers too, and the
 * workers' KV is closed with them.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../foundation/server_process.ts";
import {
  bigLog,
  type CountedServer,
  countedServer,
  stateHome,
  stopServer,
} from "../support/shared_state.ts";
import { sleep } from "../../engine/util/sleep.ts";

function api(s: CountedServer, token: string, path: string, init: RequestInit = {}) {
  return fetch(`${s.server.url}API/v1.0${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${token}`, ...init.headers },
    // For a hang only: a request took over 120 s at load 35.
    signal: AbortSignal.timeout(600_000),
  });
}

/** The rows of `script` run synchronously. */
async function run(s: CountedServer, token: string, script: string): Promise<unknown[]> {
  const res = await api(s, token, "/?scriptPath=/user", {
    method: "POST",
    headers: { "Content-Type": "text/plain" },
    body: script,
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text);
}

function bigJsonLines(lines = 330_000): string {
  const parts: string[] = [];
  for (let i = 0; i < lines; i++) {
    parts.push(JSON.stringify({ n: i, method: i % 3 === 0 ? "POST" : "GET", pad: "x".repeat(8) }));
  }
  return parts.join("\n") + "\n";
}

const GROUPED =
  "PARSE(pattern: '''INT:n ' ' LD:host ' ' WORD:method LD EOL''', src: '/users/admin/big.log')" +
  " | filter(n % 7 = 0) | select(method, count(*) as hits, sum(n) as total) | group(method)";
const ROWS =
  "PARSE(pattern: '''INT:n LD EOL''', src: '/users/admin/big.log') | filter(n % 50000 = 0)";
const JSON_GROUPED = "READ_JSON(src: '/users/admin/big.jsonl') | filter(n % 5 = 1)" +
  " | select(method, count(*) as hits, max(n) as last) | group(method)";
const STORE_GROUPED =
  "PARSE(pattern: '''INT:n ' ' LD:host ' ' WORD:method LD EOL''', src: 'file://logs/big.log')" +
  " | filter(n % 11 = 0) | select(method, count(*) as hits, sum(n) as total) | group(method)";

/** Open file descriptors of this process on the KV file `kvFile` (Linux). */
function kvFds(kvFile: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync("/proc/self/fd")) {
    try {
      const target = Deno.readLinkSync(`/proc/self/fd/${e.name}`);
      if (target.startsWith(kvFile)) out.push(target);
    } catch { /* closed meanwhile */ }
  }
  return out;
}

Deno.test("scan workers read a KV server's tree and its FILE datastores as one thread does", async () => {
  const root = await Deno.makeTempDir({ prefix: "trawl-kvworkers-" });
  const kvFile = join(root, "state.kv");
  const servers: CountedServer[] = [];
  try {
    const two = await countedServer(await stateHome(root, "two", `kv:${kvFile}`), 2);
    servers.push(two);
    const one = await countedServer(await stateHome(root, "one", `kv:${kvFile}`), 1);
    servers.push(one);
    assert.ok(two.server.deps.scanWorkers, "a KV-file server has scan workers");
    assert.equal(one.server.deps.scanWorkers?.count, 1);
    const token = two.token!;

    // Files put through the API into the admin's folder: in the KV, not in a home's folders.
    for (const [path, body] of [["big.log", bigLog()], ["big.jsonl", bigJsonLines()]]) {
      const put = await api(two, token, `/resources/user/${path}`, { method: "PUT", body: body! });
      assert.equal(put.status, 201, await put.text());
    }
    assert.deepEqual(await Array.fromAsync(Deno.readDir(join(root, "two", "data", "users"))), []);

    for (const script of [GROUPED, ROWS, JSON_GROUPED]) {
      const before = two.shares.started;
      const parallel = await run(two, token, script);
      assert.equal(two.shares.started - before, 2, `two shares on workers for ${script}`);
      assert.deepEqual(parallel, await run(one, token, script), script);
    }
    assert.equal((await run(two, token, ROWS)).length, 8);
    // Both methods, counted over both halves of the file (n % 21 = 0 are the POSTs).
    assert.deepEqual(await run(two, token, GROUPED), [
      { method: "POST", hits: 18096, total: 3_438_194_760 },
      { method: "GET", hits: 36190, total: 6_876_009_525 },
    ]);

    // Bob reads the admin's log only through a grant of the rights document in the KV (set by
    // the CLI): the workers read with the grants in force when his query starts.
    const bob = await two.server.deps.users.add("bob", {});
    assert.deepEqual(await run(two, bob, GROUPED), [], "skipped (a warning) before the grant");
    const rights = join(root, "rights.json");
    await Deno.writeTextFile(
      rights,
      JSON.stringify([{ path: "/users/admin", user: "bob", rights: ["read", "list"] }]),
    );
    const set = await runCli(["rights", "set", rights, "--home", join(root, "one")]);
    assert.equal(set.code, 0, set.stderr);
    for (let i = 0; i < 40; i++) {
      const res = await api(two, bob, "/resources/users/admin/big.log", { method: "HEAD" });
      await res.body?.cancel();
      if (res.status === 200) break;
      await sleep(100);
    }
    const startedForBob = two.shares.started;
    const bobs = await run(two, bob, GROUPED);
    assert.equal(two.shares.started - startedForBob, 2, "bob's query on two workers");
    assert.deepEqual(bobs, await run(one, bob, GROUPED));
    assert.deepEqual(bobs, await run(two, token, GROUPED));

    // A FILE datastore defined through the API (its definition only in the KV) over a host
    // folder: the workers find it as the server does.
    const logs = join(root, "logs");
    await Deno.mkdir(logs);
    await Deno.writeTextFile(join(logs, "big.log"), bigLog());
    const defined = await api(two, token, "/datastores/logs", {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        type: "FILE",
        fileStore: { root: logs, acl: { users: { admin: ["read", "list"] }, groups: {} } },
      }),
    });
    assert.equal(defined.status, 201, await defined.text());
    const before = two.shares.started;
    const parallel = await run(two, token, STORE_GROUPED);
    assert.equal(two.shares.started - before, 2, "two shares of the store's file on workers");
    assert.deepEqual(parallel, await run(one, token, STORE_GROUPED));

    // Every share ended with its rows or groups, none failed; the one-worker server ran each of
    // its five scans (over 1 MiB: ISOLATE_BYTES) as one share, apart from its own thread.
    for (const { shares } of [two, one]) {
      assert.deepEqual(shares.failures, []);
      assert.equal(
        (shares.ends.groups ?? 0) + (shares.ends.done ?? 0),
        shares.started,
        JSON.stringify(shares),
      );
    }
    assert.equal(one.shares.started, 5);

    // The workers' KV ends with them: once both servers stopped, nothing holds the KV file.
    for (const s of servers.splice(0)) await stopServer(s.server);
    for (let i = 0; i < 50 && kvFds(kvFile).length > 0; i++) {
      await sleep(100);
    }
    assert.deepEqual(kvFds(kvFile), []);
  } finally {
    for (const s of servers) await stopServer(s.server).catch(() => {});
    await Deno.remove(root, { recursive: true });
  }
});
