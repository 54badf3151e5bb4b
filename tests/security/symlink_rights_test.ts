/**
 * Symbolic links inside the resource tree (placed by a host admin or an archive extraction)
 * must not let a user read or list what the rights refuse where the bytes really are.
 */

import assert from "node:assert/strict";
import { treeStore } from "../../connectors/file/tree_store.ts";
import { alice, bob, collect, makeTempTree } from "../support/temp_tree.ts";
import type { User } from "../../engine/contracts/user.ts";

const admin: User = { name: "root", groups: [], admin: true };

async function linkedTree() {
  const t = await makeTempTree({
    "/users/bob/secret.log": "bob's secret\n",
    "/users/bob/deep/inner.log": "bob's inner\n",
    "/system/keys/k.log": "system key\n",
    "/shared/logs/a.log": "shared a\n",
    "/users/alice/own.log": "alice\n",
  });
  // A file link, a folder link, and a link in /shared into /system (listable, not readable).
  await Deno.symlink(t.host("/users/bob/secret.log"), t.host("/users/alice/file.log"));
  await Deno.symlink(t.host("/users/bob"), t.host("/users/alice/bobs"));
  await Deno.symlink(t.host("/system/keys"), t.host("/shared/keys"));
  // A link to a place alice may read anyway.
  await Deno.symlink(t.host("/shared/logs"), t.host("/users/alice/logs"));
  return t;
}

Deno.test("a link to another user's file is not read, by name or by glob", async () => {
  const t = await linkedTree();
  try {
    const store = treeStore(t.tree);
    for (const pattern of ["/user/file.log", "/user/*.log", "/users/alice/**"]) {
      const opts = t.options(alice);
      const files = await collect(store.list(pattern, opts));
      assert.ok(!files.some((f) => f.uri.includes("file.log")), pattern);
      assert.ok(opts.warnings.some((w) => /may not read|lack/.test(w.message)), pattern);
    }
  } finally {
    await t.remove();
  }
});

Deno.test("a path through a linked folder is checked where the folder really is", async () => {
  const t = await linkedTree();
  try {
    const store = treeStore(t.tree);
    const cases: [User, string, string[]][] = [
      [alice, "/user/bobs/secret.log", []], // the link is an ancestor, the name literal
      [alice, "/user/bobs/*.log", []],
      [alice, "/user/bobs/deep/inner.log", []],
      [alice, "/shared/keys/k.log", []], // /system may be listed, not read
      [alice, "/shared/keys/*.log", []],
      [alice, "/shared/**/*.log", ["/shared/logs/a.log"]],
      [alice, "/user/logs/*.log", ["/user/logs/a.log"]], // readable anyway: followed
      [bob, "/users/bob/secret.log", ["/users/bob/secret.log"]],
      [admin, "/shared/keys/*.log", ["/shared/keys/k.log"]],
    ];
    for (const [user, pattern, expected] of cases) {
      const opts = t.options(user);
      const files = await collect(store.list(pattern, opts));
      assert.deepEqual(files.map((f) => f.uri), expected, `${user.name} ${pattern}`);
      for (const f of files) {
        const text = await new Response(await f.open(opts.signal)).text();
        assert.ok(!text.includes("secret") || user === bob, pattern);
      }
    }
  } finally {
    await t.remove();
  }
});

Deno.test("** does not walk through a linked folder into one the user may not list", async () => {
  const t = await linkedTree();
  try {
    const opts = t.options(alice);
    const files = await collect(treeStore(t.tree).list("/users/alice/**/*.log", opts));
    assert.deepEqual(files.map((f) => f.uri).sort(), [
      "/users/alice/logs/a.log",
      "/users/alice/own.log",
    ]);
    const messages = opts.warnings.map((w) => w.message).join("\n");
    assert.match(messages, /bobs/);
    // Warnings name paths as the user wrote them, never a host path.
    assert.ok(!messages.includes(t.dir), messages);
  } finally {
    await t.remove();
  }
});

Deno.test("symbolic link loops end the walk, each real folder once per descent", async () => {
  const t = await makeTempTree({ "/users/alice/a/x.log": "x\n", "/users/alice/a/b/y.log": "y\n" });
  try {
    // Two links back to an ancestor in each folder: without loop detection, 2^64 folders.
    await Deno.symlink(t.host("/users/alice/a"), t.host("/users/alice/a/up1"));
    await Deno.symlink(t.host("/users/alice/a"), t.host("/users/alice/a/b/up2"));
    await Deno.symlink(t.host("/users/alice/a/b"), t.host("/users/alice/a/b/self"));
    await Deno.symlink(t.host("/users/alice"), t.host("/users/alice/a/b/top"));
    const opts = t.options(alice);
    const started = performance.now();
    const files = await collect(treeStore(t.tree).list("/user/a/**/*.log", opts));
    assert.ok(performance.now() - started < 5_000);
    const uris = files.map((f) => f.uri);
    assert.ok(uris.includes("/user/a/x.log") && uris.includes("/user/a/b/y.log"), uris.join());
    assert.ok(uris.length <= 8, uris.join("\n"));
    assert.ok(opts.warnings.some((w) => /link loop/.test(w.message)));
  } finally {
    await t.remove();
  }
});
