import assert from "node:assert/strict";
import { join } from "node:path";
import { startTestServer } from "./server.ts";

const R = "/API/v1.0/resources";

async function text(res: Response): Promise<string> {
  return await res.text();
}

Deno.test("PUT creates a script, GET reads it back with its ETag, and /scripts serves it too", async () => {
  await using s = await startTestServer();
  const script = "VALUES((a: 1)) | select(a)";
  const put = await s.fetch("alice", `${R}/user/views/`, { method: "PUT" });
  assert.equal(put.status, 201);
  await put.body?.cancel();
  const created = await s.fetch("alice", `${R}/user/views/a.sx`, { method: "PUT", body: script });
  assert.equal(created.status, 201);
  const etag = created.headers.get("ETag");
  assert.match(etag ?? "", /^"[A-Za-z0-9_-]{20,}"$/);
  const got = await s.fetch("alice", `${R}/user/views/a.sx`);
  assert.equal(got.status, 200);
  assert.equal(got.headers.get("ETag"), etag);
  assert.match(got.headers.get("Content-Type") ?? "", /^text\/vnd\.engine\.script/);
  assert.equal(await text(got), script);
  const viaScripts = await s.fetch("alice", "/API/v1.0/scripts/user/views/a.sx");
  assert.equal(await text(viaScripts), script);
  const unchanged = await s.fetch("alice", `${R}/user/views/a.sx`, {
    headers: { "If-None-Match": etag! },
  });
  assert.equal(unchanged.status, 304);
  await unchanged.body?.cancel();
  // The stored script runs as a view.
  const run = await s.fetch("alice", "/API/v1.0/?scriptPath=/user/views/a.sx", { method: "POST" });
  assert.deepEqual(await run.json(), [{ a: 1 }]);
});

Deno.test("a folder lists only what the caller may list, with kinds, sizes and rights", async () => {
  await using s = await startTestServer();
  await s.write("/users/alice/logs/a.log", "x\n");
  await s.write("/users/alice/t.sxt", "");
  await s.write("/users/alice/v.sx", "VALUES((a: 1))");
  await s.write("/users/alice/.hidden.tmp", "");
  const res = await s.fetch("alice", `${R}/user`);
  assert.equal(res.status, 200);
  const entries = await res.json() as {
    name: string;
    kind: string;
    size: number;
    rights: string[];
  }[];
  assert.deepEqual(entries.map((e) => [e.name, e.kind]), [
    ["logs", "folder"],
    ["t.sxt", "table"],
    ["v.sx", "script"],
  ]);
  assert.deepEqual(entries[2]!.rights, ["list", "execute", "read", "write", "create"]);
  assert.equal(entries[2]!.size, "VALUES((a: 1))".length);
  const root = await (await s.fetch("alice", `${R}/`)).json() as { name: string }[];
  assert.deepEqual(root.map((e) => e.name).sort(), ["shared", "system", "users"]);
  const users = await (await s.fetch("alice", `${R}/users`)).json() as { name: string }[];
  assert.deepEqual(users.map((e) => e.name), ["alice"], "bob's folder is not listed to alice");
  const shared = await (await s.fetch("bob", `${R}/shared`)).json();
  assert.ok(Array.isArray(shared));
});

