/**
 * The entry of a scan worker (a Web Worker started by actors/scan_workers.ts): rebuilds the
 * tree and the file datastores, runs its share (engine/exec/parallel/share_run.ts) and posts
 * what it made. Cloud stores are not registered: plans that read them run no part in workers.
 */

/// <reference lib="deno.worker" />

import { runShare } from "../engine/exec/parallel/share_run.ts";
import { FsResourceTree } from "../home/resource_tree.ts";
import { createDatastoreRegistry } from "../connectors/file/registry.ts";
import type { ScanWorkerStart } from "./scan_workers.ts";

self.onmessage = async (e: MessageEvent<ScanWorkerStart>) => {
  const { dataDir, grants, task } = e.data;
  const tree = new FsResourceTree(dataDir, { grants: () => grants });
  await runShare(
    task,
    { tree, datastores: createDatastoreRegistry(tree) },
    (message, transfer) => self.postMessage(message, transfer ?? []),
  );
};
