/**
 * A worker's side: builds its part of the plan from the plain data its task carries
 * (engine/exec/parallel/part_description.ts: no script compiled, no view loaded), reads its
 * share of the source's files through the part's pipeline into a partial grouping, and posts it.
 * Progress (bytes consumed) and warnings are posted as they happen; a failure is posted as its
 * diagnostic.
 */

import { ColumnCache } from "./fs/column_cache.ts";
import type { FileEntry, ListOptions } from "./contracts/datastore.ts";
import { QueryError } from "./front/diagnostics.ts";
import { StorageError } from "./contracts/storage.ts";
import type { PlanNode } from "./plan/plan.ts";
import type { QueryContext } from "./contracts/query_context.ts";
import { Grouping } from "./exec/aggregate.ts";
import {
  checkCancelled,
  type ExecContext,
  MemoryBudget,
  newQueryStats,
  ProgressMeter,
} from "./plan/context.ts";
import { openNode } from "./exec/run.ts";
import { rowSourceOf, scanSourceOf, topSourceOf } from "./exec/parallel/parallel_plan.ts";
import { buildPart, type PartBuild } from "./exec/parallel/part_description.ts";
import { ROW_CREDIT, type ShareMessage, type ShareTask } from "./contracts/scan_workers.ts";
import { shareEntry } from "./exec/parallel/shares.ts";
import { renderRows } from "./exec/render_rows.ts";
import type { RenderedRows, RenderTask } from "./render/rendered.ts";
import { RenderedBacklog } from "./exec/parallel/rendered_backlog.ts";
import { encodeRow } from "./table/sxt_values.ts";

/** Consumed bytes are posted at most every this many, and at most every PROGRESS_MS. */
const PROGRESS_BYTES = 4 << 20;
/** A share read at 200 MB/s posted 50 messages a second, each a turn of both threads. */
const PROGRESS_MS = 100;

/**
 * Rendered batches (about 64 KiB each) a share posts ahead of those taken when the query's
 * thread takes them as they come (RenderRequest.lanes): 2 MiB per share.
 */
export const LANE_CREDIT = 32;

/** Credits for the batches of rows a worker posts (ShareHandle.credit on the other side). */
export class RowCredits {
  #left = ROW_CREDIT;
  #waiting: (() => void) | null = null;

  /** One more batch was taken; `n` more batches may go ahead. */
  add(n = 1): void {
    this.#left += n;
    this.#waiting?.();
    this.#waiting = null;
  }