Deno.test("If-Match and If-None-Match guard writes: a stale ETag is 412 and of two writers with one ETag exactly one wins", async () => {
  await using s = await startTestServer();
  const first = await s.fetch("alice", `${R}/user/a.sx`, { method: "PUT", body: "VALUES((a: 1))" });
  const etag = first.headers.get("ETag")!;
  const again = await s.fetch("alice", `${R}/user/a.sx`, {
    method: "PUT",
    body: "VALUES((a: 9))",
    headers: { "If-None-Match": "*" },
  });
  assert.equal(again.status, 412);
  assert.equal((await again.json()).code, "PRECONDITION_FAILED");
  const writers = await Promise.all(
    [2, 3, 4].map((n) =>
      s.fetch("alice", `${R}/user/a.sx`, {
        method: "PUT",
        body: `VALUES((a: ${n}))`,
        headers: { "If-Match": etag },
      })
    ),
  );
  const statuses = writers.map((r) => r.status).sort();
  await Promise.all(writers.map((r) => r.body?.cancel()));
  assert.deepEqual(statuses, [200, 412, 412]);
  const stale = await s.fetch("alice", `${R}/user/a.sx`, {
    method: "PUT",
    body: "VALUES((a: 5))",
    headers: { "If-Match": etag },
  });
  assert.equal(stale.status, 412);
  await stale.body?.cancel();
  const deleteStale = await s.fetch("alice", `${R}/user/a.sx`, {
    method: "DELETE",
    headers: { "If-Match": etag },
  });
  assert.equal(deleteStale.status, 412);
  await deleteStale.body?.cancel();
  // If-Match compares strongly (RFC 9110): the current ETag marked weak does not match.
  const current = (await s.fetch("alice", `${R}/user/a.sx`)).headers.get("ETag")!;
  for (const method of ["PUT", "DELETE"]) {
    const weak = await s.fetch("alice", `${R}/user/a.sx`, {
      method,
      ...(method === "PUT" ? { body: "VALUES((a: 6))" } : {}),
      headers: { "If-Match": `W/${current}` },
    });
    assert.equal(weak.status, 412, method);
    await weak.body?.cancel();
  }
  const strong = await s.fetch("alice", `${R}/user/a.sx`, {
    method: "DELETE",
    headers: { "If-Match": `"nope", ${current}` },
  });
  assert.equal(strong.status, 204);
});

Deno.test("rights hold on every path: bob reads /shared but may not write it, and alice's files are 404 to him", async () => {
  await using s = await startTestServer();
  await s.write("/shared/a.log", "x\n");
  await s.write("/users/alice/secret.sx", "VALUES((a: 1))");
  assert.equal(await text(await s.fetch("bob", `${R}/shared/a.log`)), "x\n");
  const write = await s.fetch("bob", `${R}/shared/b.log`, { method: "PUT", body: "y" });
  assert.equal(write.status, 403);
  assert.equal((await write.json()).code, "FORBIDDEN");
  for (const path of ["users/alice/secret.sx", "users/alice/nothing.sx", "users/alice"]) {
    const res = await s.fetch("bob", `${R}/${path}`);
    assert.equal(res.status, 404, path);
    assert.equal((await res.json()).code, "NOT_FOUND");
  }
  const del = await s.fetch("bob", `${R}/users/alice/secret.sx`, { method: "DELETE" });
  assert.equal(del.status, 404);
  await del.body?.cancel();
  const move = await s.fetch("alice", `${R}/user/secret.sx?moveTo=/shared/stolen.sx`, {
    method: "POST",
  });
  assert.equal(move.status, 403, "alice may not create in /shared");
  await move.body?.cancel();
});

Deno.test("hostile paths are refused and nothing outside the tree is reached", async () => {
  await using s = await startTestServer();
  const outside = join(s.home, "outside.txt");
  await Deno.writeTextFile(outside, "outside");
  await Deno.symlink(outside, join(s.home, "data", "users", "alice", "link.txt"));
  for (
    const path of [
      "user/..%2f..%2foutside.txt",
      "user/%2e%2e/%2e%2e/outside.txt",
      "user/a%00b",
      "user/" + "x".repeat(300),
      "user/a\\b",
      "etc/passwd",
    ]
  ) {
    const res = await s.fetch("alice", `${R}/${path}`, { method: "PUT", body: "x" });
    assert.ok([400, 404].includes(res.status), `${path}: ${res.status}`);
    await res.body?.cancel();
  }
  const link = await s.fetch("alice", `${R}/user/link.txt`);
  assert.equal(link.status, 404);
  await link.body?.cancel();
  assert.equal(await Deno.readTextFile(outside), "outside");
});

Deno.test("bodies over resource.maxBytes are 413 and leave nothing behind", async () => {
  await using s = await startTestServer({ "resource.maxBytes": "1 KiB" });
  const res = await s.fetch("alice", `${R}/user/big.log`, {
    method: "PUT",
    body: "x".repeat(2048),
  });
  assert.equal(res.status, 413);
  assert.equal((await res.json()).code, "PAYLOAD_TOO_LARGE");
  const after = await s.fetch("alice", `${R}/user/big.log`);
  assert.equal(after.status, 404);
  await after.body?.cancel();
});

