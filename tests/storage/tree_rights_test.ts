/**
 * Rights through a tree's realPath, on the files tree and on the storage tree over a real KV:
 * the right asked is the one checked (a read grant does not let one write or create), the
 * defaults of home/rights.ts hold, and a refusal names the path and the right.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { ResourceTree, Right } from "../../engine/contracts/resource_tree.ts";
import { PathError } from "../../engine/contracts/resource_path.ts";
import type { User } from "../../engine/contracts/user.ts";
import type { Grant } from "../../home/rights.ts";
import { FsResourceTree } from "../../home/resource_tree.ts";
import { StorageResourceTree } from "../../home/storage_tree.ts";
import { KvStorage } from "../../home/storage/kv_storage.ts";
import { kvTreeTemp } from "./tree_subjects.ts";

const GRANTS: Grant[] = [
  { path: "/shared/team", user: "bob", rights: ["write"] },
  { path: "/shared/drop", user: "bob", rights: ["create"] },
  { path: "/shared/ops", group: "ops", rights: ["write", "create"] },
  { path: "/system/datastores", user: "bob", rights: ["write", "create", "read"] },
  { path: "/users/alice/open", user: "bob", rights: ["read"] },
];

const BOB: User = { name: "bob", groups: ["ops"], admin: false };
const CAROL: User = { name: "carol", groups: [], admin: false };
const ADMIN: User = { name: "root", groups: [], admin: true };

const FILES = [
  "/shared/team/a.log",
  "/shared/drop/b.log",
  "/shared/ops/c.log",
  "/shared/plain.log",
  "/system/datastores/d.json",
  "/system/e.txt",
  "/users/alice/open/f.txt",
  "/users/alice/g.txt",
  "/users/bob/h.txt",
];

/** Rights expected per user and file (those not named are refused). */
const EXPECTED: Record<string, Record<string, readonly Right[]>> = {
  bob: {
    "/shared/team/a.log": ["list", "execute", "read", "write"],
    "/shared/drop/b.log": ["list", "execute", "read", "create"],
    "/shared/ops/c.log": ["list", "execute", "read", "write", "create"],
    "/shared/plain.log": ["list", "execute", "read"],
    // Only admins write or create datastore definitions, whatever the grants say.
    "/system/datastores/d.json": ["list", "execute", "read"],
    "/system/e.txt": ["list", "execute"],
    "/users/alice/open/f.txt": ["read"],
    "/users/alice/g.txt": [],
    "/users/bob/h.txt": ["list", "execute", "read", "write", "create"],
  },
  carol: {
    "/shared/team/a.log": ["list", "execute", "read"],
    "/shared/drop/b.log": ["list", "execute", "read"],
    "/shared/ops/c.log": ["list", "execute", "read"],
    "/shared/plain.log": ["list", "execute", "read"],
    "/system/datastores/d.json": ["list", "execute"],
    "/system/e.txt": ["list", "execute"],
    "/users/alice/open/f.txt": [],
    "/users/alice/g.txt": [],
    "/users/bob/h.txt": [],
  },
};

const RIGHTS: readonly Right[] = ["list", "execute", "read", "write", "create"];

async function check(tree: ResourceTree): Promise<void> {
  for (const user of [BOB, CAROL]) {
    for (const file of FILES) {
      for (const right of RIGHTS) {
        const resolved = tree.resolve(user, file);
        const allowed = EXPECTED[user.name]![file]!.includes(right);
        const what = `${user.name} ${right} ${file}`;
        assert.equal(tree.may(user, right, resolved.canonical), allowed, `may: ${what}`);
        if (allowed) {
          assert.equal(typeof await tree.realPath(resolved, right), "string", what);
        } else {
          await assert.rejects(tree.realPath(resolved, right), (e: Error) => {
            assert.ok(e instanceof PathError, `${what}: ${e}`);
            assert.equal(
              e.message,
              `path '${file}' is refused: you lack the ${right} right`,
            );
            return true;
          }, what);
        }
      }
    }
  }
  // An admin may do everything; no right asked: no check.
  for (const file of FILES) {
    for (const right of RIGHTS) await tree.realPath(tree.resolve(ADMIN, file), right);
    await tree.realPath(tree.resolve(CAROL, file));
  }
}

Deno.test("the files tree's realPath checks the right asked, no other", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-rights-" });
  try {
    const data = join(dir, "data");
    for (const file of FILES) {
      await Deno.mkdir(join(data, file, ".."), { recursive: true });
      await Deno.writeTextFile(join(data, file), "x");
    }
    await check(new FsResourceTree(data, { grants: () => GRANTS }));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the storage tree's realPath on a real KV checks the right asked, no other", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-kvrights-" });
  const storage = new KvStorage(await Deno.openKv(join(dir, "state.kv")), "test KV");
  try {
    const tree = new StorageResourceTree(storage, { grants: () => GRANTS });
    await tree.ensureRoots();
    const writer: User = ADMIN;
    for (const file of FILES) {
      const segments = file.split("/").filter((s) => s !== "");
      await tree.ensureFolder(segments.slice(0, -1));
      await tree.write(tree.resolve(writer, file).real, new TextEncoder().encode("x"));
    }
    await check(tree);
  } finally {
    storage.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the root '/' may only be listed, by anyone not an admin", async () => {
  await using temp = await kvTreeTemp();
  for (const user of [BOB, CAROL]) {
    for (const right of RIGHTS) {
      assert.equal(temp.tree.may(user, right, "/"), right === "list", `${user.name} ${right}`);
    }
  }
});
