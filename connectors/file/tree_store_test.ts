import assert from "node:assert/strict";
import { join } from "node:path";
import { treeStore } from "./tree_store.ts";
import { alice, bob, collect, makeTempTree } from "../../tests/support/temp_tree.ts";
import { QueryError } from "../../engine/front/diagnostics.ts";

Deno.test("treeStore lists matching files with size, times and the URI as written", async () => {
  const t = await makeTempTree({
    "/users/alice/logs/2024/05/17/app.log": "hello\n",
    "/users/alice/logs/2024/05/18/app.log": "hi\n",
    "/users/alice/logs/2024/05/18/app.txt": "no\n",
  });
  try {
    const store = treeStore(t.tree);
    const opts = t.options(alice);
    const files = await collect(store.list("/user/logs/$yyyy$/$MM$/$dd$/*.log", opts));
    assert.deepEqual(files.map((f) => [f.uri, f.size, f.pathTime]), [
      ["/user/logs/2024/05/17/app.log", 6, Date.parse("2024-05-17T00:00:00Z")],
      ["/user/logs/2024/05/18/app.log", 3, Date.parse("2024-05-18T00:00:00Z")],
    ]);
    assert.ok(Math.abs(files[0]!.modified - Date.now()) < 60_000);
    const text = await new Response(await files[0]!.open(opts.signal)).text();
    assert.equal(text, "hello\n");
    assert.deepEqual(opts.warnings, []);
  } finally {
    await t.remove();
  }
});

Deno.test("treeStore resolves relative paths against the working directory", async () => {
  const t = await makeTempTree({ "/shared/team/a.log": "a\n", "/shared/team/b.log": "b\n" });
  try {
    const opts = t.options(alice, { workDir: "/shared/team" });
    const files = await collect(treeStore(t.tree).list("*.log", opts));
    assert.deepEqual(files.map((f) => f.uri), ["/shared/team/a.log", "/shared/team/b.log"]);
    const one = await collect(treeStore(t.tree).list("b.log", opts));
    assert.deepEqual(one.map((f) => f.uri), ["/shared/team/b.log"]);
  } finally {
    await t.remove();
  }
});

Deno.test("treeStore applies from/to to the path time in the query's zone", async () => {
  const t = await makeTempTree({
    "/shared/d/20240516.log": "",
    "/shared/d/20240517.log": "",
    "/shared/d/20240518.log": "",
  });
  try {
    // 2024-05-17 00:00 in Berlin is 2024-05-16T22:00Z.
    const opts = t.options(alice, {
      timeZone: "Europe/Berlin",
      from: Date.parse("2024-05-16T22:30:00Z"),
      to: Date.parse("2024-05-17T21:00:00Z"),
    });
    const files = await collect(treeStore(t.tree).list("/shared/d/$yyyy$$MM$$dd$.log", opts));
    assert.deepEqual(files.map((f) => [f.uri, f.pathTime]), [
      ["/shared/d/20240517.log", Date.parse("2024-05-16T22:00:00Z")],
    ]);
  } finally {
    await t.remove();
  }
});

Deno.test("treeStore refuses a glob over a folder the user may not list", async () => {
  const t = await makeTempTree({ "/users/alice/secret/a.log": "x\n" });
  try {
    const store = treeStore(t.tree);
    assert.throws(
      () => store.list("/users/alice/secret/*.log", t.options(bob)),
      (e: QueryError) => e instanceof QueryError && e.diagnostic.code === "FORBIDDEN",
    );
  } finally {
    await t.remove();
  }
});

Deno.test("treeStore warns about and skips files the user may not read", async () => {
  const t = await makeTempTree({ "/users/alice/a.log": "x\n" }, [
    { path: "/users/alice", user: "bob", rights: ["list"] },
  ]);
  try {
    const opts = t.options(bob);
    const files = await collect(treeStore(t.tree).list("/users/alice/*.log", opts));
    assert.deepEqual(files, []);
    // One account of it: not also "no file matches" (it matched; it may not be read).
    assert.deepEqual(opts.warnings.map((w) => w.message), [
      "no right to read '/users/alice/a.log'; skipped",
    ]);
  } finally {
    await t.remove();
  }
});

