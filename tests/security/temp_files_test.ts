/**
 * The hidden temporary file of a killed `save` (`.<name>.tmp-<hex>`) is never listed, never
 * read as a table, and swept away at the next start once it is stale.
 */

import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { treeStore } from "../../connectors/file/tree_store.ts";
import { alice, collect, makeTempTree } from "../support/temp_tree.ts";
import { tempPathFor } from "../../engine/fs/atomic_write.ts";
import {
  isTableTempName,
  STALE_TEMP_MS,
  sweepStaleTempFiles,
} from "../../engine/table/temp_files.ts";

Deno.test("the writer's temporary names are the ones the sweep and the listing know", () => {
  for (const table of ["/d/t.sxt", "/d/.x.sxt", "/d/a b.sxt"]) {
    const name = basename(tempPathFor(table));
    assert.ok(isTableTempName(name), name);
    assert.ok(!name.endsWith(".sxt"), "a temporary file is never named as a table");
  }
  for (const name of ["t.sxt", ".t.sxt", "t.sxt.tmp-0123456789ab", ".t.tmp-xyz", ".tmp-0a"]) {
    assert.ok(!isTableTempName(name), name);
  }
});

Deno.test("globs and literal paths never list a save's temporary file", async () => {
  const temp = ".t.sxt.tmp-0123456789ab";
  const t = await makeTempTree({
    "/users/alice/t.sxt": "table",
    [`/users/alice/${temp}`]: "half written",
    "/users/alice/a.log": "a\n",
  });
  try {
    const store = treeStore(t.tree);
    for (const pattern of ["/user/*", "/user/**", "/user/.*", `/user/${temp}`, "/user/.t*"]) {
      const files = await collect(store.list(pattern, t.options(alice)));
      assert.ok(!files.some((f) => f.uri.includes(".tmp-")), pattern);
    }
    const all = await collect(store.list("/user/*", t.options(alice)));
    assert.deepEqual(all.map((f) => f.uri), ["/user/a.log", "/user/t.sxt"]);
  } finally {
    await t.remove();
  }
});

Deno.test("sweepStaleTempFiles() removes stale temporary files only, in every folder", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-sweep-" });
  try {
    const deep = join(dir, "users", "alice", "reports");
    await Deno.mkdir(deep, { recursive: true });
    const stale = [join(dir, ".a.sxt.tmp-0123456789ab"), join(deep, ".b.sxt.tmp-ba9876543210")];
    const fresh = join(deep, ".c.sxt.tmp-aaaaaaaaaaaa");
    const kept = [join(deep, "b.sxt"), join(deep, ".hidden"), join(deep, "x.tmp-0123456789ab")];
    for (const f of [...stale, fresh, ...kept]) await Deno.writeTextFile(f, "x");
    const old = new Date(Date.now() - STALE_TEMP_MS - 60_000);
    for (const f of [...stale, ...kept]) await Deno.utime(f, old, old);
    // A link to a folder outside is not followed.
    const outside = await Deno.makeTempDir({ prefix: "trawl-sweep-out-" });
    const outsideTemp = join(outside, ".o.sxt.tmp-0123456789ab");
    await Deno.writeTextFile(outsideTemp, "x");
    await Deno.utime(outsideTemp, old, old);
    await Deno.symlink(outside, join(dir, "link"));

    assert.equal(await sweepStaleTempFiles(dir), 2);
    for (const f of stale) await assert.rejects(() => Deno.stat(f), Deno.errors.NotFound);
    for (const f of [fresh, ...kept, outsideTemp]) assert.ok((await Deno.stat(f)).isFile, f);
    await Deno.remove(outside, { recursive: true });
    assert.equal(await sweepStaleTempFiles(join(dir, "missing")), 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
