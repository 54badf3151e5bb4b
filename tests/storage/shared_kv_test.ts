/**
 * Several real `main.ts serve` processes on one Deno KV file (the local SQLite backend) or one
 * PostgreSQL database (each test runs on both: tests/support/shared_state.ts), each
 * with its own home and port: users written through one are seen by the others at once.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../foundation/server_process.ts";
import { eachBackend, twoServers } from "../support/shared_state.ts";

function whoami(url: string, token: string | undefined): Promise<Response> {
  return fetch(`${url}/API/v1.0/whoami`, { headers: { Authorization: `Bearer ${token}` } });
}

async function statusOf(url: string, token: string | undefined): Promise<number> {
  const res = await whoami(url, token);
  await res.body?.cancel();
  return res.status;
}

await eachBackend(
  "servers sharing one KV share their users: one admin, seen by all, changed through any",
  async (backend) => {
    await using servers = await twoServers(backend, "trawl-kv-");
    const { a, b, homeA, homeB } = servers;
    // The first server created the admin in the KV; the second found it there.
    assert.ok(a.firstToken, a.stdout.join("\n"));
    assert.equal(b.firstToken, undefined, b.stdout.join("\n"));
    const admin = await whoami(b.url, a.firstToken);
    assert.equal(admin.status, 200);
    assert.equal((await admin.json()).name, "admin");
    // Nothing of the users went to the homes' files.
    for (const home of [homeA, homeB]) {
      await assert.rejects(
        () => Deno.stat(join(home, "conf", "users.json")),
        Deno.errors.NotFound,
      );
    }

    // A user added through home B's CLI works on A at once; a replaced token fails on both.
    const bob = await runCli(["user", "add", "bob", "--home", homeB]);
    assert.equal(bob.code, 0, bob.stderr);
    assert.equal(await statusOf(a.url, bob.lastLine), 200);
    const renewed = await runCli(["user", "token", "admin", "--home", homeA]);
    assert.equal(renewed.code, 0, renewed.stderr);
    assert.equal(await statusOf(b.url, a.firstToken), 401);
    assert.equal(await statusOf(a.url, a.firstToken), 401);
    assert.equal(await statusOf(b.url, renewed.lastLine), 200);

    // Two CLIs adding users at the same time through different homes: neither change is lost.
    const [carol, dave] = await Promise.all([
      runCli(["user", "add", "carol", "--home", homeA]),
      runCli(["user", "add", "dave", "--home", homeB]),
    ]);
    assert.equal(carol.code, 0, carol.stderr);
    assert.equal(dave.code, 0, dave.stderr);
    assert.equal(await statusOf(b.url, carol.lastLine), 200);
    assert.equal(await statusOf(a.url, dave.lastLine), 200);
    const list = await runCli(["user", "list", "--home", homeA]);
    assert.deepEqual(
      list.stdout.trim().split("\n").slice(1).map((line) => line.split(/\s+/)[0]).sort(),
      ["admin", "bob", "carol", "dave"],
    );
  },
);

await eachBackend(
  "a datastore defined through one server is used and removed through another at once",
  async (backend) => {
    await using servers = await twoServers(backend, "trawl-kv-");
    const { a, b, root } = servers;
    const logs = join(root, "logs");
    await Deno.mkdir(logs);
    await Deno.writeTextFile(join(logs, "a.log"), "one\ntwo\nthree\n");
    const auth = { Authorization: `Bearer ${a.firstToken}` };
    const definition = {
      type: "FILE",
      fileStore: { root: logs, acl: { users: { admin: ["read", "list"] }, groups: {} } },
    };
    const put = await fetch(`${a.url}/API/v1.0/datastores/archive`, {
      method: "PUT",
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify(definition),
    });
    assert.equal(put.status, 201, await put.text());

    const shown = await fetch(`${b.url}/API/v1.0/datastores/archive`, { headers: auth });
    assert.equal(shown.status, 200);
    assert.equal((await shown.json()).type, "FILE");
    const query = () =>
      fetch(`${b.url}/API/v1.0/?scriptPath=/user`, {
        method: "POST",
        headers: { ...auth, "Content-Type": "text/vnd.engine.script" },
        body: "PARSE(pattern: 'LD:line EOL', src: 'file://archive/*.log') | select(count(*) as n)",
      });
    // The admin was created through A: B makes its folder (/user) when it first sees the admin.
    const counted = await query();
    assert.equal(counted.status, 200, await counted.clone().text());
    assert.deepEqual(await counted.json(), [{ n: 3 }]);

    const removed = await fetch(`${a.url}/API/v1.0/datastores/archive`, {
      method: "DELETE",
      headers: auth,
    });
    assert.equal(removed.status, 204);
    await removed.body?.cancel();
    const gone = await query();
    assert.equal(gone.status, 404, await gone.text());
  },
);

await eachBackend(
  "concurrent writers of one datastore on two servers resolve by ETag, not by the last write",
  async (backend) => {
    await using servers = await twoServers(backend, "trawl-kv-");
    const { a, b } = servers;
    const auth = { Authorization: `Bearer ${a.firstToken}` };
    const define = (url: string, rootDir: string, ifMatch?: string) =>
      fetch(`${url}/API/v1.0/datastores/shared-logs`, {
        method: "PUT",
        headers: {
          ...auth,
          "Content-Type": "application/json",
          ...(ifMatch === undefined ? {} : { "If-Match": ifMatch }),
        },
        body: JSON.stringify({
          type: "FILE",
          fileStore: { root: rootDir, acl: { users: {}, groups: {} } },
        }),
      });
    const created = await define(a.url, "/var/log/first");
    assert.equal(created.status, 201);
    await created.body?.cancel();

    // Both servers read the same version; B writes first; A's write on the old ETag is refused.
    const readA = await fetch(`${a.url}/API/v1.0/datastores/shared-logs`, { headers: auth });
    const readB = await fetch(`${b.url}/API/v1.0/datastores/shared-logs`, { headers: auth });
    await readA.body?.cancel();
    await readB.body?.cancel();
    const etag = readA.headers.get("ETag")!;
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
    assert.equal(readB.headers.get("ETag"), etag);
    const byB = await define(b.url, "/var/log/by-b", etag);
    assert.equal(byB.status, 200, await byB.clone().text());
    assert.notEqual(byB.headers.get("ETag"), etag);
    await byB.body?.cancel();
    const byA = await define(a.url, "/var/log/by-a", etag);
    assert.equal(byA.status, 412);
    assert.equal((await byA.json()).code, "PRECONDITION_FAILED");

    const now = await fetch(`${a.url}/API/v1.0/datastores/shared-logs`, { headers: auth });
    assert.equal((await now.json()).fileStore.root, "/var/log/by-b");
    assert.equal(now.headers.get("ETag"), byB.headers.get("ETag"));
  },
);

Deno.test("a server whose KV cannot be opened does not start, and says which KV", async () => {
  const root = await Deno.makeTempDir({ prefix: "trawl-kv-" });
  try {
    const result = await runCli([
      "serve",
      "--home",
      join(root, "home"),
      "--set",
      `storage=kv:${join(root, "no", "such", "folder", "state.kv")}`,
      "--set",
      "wgui.port=0",
    ]);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stderr, /error: cannot open the KV '.*state\.kv'/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a server whose PostgreSQL cannot be reached does not start, and names it without its password", async () => {
  const root = await Deno.makeTempDir({ prefix: "trawl-pg-" });
  try {
    // A port nothing listens on.
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    const result = await runCli([
      "serve",
      "--home",
      join(root, "home"),
      "--set",
      `storage=pg:postgres://trawl:hunter2secret@127.0.0.1:${port}/trawl`,
      "--set",
      "wgui.port=0",
    ]);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(
      result.stderr,
      new RegExp(
        `error: cannot open the PostgreSQL storage 'postgres://trawl@127.0.0.1:${port}/trawl'`,
      ),
    );
    assert.doesNotMatch(result.stdout + result.stderr, /hunter2secret/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a storage setting of neither form stops the start and names the forms", async () => {
  const root = await Deno.makeTempDir({ prefix: "trawl-kv-" });
  try {
    const result = await runCli(["serve", "--home", root, "--set", "storage=redis://x"]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /storage.*'files', 'kv:<path of a KV file>'/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
