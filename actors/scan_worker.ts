/**
 * The entry of a scan worker (a Web Worker started by actors/scan_workers.ts): rebuilds the
 * tree and the file datastores, runs its share (engine/exec/parallel/share_run.ts) and posts
 * what it made. Cloud stores are not registered: plans that read them run no part in workers.
 */

/// <reference lib="deno.worker" />

import { RowCredits, runShare } from "../engine/exec/parallel/share_run.ts";
import { FsResourceTree } from "../home/resource_tree.ts";
import { createDatastoreRegistry } from "../connectors/file/registry.ts";
import type { ScanWorkerStart } from "./scan_workers.ts";
import { storageFailure, storageWorkerDeps, type WorkerDeps } from "./worker_tree.ts";

/** The credits of the task running; a credit message adds one. */
let credits = new RowCredits();

self.onmessage = async (e: MessageEvent<ScanWorkerStart | "credit">) => {
  if (e.data === "credit") return credits.add();
  const { dataDir, grants, task, storage, backlogDir } = e.data;
  credits = new RowCredits();
  let deps: WorkerDeps;
  if (storage === undefined) {
    const tree = new FsResourceTree(dataDir, { grants: () => grants });
    deps = { tree, datastores: createDatastoreRegistry(tree) };
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
