import assert from "node:assert/strict";
import { join } from "node:path";
import { createDatastoreRegistry } from "./registry.ts";
import { alice, collect, makeTempTree } from "../../tests/support/temp_tree.ts";
import { QueryError } from "../../engine/front/diagnostics.ts";
import type { Datastore } from "../../engine/contracts/datastore.ts";
import type { User } from "../../engine/contracts/user.ts";

const admin: User = { name: "root", groups: [], admin: true };

const code = (c: string) => (e: unknown) => e instanceof QueryError && e.diagnostic.code === c;

Deno.test("registry maps plain paths to the resource tree", async () => {
  const t = await makeTempTree({ "/shared/a.log": "a\n" });
  try {
    const store = await createDatastoreRegistry(t.tree).forUri("/shared/*.log", alice);
    const files = await collect(store.list("/shared/*.log", t.options(alice)));
    assert.deepEqual(files.map((f) => f.uri), ["/shared/a.log"]);
  } finally {
    await t.remove();
  }
});

Deno.test("registry reads file://<store>/ from the root a FILE datastore names", async () => {
  const host = await Deno.makeTempDir({ prefix: "trawl-store-" });
  const t = await makeTempTree({
    "/system/datastores/weblogs.json": JSON.stringify({
      type: "FILE",
      fileStore: { root: host, acl: { users: { alice: ["read", "list"] } } },
    }),
  });
  try {
    await Deno.mkdir(join(host, "2024", "05"), { recursive: true });
    await Deno.writeTextFile(join(host, "2024", "05", "a.log"), "line\n");
    await Deno.writeTextFile(join(t.dir, "outside.log"), "secret\n");
    await Deno.symlink(join(t.dir, "outside.log"), join(host, "2024", "05", "b.log"));
    const uri = "file://weblogs/$yyyy$/$MM$/*.log";
    const store = await createDatastoreRegistry(t.tree).forUri(uri, alice);
    const opts = t.options(alice);
    const files = await collect(store.list(uri, opts));
    assert.deepEqual(files.map((f) => [f.uri, f.pathTime]), [
      ["file://weblogs/2024/05/a.log", Date.parse("2024-05-01T00:00:00Z")],
    ]);
    assert.equal(await new Response(await files[0]!.open(opts.signal)).text(), "line\n");
    assert.match(opts.warnings[0]!.message, /leads out of the datastore 'weblogs'/);
  } finally {
    await t.remove();
    await Deno.remove(host, { recursive: true });
  }
});

Deno.test("registry refuses file:// stores that are not defined or not FILE", async () => {
  const t = await makeTempTree({
    "/system/datastores/cloud.json": JSON.stringify({ type: "CLOUDAPI", cloudapiStore: {} }),
    "/system/datastores/broken.json": "{",
    "/system/datastores/rel.json": JSON.stringify({ type: "FILE", fileStore: { root: "x" } }),
  });
  try {
    const registry = createDatastoreRegistry(t.tree);
    await assert.rejects(registry.forUri("file://nope/a.log", alice), code("NOT_FOUND"));
    // The problems of a definition are told to those its acl admits (here: admins only).
    await assert.rejects(registry.forUri("file://cloud/a.log", admin), /not FILE/);
    // Those it does not admit are told what they would be of a store that does not exist.
    await assert.rejects(registry.forUri("file://cloud/a.log", alice), code("NOT_FOUND"));
    await assert.rejects(registry.forUri("file://broken/a.log", alice), code("NOT_FOUND"));
    await assert.rejects(registry.forUri("file://broken/a.log", admin), /not valid JSON/);
    await assert.rejects(registry.forUri("file://rel/a.log", admin), /absolute folder/);
    await assert.rejects(registry.forUri("file://rel/a.log", alice), code("NOT_FOUND"));
    await assert.rejects(registry.forUri("file://../a.log", alice), code("NOT_FOUND"));
  } finally {
    await t.remove();
  }
});

Deno.test("registry serves registered schemes and names the known ones otherwise", async () => {
  const t = await makeTempTree();
  try {
    const registry = createDatastoreRegistry(t.tree);
    await assert.rejects(registry.forUri("cloudapi://x/y", alice), /known: file\)/);
    const empty: Datastore = { list: () => (async function* () {})() };
    const seen: string[] = [];
    registry.register("cloudapi", (uri, user) => {
      seen.push(`${uri} ${user.name}`);
      return Promise.resolve(empty);
    });
    assert.equal(await registry.forUri("cloudapi://x/y", alice), empty);
    assert.deepEqual(seen, ["cloudapi://x/y alice"]);
  } finally {
    await t.remove();
  }
});
