/**
 * FILE datastores (`file://<store>/...`): the store's acl decides who may read through it, its
 * paths are checked like tree paths, and no symbolic link leads out of its root.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createDatastoreRegistry } from "../../connectors/file/registry.ts";
import { alice, bob, collect, makeTempTree } from "../support/temp_tree.ts";
import { QueryError } from "../../engine/front/diagnostics.ts";
import type { User } from "../../engine/contracts/user.ts";

const code = (c: string) => (e: unknown) => e instanceof QueryError && e.diagnostic.code === c;
const admin: User = { name: "root", groups: [], admin: true };
const carol: User = { name: "carol", groups: ["ops"], admin: false };
const proto: User = { name: "constructor", groups: ["__proto__"], admin: false };

async function storeTree() {
  const host = await Deno.makeTempDir({ prefix: "trawl-store-" });
  await Deno.mkdir(join(host, "web"), { recursive: true });
  await Deno.writeTextFile(join(host, "web", "a.log"), "a\n");
  const store = (acl?: unknown) =>
    JSON.stringify({ type: "FILE", fileStore: { root: host, ...(acl ? { acl } : {}) } });
  const t = await makeTempTree({
    "/system/datastores/open.json": store({
      users: { alice: ["read", "list"], bob: ["read"] },
      groups: { ops: ["read", "list"] },
    }),
    "/system/datastores/closed.json": store(),
  });
  return {
    t,
    host,
    registry: createDatastoreRegistry(t.tree),
    async [Symbol.asyncDispose]() {
      await t.remove();
      await Deno.remove(host, { recursive: true });
    },
  };
}

async function uris(s: Awaited<ReturnType<typeof storeTree>>, user: User, uri: string) {
  const store = await s.registry.forUri(uri, user);
  const opts = s.t.options(user);
  const files = await collect(store.list(uri, opts));
  return { uris: files.map((f) => f.uri), warnings: opts.warnings.map((w) => w.message) };
}

Deno.test("a FILE store without an acl serves admins only", async () => {
  await using s = await storeTree();
  // To others it is as a store that does not exist.
  await assert.rejects(s.registry.forUri("file://closed/web/a.log", alice), code("NOT_FOUND"));
  await assert.rejects(
    s.registry.forUri("file://closed/web/a.log", alice),
    /there is no FILE datastore 'closed' that you may read/,
  );
  assert.deepEqual((await uris(s, admin, "file://closed/web/*.log")).uris, [
    "file://closed/web/a.log",
  ]);
});

Deno.test("a FILE store's acl gives read to the users and groups it names, list for globs", async () => {
  await using s = await storeTree();
  for (const user of [alice, carol, bob]) {
    assert.deepEqual((await uris(s, user, "file://open/web/a.log")).uris, [
      "file://open/web/a.log",
    ]);
  }
  assert.deepEqual((await uris(s, carol, "file://open/**/*.log")).uris, [
    "file://open/web/a.log",
  ]);
  // bob may read but not list: a glob is refused as a whole.
  const store = await s.registry.forUri("file://open/web/*.log", bob);
  assert.throws(() => store.list("file://open/web/*.log", s.t.options(bob)), code("FORBIDDEN"));
  // Names that are also properties of every object grant nothing.
  await assert.rejects(s.registry.forUri("file://open/web/a.log", proto), code("NOT_FOUND"));
});

Deno.test("the path of a file:// URI is refused like a tree path when it is hostile", async () => {
  await using s = await storeTree();
  const store = await s.registry.forUri("file://open/web/a.log", alice);
  for (
    const path of [
      "/../x",
      "/web/../../etc/passwd",
      "/web/%2e%2e/%2e%2e/etc/passwd",
      "/web/%252e%252e/x",
      "/web/\uff0e\uff0e/x",
      "/web/a%00.log",
      "/web\\..\\x",
      "//etc/passwd",
      "",
    ]
  ) {
    const uri = `file://open${path}`;
    assert.throws(() => store.list(uri, s.t.options(alice)), code("NOT_FOUND"), uri);
  }
});

Deno.test("no symbolic link leads out of a FILE store's root, not even along the way", async () => {
  await using s = await storeTree();
  const outside = await Deno.makeTempDir({ prefix: "trawl-outside-" });
  try {
    await Deno.writeTextFile(join(outside, "secret.log"), "secret\n");
    await Deno.symlink(outside, join(s.host, "out"));
    await Deno.symlink(join(outside, "secret.log"), join(s.host, "web", "s.log"));
    for (const uri of ["file://open/out/secret.log", "file://open/out/*.log", "file://open/**"]) {
      const r = await uris(s, alice, uri);
      assert.ok(!r.uris.some((u) => /secret|s\.log/.test(u)), `${uri}: ${r.uris}`);
      assert.ok(r.warnings.some((w) => /leads out of the datastore 'open'/.test(w)), uri);
      assert.ok(!r.warnings.join("\n").includes(outside), "no host path in warnings");
    }
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("a datastore definition is only read from /system/datastores itself", async () => {
  await using s = await storeTree();
  // alice writes a definition in her own folder; a link (made by someone else) points to it.
  await s.t.write(
    "/users/alice/evil.json",
    JSON.stringify({ type: "FILE", fileStore: { root: "/", acl: { users: { alice: ["read"] } } } }),
  );
  await Deno.symlink(
    s.t.host("/users/alice/evil.json"),
    s.t.host("/system/datastores/evil.json"),
  );
  await assert.rejects(s.registry.forUri("file://evil/etc/passwd", alice), code("NOT_FOUND"));
});

Deno.test("a FILE definition with unknown keys or a bad acl is refused, naming the key", async () => {
  await using s = await storeTree();
  await s.t.write(
    "/system/datastores/typo.json",
    JSON.stringify({ type: "FILE", fileStore: { root: "/x", acl: { user: {} } } }),
  );
  await assert.rejects(s.registry.forUri("file://typo/a", admin), /key 'fileStore\.acl'.*user/);
  await assert.rejects(s.registry.forUri("file://typo/a", admin), code("BAD_DATASTORE"));
  await s.t.write("/system/datastores/broken.json", "{ not json");
  await assert.rejects(s.registry.forUri("file://broken/a", admin), code("BAD_DATASTORE"));
});