Deno.test("datastore definitions are listed but served only through /datastores", async () => {
  await using s = await startTestServer();
  await s.write("/system/datastores/corp.json", '{"type":"FILE"}');
  const admin = await s.deps.users.add("root", { admin: true });
  const as = (path: string, init: RequestInit = {}) =>
    fetch(s.url + path, { ...init, headers: { Authorization: `Bearer ${admin}` } });
  const list = await (await as(`${R}/system/datastores`)).json() as { kind: string }[];
  assert.deepEqual(list.map((e) => e.kind), ["datastore"]);
  const read = await as(`${R}/system/datastores/corp.json`);
  assert.equal(read.status, 403);
  await read.body?.cancel();
  const write = await as(`${R}/system/datastores/x.json`, { method: "PUT", body: "{}" });
  assert.equal(write.status, 403);
  await write.body?.cancel();
});

Deno.test("DELETE refuses a folder with content unless recursive; POST moveTo renames", async () => {
  await using s = await startTestServer();
  await s.write("/users/alice/d/a.sx", "VALUES((a: 1))");
  const refused = await s.fetch("alice", `${R}/user/d`, { method: "DELETE" });
  assert.equal(refused.status, 409);
  await refused.body?.cancel();
  const moved = await s.fetch("alice", `${R}/user/d/a.sx?moveTo=/user/d/b.sx`, { method: "POST" });
  assert.equal(moved.status, 201);
  await moved.body?.cancel();
  assert.equal((await s.fetch("alice", `${R}/user/d/a.sx`)).status, 404);
  assert.equal(await text(await s.fetch("alice", `${R}/user/d/b.sx`)), "VALUES((a: 1))");
  const onto = await s.fetch("alice", `${R}/user/d/b.sx?moveTo=/user/d/b.sx`, { method: "POST" });
  assert.equal(onto.status, 409);
  await onto.body?.cancel();
  const gone = await s.fetch("alice", `${R}/user/d?recursive=true`, { method: "DELETE" });
  assert.equal(gone.status, 204);
  assert.equal((await s.fetch("alice", `${R}/user/d`)).status, 404);
});

Deno.test("the tree's own folders and a user's home cannot be deleted or moved, even by an admin", async () => {
  await using s = await startTestServer();
  await s.write("/users/alice/keep.sx", "VALUES((a: 1))");
  await s.write("/shared/keep.log", "x\n");
  const admin = await s.deps.users.add("root", { admin: true });
  const as = (path: string, init: RequestInit = {}) =>
    fetch(s.url + path, { ...init, headers: { Authorization: `Bearer ${admin}` } });
  for (const path of ["/", "/users", "/shared", "/system", "/users/alice"]) {
    for (const suffix of ["", "?recursive=true"]) {
      const res = await as(`${R}${path === "/" ? "/" : path}${suffix}`, { method: "DELETE" });
      assert.equal(res.status, 403, `${path}${suffix}`);
      const body = await res.json();
      assert.equal(body.code, "FORBIDDEN");
      assert.match(body.message, /cannot be deleted; delete what is inside instead/);
    }
    if (path === "/") continue;
    const moved = await as(`${R}${path}?moveTo=/shared/elsewhere`, { method: "POST" });
    assert.equal(moved.status, 403, `move ${path}`);
    await moved.body?.cancel();
  }
  // Alice's own home, through /user, is hers to fill and empty, not to remove.
  const own = await s.fetch("alice", `${R}/user?recursive=true`, { method: "DELETE" });
  assert.equal(own.status, 403);
  await own.body?.cancel();
  // Nothing went: her file, the shared one, and her queries (in /user by default) still run.
  assert.equal(await text(await s.fetch("alice", `${R}/user/keep.sx`)), "VALUES((a: 1))");
  assert.equal(await text(await as(`${R}/shared/keep.log`)), "x\n");
  const query = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { "Content-Type": "text/vnd.engine.script" },
    body: "VALUES((a: 1))",
  });
  assert.equal(await text(query), '[{"a":1}]');
  // What is inside a home goes as before.
  const inside = await s.fetch("alice", `${R}/user/keep.sx`, { method: "DELETE" });
  assert.equal(inside.status, 204);
});
