/**
 * The entry of a scan worker (a Web Worker started by actors/scan_workers.ts): rebuilds the
 * tree, the file datastores and the `azblob://` stores (actors/worker_tree.ts withBlobStores),
 * runs its share (engine/share_run.ts) and posts what it made. `cloudapi://` stores are not
 * registered: plans that read them run no part in workers (readByWorkers).
 */

/// <reference lib="deno.worker" />

import { setPriority } from "node:os";
import { RowCredits, runShare } from "../engine/mod.ts";
import { FsResourceTree } from "../home/resource_tree.ts";
import { createDatastoreRegistry } from "../connectors/file/registry.ts";
import type { ScanWorkerStart } from "./scan_workers.ts";
import { join } from "node:path";
import { readTextIfExists } from "../home/layout.ts";
import {
  storageFailure,
  storageWorkerDeps,
  withBlobStores,
  type WorkerDeps,
} from "./worker_tree.ts";

/**
 * Lowers this worker's thread to `nice` once (query.workerNice): with a worker per core, the
 * workers would otherwise take the cores from the thread that answers everyone's requests. On
 * Linux, setpriority() of "this process" from a thread is that thread's alone; elsewhere it
 * would be the whole process, so it is left alone there. Without `--allow-sys` it stays as is.
 */
let niced = false;
function lowerPriority(nice: number | undefined): void {
  if (niced || nice === undefined || nice === 0 || Deno.build.os !== "linux") return;
  niced = true;
  try {
    setPriority(0, nice);
  } catch { /* not permitted: the worker keeps the server's priority */ }
}

/** The credits of the task running; a credit message adds one. */
let credits = new RowCredits();

self.onmessage = async (e: MessageEvent<ScanWorkerStart | "credit">) => {
  if (e.data === "credit") return credits.add();
  const { dataDir, grants, task, storage, backlogDir, nice } = e.data;
  lowerPriority(nice);
  credits = new RowCredits();
  let deps: WorkerDeps;
  if (storage === undefined) {
    const tree = new FsResourceTree(dataDir, { grants: () => grants });
    // The definitions as the server reads them for `azblob://` (home/cloud_access.ts).
    const definitions = join(dataDir, "system", "datastores");
    const definitionText = (store: string) => readTextIfExists(join(definitions, `${store}.json`));
    deps = { tree, datastores: withBlobStores(createDatastoreRegistry(tree), definitionText) };
  } else {
    // The tree is in the server's KV file (actors/worker_tree.ts): opened once per worker.
    try {
      deps = await storageWorkerDeps(storage, grants);
    } catch (e) {
      return self.postMessage(storageFailure(e));
    }
  }
  await runShare(
    task,
    deps,
    (message, transfer) => self.postMessage(message, transfer ?? []),
    credits,
    undefined,
    backlogDir === undefined ? {} : { backlogDir },
  );
};
