/**
 * The trees the tree contract runs over: the local disk, and the storage tree on a real KV and on
 * a real PostgreSQL.
 */

import { join } from "node:path";
import type { ResourceTree } from "../../engine/contracts/resource_tree.ts";
import { FsResourceTree } from "../../home/resource_tree.ts";
import { StorageResourceTree } from "../../home/storage_tree.ts";
import { KvStorage } from "../../home/storage/kv_storage.ts";
import { openPgStorage, type PgStorage } from "../../home/storage/pg_storage.ts";

/** A tree in a temp folder, removed with it. */
export interface TreeTemp extends AsyncDisposable {
  readonly tree: ResourceTree;
  readonly dir: string;
}

export async function fsTreeTemp(): Promise<TreeTemp> {
  const dir = await Deno.makeTempDir({ prefix: "trawl-tree-" });
  const data = join(dir, "data");
  for (const folder of ["users/alice", "shared", "system"]) {
    await Deno.mkdir(join(data, folder), { recursive: true });
  }
  return {
    tree: new FsResourceTree(data),
    dir,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** A storage tree on a KV file in a temp folder (`kvFile` to share one KV between trees). */
export async function kvTreeTemp(
  kvFile?: string,
): Promise<TreeTemp & { tree: StorageResourceTree; storage: KvStorage }> {
  const dir = await Deno.makeTempDir({ prefix: "trawl-kvtree-" });
  const storage = new KvStorage(await Deno.openKv(kvFile ?? join(dir, "state.kv")), "test KV");
  const tree = new StorageResourceTree(storage);
  await tree.ensureRoots();
  await tree.ensureFolder(["users", "alice"]);
  return {
    tree,
    dir,
    storage,
    [Symbol.asyncDispose]: async () => {
      storage.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** A storage tree on a PostgreSQL database (`url`, made by tests/support/postgres.ts). */
export async function pgTreeTemp(
  url: string,
): Promise<TreeTemp & { tree: StorageResourceTree; storage: PgStorage }> {
  const dir = await Deno.makeTempDir({ prefix: "trawl-pgtree-" });
  const storage = await openPgStorage(url);
  const tree = new StorageResourceTree(storage);
  await tree.ensureRoots();
  await tree.ensureFolder(["users", "alice"]);
  return {
    tree,
    dir,
    storage,
    [Symbol.asyncDispose]: async () => {
      await storage.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
