/**
 * The engine's scan workers (engine/exec/parallel/scan_workers.ts) as Web Workers: one worker
 * per share of a query, started for it and terminated when its share is merged or the query is
 * cancelled (Worker.terminate stops it at once, whatever it is doing). Each worker rebuilds
 * the resource tree and the file datastores from the home's data folder and the grants in
 * force when it starts, then plans and runs its share (actors/scan_worker.ts).
 *
 *   const workers = createScanWorkers({ count: 2, dataDir, grants: () => rights.grants() });
 *   compile(source, { ...context, scanWorkers: workers });
 */

import type { ScanWorkers, ShareMessage, ShareTask } from "../engine/exec/parallel/scan_workers.ts";
import type { Grant } from "../home/rights.ts";

export interface ScanWorkerOptions {
  /** Workers per query (`query.workers`). */
  readonly count: number;
  /** `<home>/data`, the root of the resource tree. */
  readonly dataDir: string;
  /** The grants of conf/rights.json in force. */
  readonly grants: () => readonly Grant[];
  /** Inputs smaller than this per worker are read in the query's own thread. */
  readonly minShareBytes?: number;
}

/** What a worker is sent to start: the tree it rebuilds and its task. */
export interface ScanWorkerStart {
  readonly dataDir: string;
  readonly grants: readonly Grant[];
  readonly task: ShareTask;
}

export function createScanWorkers(options: ScanWorkerOptions): ScanWorkers {
  return {
    count: options.count,
    minShareBytes: options.minShareBytes ?? 8 << 20,
    start(task, listen) {
      const worker = new Worker(new URL("./scan_worker.ts", import.meta.url).href, {
        type: "module",
      });
      let ended = false;
      const end = () => {
        if (!ended) {
          ended = true;
          worker.terminate();
        }
      };
      worker.onmessage = (e: MessageEvent<ShareMessage>) => {
        listen(e.data);
        if (e.data.kind === "groups" || e.data.kind === "failed") end();
      };
      worker.onerror = (e) => {
        e.preventDefault();
        end();
        listen({
          kind: "failed",
          code: "INTERNAL",
          message: `a scan worker failed (${e.message})`,
        });
      };
      const start: ScanWorkerStart = { dataDir: options.dataDir, grants: options.grants(), task };
      worker.postMessage(start);
      return { stop: end };
    },
  };
}
