/**
 * What every resource tree (engine/contracts/resource_tree.ts) must do with its files, whatever keeps them:
 * the local disk (home/resource_tree.ts) or the storage (home/storage_tree.ts). A tree's test
 * calls `runTreeContract(name, { newTree })`, which registers one Deno test per clause.
 */

import { strict as assert } from "node:assert";
import { ResourceConflict, type ResourceTree } from "../../engine/contracts/resource_tree.ts";
import { PathError } from "../../engine/contracts/resource_path.ts";
import type { User } from "../../engine/contracts/user.ts";
import { TreeTemp } from "./tree_subjects.ts";

export interface TreeSubject {
  /** A fresh tree with the folders /users/alice, /shared and /system; disposed by the test. */
  newTree(): Promise<TreeTemp>;
}

const alice: User = { name: "alice", groups: [], admin: false };
const text = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

/** A few of the paths every tree must refuse (home/resource_tree_test.ts has the long list). */
const HOSTILE = [
  "..",
  "/users/alice/../bob/x",
  "/shared/%2e%2e/users/bob",
  "/shared/a%2fb",
  "/shared\\..\\etc",
  "/shared/a\u0000b",
  "/shared//x",
  "/etc/passwd",
  "C:/Windows/system.ini",
  "/shared/\uff0e\uff0e/users/bob",
  "/users/bob.",
  "/Shared/x",
  "/shared/" + "a".repeat(256),
];

async function conflictOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (e) {
    if (e instanceof ResourceConflict) return e.reason;
    throw e;
  }
  return "none";
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  return decode(new Uint8Array(await new Response(stream).arrayBuffer()));
}

