/**
 * The engine's scan workers (engine/contracts/scan_workers.ts) as a pool of Web Workers.
 * A worker loads the engine once (a few hundred milliseconds on a busy machine) and then runs
 * shares of one query after another: it is taken from the pool for a share and given back
 * when it posted its last message. A share stopped before its end (a cancelled query, a
 * failure elsewhere) terminates its worker at once, whatever it is doing (no acknowledgement
 * is waited for: a worker deep in a chunk would not hear a message before it is done), and a
 * fresh one is started in its place. Each task rebuilds the resource tree and the file datastores
 * from the home's data folder (or the server's KV file: actors/worker_tree.ts) and the grants in
 * force when it starts, then plans and runs its share (actors/scan_worker.ts).
 *
 *   const workers = createScanWorkers({ count: 2, dataDir, grants: () => rights.grants() });
 *   compile(source, { ...context, scanWorkers: workers });
 *   workers.close(); // at shutdown: ends the idle workers
 */

import type { ScanWorkers, ShareMessage, ShareTask } from "../engine/mod.ts";
import type { Grant } from "../home/rights.ts";

export interface ScanWorkerOptions {
  /** Workers per query (`query.workers`). */
  readonly count: number;
  /** `<home>/data`, the root of the resource tree. */
  readonly dataDir: string;
  /** The grants of conf/rights.json in force. */
  readonly grants: () => readonly Grant[];
  /**
   * The KV file the tree and the datastore definitions are in (`storage = kv:<path>`), which
   * the workers open (actors/worker_tree.ts); absent: the tree is the files under `dataDir`.
   */
  readonly storage?: string;
  /**
   * Where a worker rendering a result keeps the batches made ahead of the merge's turn
   * (engine/exec/parallel/rendered_backlog.ts): the results folder, swept at start. Absent: a
   * worker whose share's turn has not come waits.
   */
  readonly backlogDir?: string;
  /**
   * The Linux nice value of the workers' threads (`query.workerNice`): above 0, the server's
   * own thread, which answers every request, comes first. Absent: the server's priority.
   */
  readonly nice?: number;
  /** Inputs smaller than this per worker are read in the query's own thread. */
  readonly minShareBytes?: number;
  /** ScanWorkers.laneBytes (`query.laneBytes`). */
  readonly laneBytes?: number;
  /** Idle workers kept for the next query (default `count`); `warm` starts them at once. */
  readonly idle?: number;
  readonly warm?: boolean;
}

/** What a worker is sent to start a task: the tree it rebuilds and the task. */
export interface ScanWorkerStart {
  readonly dataDir: string;
  readonly grants: readonly Grant[];
  /** ScanWorkerOptions.storage */
  readonly storage?: string;
  /** ScanWorkerOptions.backlogDir */
  readonly backlogDir?: string;
  /** ScanWorkerOptions.nice */
  readonly nice?: number;
  readonly task: ShareTask;
}

export interface ScanWorkerPool extends ScanWorkers {
  /** Ends the idle workers; running ones end when their share does. */
  close(): void;
}

/** How long after a worker was stopped mid-share a fresh one is started in its place. */
const REPLACE_AFTER_MS = 500;

export function createScanWorkers(
  options: ScanWorkerOptions,
): ScanWorkerPool & { /** Workers loaded and waiting for a share. */ idleCount(): number } {
  const keep = options.idle ?? options.count;
  const idle: Worker[] = [];
  let closed = false;
  const spawn = () =>
    new Worker(new URL("./scan_worker.ts", import.meta.url).href, { type: "module" });
  if (options.warm) { for (let i = 0; i < keep; i++) idle.push(spawn()); }
  const replacing = new Set<ReturnType<typeof setTimeout>>();
  const replace = () => {
    const timer = setTimeout(() => {
      replacing.delete(timer);
      if (!closed && idle.length < keep) idle.push(spawn());
    }, REPLACE_AFTER_MS);
    replacing.add(timer);
  };
  return {
    count: options.count,
    minShareBytes: options.minShareBytes ?? 8 << 20,
    ...(options.laneBytes === undefined ? {} : { laneBytes: options.laneBytes }),
    start(task, listen) {
      const worker = idle.pop() ?? spawn();
      let ended = false;
      const end = (reuse: boolean) => {
        if (ended) return;
        ended = true;
        worker.onmessage = null;
        worker.onerror = null;
        if (reuse && !closed && idle.length < keep) idle.push(worker);
        else {
          worker.terminate();
          // Stopped mid-share (a cancel, a limit, a failure): a fresh one takes its place, so
          // that the next query finds its workers loaded. Not at once: a query that stops its workers
          // ends first, without fresh workers loading the engine on its cores.
          if (!reuse && !closed) replace();
        }
      };
      worker.onmessage = (e: MessageEvent<ShareMessage>) => {
        if (ended) return;
        const last = e.data.kind === "groups" || e.data.kind === "failed" ||
          e.data.kind === "done";
        if (last) end(true);
        listen(e.data);
      };
      worker.onerror = (e) => {
        e.preventDefault();
        if (ended) return;
        end(false);
        listen({
          kind: "failed",
          code: "INTERNAL",
          message: `a scan worker failed (${e.message})`,
        });
      };
      const start: ScanWorkerStart = {
        dataDir: options.dataDir,
        grants: options.grants(),
        ...(options.storage === undefined ? {} : { storage: options.storage }),
        ...(options.backlogDir === undefined ? {} : { backlogDir: options.backlogDir }),
        ...(options.nice === undefined ? {} : { nice: options.nice }),
        task,
      };
      worker.postMessage(start);
      return {
        stop: () => end(false),
        credit: () => {
          if (!ended) worker.postMessage("credit");
        },
      };
    },
    idleCount: () => idle.length,
    close() {
      closed = true;
      for (const t of replacing) clearTimeout(t);
      replacing.clear();
      for (const w of idle.splice(0)) w.terminate();
    },
  };
}
