/**
 * Edges of the storage and of what is kept in it, on both backends (the files storage in a temp
 * folder, the KV storage on a real Deno KV file): a delete's version, the files storage's
 * hidden temporary files, the storage tree's listing order, writes and moves onto what is
 * there, and users added at once through two stores of one storage.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Storage } from "../../engine/contracts/storage.ts";
import { ResourceConflict, type ResourceTree } from "../../engine/contracts/resource_tree.ts";
import type { User } from "../../engine/contracts/user.ts";
import { FileStorage } from "../../home/storage/file_storage.ts";
import { KvStorage } from "../../home/storage/kv_storage.ts";
import { UserStore } from "../../home/user_store.ts";
import { fsTreeTemp, kvTreeTemp } from "./tree_subjects.ts";
import { sleep } from "../../engine/util/sleep.ts";

const text = (s: string) => new TextEncoder().encode(s);
const alice: User = { name: "alice", groups: [], admin: false };

async function withStorages(fn: (storage: Storage, dir: string) => Promise<void>): Promise<void> {
  for (const kind of ["files", "kv"] as const) {
    const dir = await Deno.makeTempDir({ prefix: `trawl-edges-${kind}-` });
    const storage = kind === "files"
      ? new FileStorage(join(dir, "store"))
      : new KvStorage(await Deno.openKv(join(dir, "state.kv")), "test KV");
    try {
      await fn(storage, dir);
    } finally {
      storage.close();
      await Deno.remove(dir, { recursive: true });
    }
  }
}

async function conflictOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (e) {
    if (e instanceof ResourceConflict) return e.reason;
    throw e;
  }
  return "none";
}

Deno.test("a commit that deletes gives no version, one that writes gives the key's version", async () => {
  await withStorages(async (storage) => {
    const written = await storage.put(["a", "k"], text("v"));
    assert.ok(written.ok && typeof written.version === "string", storage.kind);
    assert.equal(await storage.version(["a", "k"]), written.ok ? written.version : "");
    assert.deepEqual(await storage.delete(["a", "k"]), { ok: true, version: null });
    assert.equal(await storage.version(["a", "k"]), null);
    const both = await storage.commit([
      { key: ["a", "x"], value: text("x") },
      { key: ["a", "y"], value: null },
    ]);
    assert.deepEqual(both, { ok: true, version: null }, storage.kind);
  });
});

Deno.test("files storage: a hidden file (an atomic write's temporary) is never listed as a key", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-hidden-" });
  try {
    const storage = new FileStorage(dir);
    await storage.put(["t", "a"], text("a"));
    await Deno.writeTextFile(join(dir, "t", ".a.tmp123"), "half");
    await Deno.writeTextFile(join(dir, "t", ".b"), "half");
    assert.deepEqual(await Array.fromAsync(storage.list(["t"])), [["t", "a"]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("both trees: a listing is in name order, a file cannot replace a folder, a move never lands on what is there", async () => {
  for (const make of [fsTreeTemp, () => kvTreeTemp()]) {
    await using temp = await make();
    const tree: ResourceTree = temp.tree;
    const at = (path: string) => tree.resolve(alice, path).real;
    for (const name of ["c.sx", "a.sx", "B.sx", "b.sx"]) {
      await tree.write(at(`/users/alice/${name}`), text(name));
    }
    await tree.mkdir(at("/users/alice/dir"));
    await tree.write(at("/users/alice/dir/x.sx"), text("x"));
    const names = (await tree.list(at("/users/alice"))).map((e) => e.name);
    assert.deepEqual(names, [...names].sort((a, b) => a.localeCompare(b)));
    assert.equal(names.length, 5);
    // A file written where a folder is: refused, the folder kept (the files tree refuses it
    // with the system's error, IsADirectory).
    await assert.rejects(tree.write(at("/users/alice/dir"), text("no")));
    if (!tree.hostFiles) {
      assert.equal(await conflictOf(tree.write(at("/users/alice/dir"), text("no"))), "exists");
    }
    assert.equal((await tree.stat(at("/users/alice/dir")))?.isFolder, true);
    // A folder moved onto a file, a file onto a folder: refused, both kept.
    assert.equal(
      await conflictOf(tree.move(at("/users/alice/dir"), at("/users/alice/a.sx"))),
      "exists",
    );
    assert.equal(
      await conflictOf(tree.move(at("/users/alice/c.sx"), at("/users/alice/dir"))),
      "exists",
    );
    assert.equal(
      new TextDecoder().decode((await tree.read(at("/users/alice/a.sx"))).bytes),
      "a.sx",
    );
    assert.equal((await tree.read(at("/users/alice/dir/x.sx"))).bytes.length, 1);
    // A moved file keeps its time.
    const before = (await tree.stat(at("/users/alice/c.sx")))!.modified;
    await sleep(20);
    await tree.move(at("/users/alice/c.sx"), at("/shared/c.sx"));
    assert.equal((await tree.stat(at("/shared/c.sx")))!.modified, before);
  }
});

Deno.test("storage tree: the root is never removed", async () => {
  await using temp = await kvTreeTemp();
  assert.equal(await conflictOf(temp.tree.remove("/", { recursive: true })), "not-empty");
  assert.equal((await temp.tree.stat("/users"))?.isFolder, true);
});

Deno.test("users added at once through two stores of one storage are all kept", async () => {
  await withStorages(async (storage) => {
    const a = new UserStore(storage);
    const b = new UserStore(storage);
    const names = Array.from({ length: 6 }, (_, i) => `user${i}`);
    const tokens = await Promise.all(names.map((n, i) => (i % 2 === 0 ? a : b).add(n)));
    assert.deepEqual((await a.list()).map((u) => u.name).sort(), names, storage.kind);
    for (const [i, token] of tokens.entries()) {
      assert.equal((await b.authenticate(token))?.name, names[i]);
    }
  });
});
