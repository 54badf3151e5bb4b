/**
 * Both resource trees pass the same contract (tests/storage/tree_contract.ts); the storage tree
 * also on what only it has: servers sharing one KV (or one PostgreSQL) see each other's files and
 * conflict by ETag.
 */

import { strict as assert } from "node:assert";
import { join } from "node:path";
import { runTreeContract } from "./tree_contract.ts";
import { fsTreeTemp, kvTreeTemp, pgTreeTemp } from "./tree_subjects.ts";
import { sharedPostgres } from "../support/postgres.ts";
import { ResourceConflict } from "../../engine/contracts/resource_tree.ts";
import { PathError } from "../../engine/contracts/resource_path.ts";
import type { User } from "../../engine/contracts/user.ts";
import type { Warning } from "../../engine/contracts/datastore.ts";
import { treeStore } from "../../connectors/file/tree_store.ts";

runTreeContract("files", { newTree: fsTreeTemp });
runTreeContract("kv", { newTree: () => kvTreeTemp() });
// A database of its own per clause, on one PostgreSQL started by this file.
const pg = await sharedPostgres();
runTreeContract("pg", { newTree: async () => pgTreeTemp(await pg.newDatabase()) });

Deno.test("storage tree: two trees on one PostgreSQL see each other's writes and conflict by ETag", async () => {
  const url = await pg.newDatabase();
  await using a = await pgTreeTemp(url);
  await using b = await pgTreeTemp(url);
  const path = a.tree.resolve(alice, "/shared/q.sx").real;
  const first = await a.tree.write(path, text("one"));
  const seen = await b.tree.read(path);
  assert.equal(new TextDecoder().decode(seen.bytes), "one");
  assert.equal(seen.etag, first.etag);
  await b.tree.write(path, text("two"), { ifMatch: seen.etag });
  await assert.rejects(
    () => a.tree.write(path, text("lost"), { ifMatch: first.etag }),
    (e: unknown) => e instanceof ResourceConflict && e.reason === "precondition",
  );
  assert.equal(new TextDecoder().decode((await a.tree.read(path)).bytes), "two");
});

const alice: User = { name: "alice", groups: [], admin: false };
const text = (s: string) => new TextEncoder().encode(s);

Deno.test("storage tree: two trees on one KV file see each other's writes and conflict by ETag", async () => {
  const root = await Deno.makeTempDir({ prefix: "trawl-kvshare-" });
  try {
    const kvFile = join(root, "shared.kv");
    await using a = await kvTreeTemp(kvFile);
    await using b = await kvTreeTemp(kvFile);
    const path = a.tree.resolve(alice, "/shared/q.sx").real;
    const first = await a.tree.write(path, text("one"));
    const seen = await b.tree.read(path);
    assert.equal(new TextDecoder().decode(seen.bytes), "one");
    assert.equal(seen.etag, first.etag);
    await b.tree.write(path, text("two"), { ifMatch: seen.etag });
    await assert.rejects(
      () => a.tree.write(path, text("lost"), { ifMatch: first.etag }),
      (e: unknown) => e instanceof ResourceConflict && e.reason === "precondition",
    );
    assert.equal(new TextDecoder().decode((await a.tree.read(path)).bytes), "two");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("storage tree: a table larger than one KV value is one value, read back whole", async () => {
  await using t = await kvTreeTemp();
  const path = t.tree.resolve(alice, "/user/big.sxt").real;
  const big = new Uint8Array(300_000).map((_, i) => i % 251);
  const out = await t.tree.openAtomic(path);
  for (let i = 0; i < big.length; i += 70_000) await out.write(big.subarray(i, i + 70_000));
  assert.equal(await t.tree.stat(path), null);
  await out.commit();
  assert.deepEqual((await t.tree.read(path)).bytes, big);
  assert.equal((await t.tree.stat(path))?.size, big.length);
});

Deno.test("storage tree: names the storage cannot keep are refused as paths", async () => {
  await using t = await kvTreeTemp();
  assert.throws(() => t.tree.resolve(alice, "/user/.hidden"), PathError);
});

Deno.test("storage tree: files beside the tree (datastore definitions) are listed, their folder implied", async () => {
  await using t = await kvTreeTemp();
  await t.storage.put(["data", "system", "datastores", "logs.json"], text('{"type":"FILE"}'));
  const system = await t.tree.list("/system");
  assert.deepEqual(system.map((e) => [e.name, e.isFolder]), [["datastores", true]]);
  const stores = await t.tree.list("/system/datastores");
  assert.deepEqual(stores.map((e) => [e.name, e.size]), [["logs.json", 15]]);
});

Deno.test("storage tree: tree paths in a query's sources list and read the files in the KV, with rights", async () => {
  await using t = await kvTreeTemp();
  const bob: User = { name: "bob", groups: [], admin: false };
  await t.tree.ensureFolder(["shared", "logs", "2024"]);
  await t.tree.write("/shared/logs/2024/a.log", text("one\ntwo\n"));
  await t.tree.write("/shared/logs/2024/b.log", text("three\n"));
  await t.tree.write("/users/alice/private.log", text("secret\n"));
  const store = treeStore(t.tree);
  const warnings: Warning[] = [];
  const options = (user: User) => ({
    user,
    workDir: `/users/${user.name}`,
    timeZone: "UTC",
    signal: new AbortController().signal,
    onWarning: (w: Warning) => warnings.push(w),
  });
  const found = await Array.fromAsync(store.list("/shared/logs/*/*.log", options(bob)));
  assert.deepEqual(found.map((f) => [f.uri, f.size]), [
    ["/shared/logs/2024/a.log", 8],
    ["/shared/logs/2024/b.log", 6],
  ]);
  const body = await new Response(await found[0]!.open(new AbortController().signal)).text();
  assert.equal(body, "one\ntwo\n");
  // Another user's folder: nothing listed, a warning, no content.
  assert.throws(
    () => store.list("/users/alice/*.log", options(bob)),
    /you may not list the folder '\/users\/alice'/,
  );
  const refused = await Array.fromAsync(store.list("/users/alice/private.log", options(bob)));
  assert.deepEqual(refused, []);
  assert.ok(
    warnings.some((w) => /does not exist or cannot be read/.test(w.message)),
    JSON.stringify(warnings),
  );
  const own = await Array.fromAsync(store.list("/user/*.log", options(alice)));
  assert.deepEqual(own.map((f) => f.uri), ["/user/private.log"]);
});