Deno.test("treeStore warns about a missing file and yields nothing", async () => {
  const t = await makeTempTree();
  try {
    const opts = t.options(alice);
    assert.deepEqual(await collect(treeStore(t.tree).list("/user/none.log", opts)), []);
    assert.equal(opts.warnings.length, 1);
    assert.equal(opts.warnings[0]!.level, "WARN");
    assert.match(opts.warnings[0]!.message, /'\/user\/none\.log' does not exist/);
  } finally {
    await t.remove();
  }
});

Deno.test("treeStore refuses symlinks that lead out of the tree", async () => {
  const t = await makeTempTree({ "/shared/in/a.log": "inside\n" });
  const outside = await Deno.makeTempDir({ prefix: "trawl-outside-" });
  try {
    await Deno.writeTextFile(join(outside, "passwd.log"), "secret\n");
    await Deno.symlink(join(outside, "passwd.log"), t.host("/shared/in/b.log"));
    await Deno.symlink(outside, t.host("/shared/in/dir"));
    await Deno.symlink(t.host("/shared/in/a.log"), t.host("/shared/in/c.log"));
    const opts = t.options(alice);
    const files = await collect(treeStore(t.tree).list("/shared/in/**", opts));
    assert.deepEqual(files.map((f) => f.uri), ["/shared/in/a.log", "/shared/in/c.log"]);
    assert.equal(opts.warnings.length, 2);
    assert.ok(opts.warnings.every((w) => /leads out of the tree/.test(w.message)));
    assert.ok(opts.warnings.every((w) => !w.message.includes(outside)), "no host path shown");
    const direct = t.options(alice);
    assert.deepEqual(await collect(treeStore(t.tree).list("/shared/in/b.log", direct)), []);
    assert.match(direct.warnings[0]!.message, /cannot follow the link '\/shared\/in\/b\.log'/);
  } finally {
    await t.remove();
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("treeStore refuses, even to an admin, links into a sibling of the tree named like it", async () => {
  const t = await makeTempTree({ "/shared/in/a.log": "inside\n" });
  const sibling = join(t.dir, "data-evil"); // beside `<dir>/data`, its name starts with it
  try {
    await Deno.mkdir(sibling);
    await Deno.writeTextFile(join(sibling, "passwd.log"), "secret\n");
    await Deno.symlink(join(sibling, "passwd.log"), t.host("/shared/in/b.log"));
    await Deno.symlink(sibling, t.host("/shared/in/dir"));
    const admin = { name: "root", groups: [], admin: true };
    const opts = t.options(admin);
    const files = await collect(treeStore(t.tree).list("/shared/in/**", opts));
    assert.deepEqual(files.map((f) => f.uri), ["/shared/in/a.log"]);
    assert.equal(opts.warnings.length, 2);
    assert.ok(opts.warnings.every((w) => /leads out of the tree/.test(w.message)));
  } finally {
    await t.remove();
  }
});

Deno.test("treeStore refuses a symlink to a file of the tree that the user may not read", async () => {
  const t = await makeTempTree({ "/users/alice/secret.log": "secret\n" });
  try {
    await Deno.symlink(t.host("/users/alice/secret.log"), t.host("/users/bob/link.log"));
    const opts = t.options(bob);
    assert.deepEqual(await collect(treeStore(t.tree).list("/user/*.log", opts)), []);
    assert.match(opts.warnings[0]!.message, /links to a file you may not read/);
  } finally {
    await t.remove();
  }
});

Deno.test("treeStore turns a hostile path into a NOT_FOUND query error", () => {
  return makeTempTree().then(async (t) => {
    try {
      assert.throws(
        () => treeStore(t.tree).list("/shared/../../etc/*.log", t.options(alice)),
        (e: QueryError) => e instanceof QueryError && e.diagnostic.code === "NOT_FOUND",
      );
    } finally {
      await t.remove();
    }
  });
});