export function runTreeContract(name: string, subject: TreeSubject): void {
  const clause = (what: string, body: (tree: ResourceTree) => Promise<void>) =>
    Deno.test(`tree contract (${name}): ${what}`, async () => {
      await using temp = await subject.newTree();
      await body(temp.tree);
    });

  const at = (tree: ResourceTree, path: string) => tree.resolve(alice, path).real;

  clause("hostile paths are refused by resolve with a PathError", async (tree) => {
    for (const path of HOSTILE) {
      assert.throws(
        () => tree.resolve(alice, path, "/shared"),
        (e: unknown) => e instanceof PathError,
        JSON.stringify(path),
      );
    }
    // /user is the caller's folder, relative paths are under the working directory.
    assert.equal(tree.resolve(alice, "/user/x.sx").canonical, "/users/alice/x.sx");
    assert.equal(tree.resolve(alice, "logs/a.log", "/shared").canonical, "/shared/logs/a.log");
    await Promise.resolve();
  });

  clause("a file written is read back whole with its ETag; stat and list show it", async (tree) => {
    const file = at(tree, "/user/a.sx");
    assert.equal(await tree.stat(file), null);
    const first = await tree.write(file, text("VALUES((a: 1))"));
    assert.equal(first.created, true);
    assert.match(first.etag, /^"[^"]+"$/);
    const read = await tree.read(file);
    assert.equal(decode(read.bytes), "VALUES((a: 1))");
    assert.equal(read.etag, first.etag);
    const info = await tree.stat(file);
    assert.equal(info?.isFolder, false);
    assert.equal(info?.size, 14);
    const second = await tree.write(file, text("VALUES((a: 2))"));
    assert.equal(second.created, false);
    assert.notEqual(second.etag, first.etag);
    const entries = await tree.list(at(tree, "/user"));
    assert.deepEqual(entries.map((e) => [e.name, e.isFolder, e.size]), [["a.sx", false, 14]]);
    assert.equal(await readAll(await tree.open(file, new AbortController().signal, 8)), "a: 2))");
  });

  clause(
    "If-Match and If-None-Match: a stale ETag is a conflict, not a lost write",
    async (tree) => {
      const file = at(tree, "/shared/s.sx");
      const { etag } = await tree.write(file, text("one"));
      assert.equal(
        await conflictOf(tree.write(file, text("x"), { ifNoneMatch: "*" })),
        "precondition",
      );
      const next = await tree.write(file, text("two"), { ifMatch: etag });
      assert.equal(
        await conflictOf(tree.write(file, text("three"), { ifMatch: etag })),
        "precondition",
      );
      assert.equal(decode((await tree.read(file)).bytes), "two");
      assert.equal(
        await conflictOf(tree.remove(file, { recursive: false, preconditions: { ifMatch: etag } })),
        "precondition",
      );
      await tree.remove(file, { recursive: false, preconditions: { ifMatch: next.etag } });
      assert.equal(await tree.stat(file), null);
      const missing = at(tree, "/shared/none.sx");
      assert.equal(
        await conflictOf(tree.write(missing, text("x"), { ifMatch: etag })),
        "precondition",
      );
    },
  );

  clause("two writers with the same If-Match: exactly one wins", async (tree) => {
    const file = at(tree, "/shared/race.sx");
    const { etag } = await tree.write(file, text("base"));
    const results = await Promise.all(
      ["a", "b", "c"].map((v) => conflictOf(tree.write(file, text(v), { ifMatch: etag }))),
    );
    assert.equal(results.filter((r) => r === "none").length, 1, String(results));
    assert.equal(results.filter((r) => r === "precondition").length, 2, String(results));
  });

  clause(
    "folders: mkdir, a file needs its folder, remove only empty unless recursive",
    async (tree) => {
      const folder = at(tree, "/shared/team");
      await tree.mkdir(folder);
      assert.equal((await tree.stat(folder))?.isFolder, true);
      assert.equal(await conflictOf(tree.mkdir(folder)), "exists");
      assert.equal(await conflictOf(tree.mkdir(at(tree, "/shared/no/deeper"))), "not-folder");
      assert.equal(
        await conflictOf(tree.write(at(tree, "/shared/no/x.sx"), text("x"))),
        "not-folder",
      );
      await tree.mkdir(at(tree, "/shared/team/sub"));
      await tree.write(at(tree, "/shared/team/sub/x.sx"), text("x"));
      await tree.write(at(tree, "/shared/team/y.sxt"), text("y"));
      const names = (await tree.list(folder)).map((e) => `${e.name}${e.isFolder ? "/" : ""}`);
      assert.deepEqual(names, ["sub/", "y.sxt"]);
      assert.equal(
        await conflictOf(tree.remove(folder, { recursive: false })),
        "not-empty",
      );
      await tree.remove(folder, { recursive: true });
      assert.equal(await tree.stat(folder), null);
      assert.equal(await tree.stat(at(tree, "/shared/team/sub/x.sx")), null);
      assert.deepEqual((await tree.list(at(tree, "/shared"))).map((e) => e.name), []);
    },
  );

  clause("move: a file or a folder with its content, never over something", async (tree) => {
    await tree.write(at(tree, "/user/a.sx"), text("A"));
    await tree.write(at(tree, "/user/b.sx"), text("B"));
    assert.equal(
      await conflictOf(tree.move(at(tree, "/user/a.sx"), at(tree, "/user/b.sx"))),
      "exists",
    );
    await tree.move(at(tree, "/user/a.sx"), at(tree, "/shared/a.sx"));
    assert.equal(await tree.stat(at(tree, "/user/a.sx")), null);
    assert.equal(decode((await tree.read(at(tree, "/shared/a.sx"))).bytes), "A");
    await tree.mkdir(at(tree, "/user/dir"));
    await tree.mkdir(at(tree, "/user/dir/inner"));
    await tree.write(at(tree, "/user/dir/inner/c.sx"), text("C"));
    await tree.move(at(tree, "/user/dir"), at(tree, "/shared/moved"));
    assert.equal(await tree.stat(at(tree, "/user/dir")), null);
    assert.equal(decode((await tree.read(at(tree, "/shared/moved/inner/c.sx"))).bytes), "C");
    assert.equal(
      await conflictOf(tree.move(at(tree, "/user/b.sx"), at(tree, "/shared/nowhere/b.sx"))),
      "not-folder",
    );
  });

  clause("openAtomic: nothing is seen before commit, an abort keeps the old file", async (tree) => {
    const file = at(tree, "/user/t.sxt");
    await tree.write(file, text("old"));
    const out = await tree.openAtomic(file);
    await out.write(text("HEADER...."));
    await out.write(text("rows"));
    assert.equal(decode((await tree.read(file)).bytes), "old");
    await out.patchStart(text("header"));
    const tail = [];
    for await (const chunk of out.readFrom(10)) tail.push(decode(chunk));
    assert.equal(tail.join(""), "rows");
    await out.commit();
    assert.equal(decode((await tree.read(file)).bytes), "header....rows");
    const dropped = await tree.openAtomic(file);
    await dropped.write(text("never"));
    await dropped.abort();
    await dropped.abort();
    assert.equal(decode((await tree.read(file)).bytes), "header....rows");
    const names = (await tree.list(at(tree, "/user"))).map((e) => e.name);
    assert.deepEqual(names, ["t.sxt"]);
  });

  clause("realPath: NotFound for a missing path, a refused right is a PathError", async (tree) => {
    const bob: User = { name: "bob", groups: [], admin: false };
    await tree.write(at(tree, "/user/mine.sx"), text("x"));
    const resolved = tree.resolve(alice, "/user/mine.sx");
    assert.equal(typeof await tree.realPath(resolved, "write"), "string");
    await assert.rejects(
      () => tree.realPath(tree.resolve(alice, "/user/none.sx")),
      Deno.errors.NotFound,
    );
    await assert.rejects(
      () => tree.realPath(tree.resolve(bob, "/users/alice/mine.sx"), "write"),
      PathError,
    );
    assert.equal(tree.may(bob, "read", "/users/alice/mine.sx"), false);
    assert.equal(tree.may(bob, "read", "/shared/x"), true);
  });
}
