/**
 * The tree a scan worker (actors/scan_worker.ts) reads when the server's tree is in a KV file
 * (`storage = kv:<path>`, main.ts storagePlace): the worker opens the same KV, once, on its first
 * task, and reads the tree (home/storage_tree.ts) and the FILE and `azblob://` datastore
 * definitions from it as the server does (withBlobStores), with the grants each task brings. The
 * KV ends with the worker (the pool terminates it, which closes what it opened).
 *
 * A KV file is shared this way, and a PostgreSQL database (`storage = pg:<url>`: each worker
 * opens a pool of WORKER_PG_CONNECTIONS connections): `kv::memory:` is a KV of its own in every
 * thread, and a remote KV (`kv:https://...`) is not opened by workers (one connection per worker,
 * untested): `workerKvPath` says which, and main.ts starts no scan workers for the others.
 *
 *   const deps = await storageWorkerDeps("/var/trawl/state.kv", grants);
 *   await runShare(task, deps, post, credits);
 */

import type { ResourceTree, ShareMessage } from "../engine/mod.ts";
import type { Grant } from "../home/rights.ts";
import { StorageResourceTree } from "../home/storage_tree.ts";
import { openKvStorage } from "../home/storage/kv_storage.ts";
import { openPgStorage } from "../home/storage/pg_storage.ts";
import type { StorageSetting } from "../home/storage/open_storage.ts";
import { DATASTORES_KEY, STORE_NAME } from "../home/datastore_files.ts";
import { createDatastoreRegistry, type SchemeRegistry } from "../connectors/file/registry.ts";
import { azblobFactory } from "../connectors/azblob/azblob_datastore.ts";

export interface WorkerDeps {
  readonly tree: ResourceTree;
  readonly datastores: SchemeRegistry;
}

/** Connections of a scan worker's pool on a PostgreSQL storage (it reads, a share at a time). */
const WORKER_PG_CONNECTIONS = 2;
const PG_PREFIX = "pg:";

/**
 * What scan workers may open for `setting`: a KV file's path, or `pg:<url>` for a PostgreSQL
 * database; undefined when workers cannot share it.
 */
export function workerKvPath(setting: StorageSetting): string | undefined {
  if (setting.kind === "pg") return `${PG_PREFIX}${setting.url}`;
  if (setting.kind !== "kv") return undefined;
  const where = setting.where;
  if (where === ":memory:" || /^[a-z][a-z0-9+.-]*:\/\//i.test(where)) return undefined;
  return where;
}

/** The grants of the task running (each task brings those in force when it started). */
let grants: readonly Grant[] = [];
/** The KV and what reads it, opened by the first task. */
let opened:
  | { readonly where: string; readonly deps: Promise<WorkerDeps & { close(): void }> }
  | undefined;

/**
 * The tree and datastores over the KV file `where`, with `taskGrants`: the KV is opened on the
 * first call and kept for the worker's later tasks. A KV that cannot be opened fails the task
 * (a StorageError naming it) and is tried again by the next.
 */
export function storageWorkerDeps(
  where: string,
  taskGrants: readonly Grant[],
): Promise<WorkerDeps> {
  grants = taskGrants;
  if (opened?.where !== where) {
    if (opened) void closeStorageWorkerDeps();
    const deps = open(where);
    opened = { where, deps };
    deps.catch(() => {
      if (opened?.deps === deps) opened = undefined;
    });
  }
  return opened.deps;
}

/**
 * Closes the KV `storageWorkerDeps` opened (the next call opens it again). A worker need not:
 * terminating it closes what it opened; a test running it in its own thread does.
 */
export async function closeStorageWorkerDeps(): Promise<void> {
  const was = opened;
  opened = undefined;
  (await was?.deps.catch(() => undefined))?.close();
}

async function open(where: string): Promise<WorkerDeps & { close(): void }> {
  const storage = /^pg:postgres(ql)?:\/\//i.test(where)
    ? await openPgStorage(where.slice(PG_PREFIX.length), { connections: WORKER_PG_CONNECTIONS })
    : await openKvStorage(where);
  const tree = new StorageResourceTree(storage, { grants: () => grants });
  // The definitions where the server keeps them (home/datastore_files.ts, same key): FILE stores,
  // and `azblob://` stores, whose credentials are read here and never travel in a task.
  const definitionText = async (store: string) => {
    if (!STORE_NAME.test(store)) return null;
    const stored = await storage.get([...DATASTORES_KEY, `${store}.json`]);
    return stored === null ? null : new TextDecoder().decode(stored.value);
  };
  return {
    tree,
    datastores: withBlobStores(createDatastoreRegistry(tree, definitionText), definitionText),
    close: () => void Promise.resolve(storage.close()).catch(() => {}),
  };
}

/**
 * `datastores` that also open `azblob://` stores (connectors/azblob), their definitions read by
 * `definitionText` (the shared storage's, or the home's files): a share of a blob scan is then
 * read by the worker as the query's user, the store's acl checked again from this server's view
 * of the definitions (a server other than the query's, for a distributed scan).
 */
export function withBlobStores(
  datastores: SchemeRegistry,
  definitionText: (store: string) => Promise<string | null>,
): SchemeRegistry {
  datastores.register("azblob", azblobFactory({ definitionText }));
  return datastores;
}

/**
 * What a worker posts when `storageWorkerDeps` failed: the query fails as on a bug (an internal
 * failure: its client is told only that; the server's log has this message, with the reason).
 */
export function storageFailure(e: unknown): ShareMessage {
  return {
    kind: "failed",
    code: "INTERNAL",
    message: `a scan worker could not open the server's storage (${
      e instanceof Error ? e.message : String(e)
    })`,
  };
}