  /** Takes a credit if one is left. */
  tryTake(): boolean {
    if (this.#left <= 0) return false;
    this.#left--;
    return true;
  }

  /** Takes a credit, waiting for one when none is left. */
  async take(): Promise<void> {
    while (this.#left <= 0) await new Promise<void>((resolve) => this.#waiting = resolve);
    this.#left--;
  }
}

export interface ShareRunOptions {
  /**
   * Where a rendering share keeps the batches it made while it had no credit
   * (rendered_backlog.ts), so that it scans on; absent: it waits for credits.
   */
  readonly backlogDir?: string;
}

export async function runShare(
  task: ShareTask,
  context: Pick<QueryContext, "datastores">,
  post: (message: ShareMessage, transfer?: Transferable[]) => void,
  credits: RowCredits = new RowCredits(),
  signal: AbortSignal = new AbortController().signal,
  options: ShareRunOptions = {},
): Promise<void> {
  try {
    const node = buildPart(task.part, await partBuild(task, context));
    const source = scanSourceOf(node) ?? topSourceOf(node) ?? rowSourceOf(node);
    if (!source) throw new Error("the worker's part reads no source in shares");
    let unreported = 0;
    // What the share read, told with its progress as counts since the last report.
    const stats = newQueryStats();
    const told = {
      bytesRead: 0,
      recordsRead: 0,
      recordsUnmatched: 0,
      cacheBytes: 0,
      cacheBlocks: 0,
      cacheBlocksSkipped: 0,
    };
    const report = () => {
      const delta = {
        bytesRead: stats.bytesRead - told.bytesRead,
        recordsRead: stats.recordsRead - told.recordsRead,
        recordsUnmatched: stats.recordsUnmatched - told.recordsUnmatched,
        cacheBytes: stats.cacheBytes - told.cacheBytes,
        cacheBlocks: stats.cacheBlocks - told.cacheBlocks,
        cacheBlocksSkipped: stats.cacheBlocksSkipped - told.cacheBlocksSkipped,
      };
      Object.assign(told, {
        bytesRead: stats.bytesRead,
        recordsRead: stats.recordsRead,
        recordsUnmatched: stats.recordsUnmatched,
        cacheBytes: stats.cacheBytes,
        cacheBlocks: stats.cacheBlocks,
        cacheBlocksSkipped: stats.cacheBlocksSkipped,
      });
      post({ kind: "progress", bytes: unreported, stats: delta });
      unreported = 0;
      reportedAt = performance.now();
    };
    let reportedAt = performance.now();
    const progress = new ProgressMeter();
    const consume = progress.consume.bind(progress);
    progress.consume = (bytes: number) => {
      consume(bytes);
      unreported += bytes;
      if (unreported >= PROGRESS_BYTES && performance.now() - reportedAt >= PROGRESS_MS) report();
    };
    const ctx: ExecContext = {
      signal,
      timeZone: task.query.timeZone,
      now: task.now,
      warn: (warning) => post({ kind: "warning", warning }),
      progress,
      memory: new MemoryBudget(task.limits.memoryLimit),
      stats,
      shareFiles: new Map([[source, await shareFiles(source.scan!.list, task, signal)]]),
      ...(task.cache ? { cache: new ColumnCache(task.cache) } : {}),
    };
    if (task.render) {
      const nulls = await postRendered(
        node,
        ctx,
        task.render,
        credits,
        post,
        report,
        options.backlogDir,
      );
      post({ kind: "done", nulls });
      return;
    }
    if (node.kind !== "aggregate") {
      // A row pipeline: its rows in batches, at most ROW_CREDIT ahead of those taken.
      for await (const batch of openNode(node, ctx)) {
        await credits.take();
        post({ kind: "rows", rows: batch.map(encodeRow) });
      }
      report();
      post({ kind: "done" });
      return;
    }
    const grouping = new Grouping(node);
    // A source right under it may fold its records into the grouping without rows.
    for await (const batch of openNode(node.input, grouping.inputContext(node.input, ctx))) {
      checkCancelled(signal);
      const bytes = grouping.add(batch);
      if (bytes > 0) ctx.memory.take(bytes, "group");
    }
    report();
    const groups = grouping.exportPartial();
    post(
      { kind: "groups", groups },
      [
        ...groups.folds.flatMap((f) =>
          f ? [f.values.buffer as ArrayBuffer, f.flags.buffer as ArrayBuffer] : []
        ),
        // The first rows' typed columns (IPv4 bits, numbers): each made here, for this message.
        ...("names" in groups.firsts ? groups.firsts.columns : []).flatMap((c) =>
          Array.isArray(c) ? [] : [(c as Uint32Array | Float64Array).buffer as ArrayBuffer]
        ),
      ],
    );
  } catch (e) {
    if (e instanceof QueryError) {
      post({ kind: "failed", diagnostic: e.diagnostic });
    } else if (e instanceof StorageError) {
      // The server's storage failed under the worker (its own connection, reading the tree's
      // definitions): not a bug; the client is told what failed, never where (failureOf).
      post({ kind: "failed", diagnostic: e.diagnostic });
    } else {
      // Not the user's mistake: the query fails as a bug would, naming the worker.
      post({
        kind: "failed",
        code: "INTERNAL",
        message: `a scan worker failed (${e instanceof Error ? e.message : String(e)})`,
      });
    }
  }
}

/**
 * Renders the node's rows in the task's format and posts them (their buffers transferred), at
 * most ROW_CREDIT posts ahead of those taken (LANE_CREDIT with lanes), and calls `scanned` once
 * the input is read;
 * returns which columns held a null. With a
 * `backlogDir`, the batches made while no credit is left wait in a file there, in order, and the
 * scan goes on (a share whose turn in the merge has not come would otherwise idle its core).
 */
async function postRendered(
  node: PlanNode,
  ctx: ExecContext,
  render: RenderTask,
  credits: RowCredits,
  post: (message: ShareMessage, transfer?: Transferable[]) => void,
  scanned: () => void,
  backlogDir?: string,
): Promise<boolean[]> {
  const nulls = render.columns.map(() => false);
  const send = (part: RenderedRows) =>
    post({ kind: "rendered", bytes: part.bytes, ends: part.ends }, [
      part.bytes.buffer,
      part.ends.buffer as ArrayBuffer,
    ]);
  const backlog = backlogDir === undefined ? undefined : new RenderedBacklog(backlogDir);
  // Taken as they come (lanes): a few more ahead ride out the query's thread's pauses (a
  // collection, a turn of its loop), which with ROW_CREDIT sent batches to the backlog.
  if (render.lanes) credits.add(LANE_CREDIT - ROW_CREDIT);
  try {
    for await (const part of renderRows(node, ctx, render, openNode, nulls)) {
      if (!backlog) {
        await credits.take();
        send(part);
        continue;
      }
      while (backlog.size > 0 && credits.tryTake()) send((await backlog.shift())!);
      if (backlog.size === 0 && credits.tryTake()) send(part);
      else await backlog.push(part);
    }
    // The input is read: its progress is told while the backlog still waits for its turn.
    scanned();
    while (backlog && backlog.size > 0) {
      checkCancelled(ctx.signal);
      await credits.take();
      send((await backlog.shift())!);
    }
  } finally {
    backlog?.close();
  }
  return nulls;
}

/**
 * What the part is built with: the query's zone and clock, and its source's files listed through
 * the datastore the server listed them with (the files, not any stored script).
 */
async function partBuild(
  task: ShareTask,
  context: Pick<QueryContext, "datastores">,
): Promise<PartBuild> {
  const { user, workDir, timeZone } = task.query;
  let part = task.part;
  while (part.kind !== "source") part = part.input;
  const store = await context.datastores.forUri(part.src, user);
  return {
    timeZone,
    now: task.now,
    list: ({ src, from, to }) => (ctx) => {
      const options: ListOptions = {
        user,
        workDir,
        timeZone,
        signal: ctx.signal,
        onWarning: ctx.warn,
        ...(from !== undefined ? { from } : {}),
        ...(to !== undefined ? { to } : {}),
      };
      return store.list(src, options);
    },
  };
}

/** The entries of the task's shares, in order, from a fresh listing of the source. */
async function shareFiles(
  list: (ctx: ExecContext) => AsyncIterable<FileEntry>,
  task: ShareTask,
  signal: AbortSignal,
): Promise<FileEntry[]> {
  const listing: ExecContext = {
    signal,
    timeZone: task.query.timeZone,
    now: task.now,
    // The server listed the same files and reported what it had to say about them.
    warn: () => {},
    progress: new ProgressMeter(),
    memory: new MemoryBudget(0),
  };
  const byUri = new Map<string, FileEntry>();
  for await (const f of list(listing)) byUri.set(f.uri, f);
  const out: FileEntry[] = [];
  for (const share of task.shares) {
    const file = byUri.get(share.uri);
    if (file === undefined) {
      throw new QueryError({
        code: "RUNTIME_ERROR",
        message: `'${share.uri}' is gone since the query listed it`,
      });
    }
    out.push(shareEntry(file, share));
  }
  return out;
}
