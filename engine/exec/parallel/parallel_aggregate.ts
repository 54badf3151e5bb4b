/**
 * The query's side of the parts of a plan that run in workers. It lists the source's files once,
 * splits them into shares (shares.ts) and starts a worker per share, at most `workers.count` at
 * once (a rendered root is cut finer than that: `laneShares`). For a parallel aggregate it
 * merges their partial groups in the order of the shares, so that the result is the one of a
 * single pass (groups in order of first appearance, each with its first row); for a row
 * pipeline it hands out the rows of share 0, then those of share 1..., each worker at most
 * ROW_CREDIT batches ahead of what was taken (a `limit` that has its rows stops them all).
 * Progress and warnings of the workers are the query's; each worker has its part of the memory
 * limit, and the merge is charged to the query's. Cancelling the query stops every worker at
 * once (Worker.terminate).
 */

import type { FileEntry } from "../../contracts/datastore.ts";
import { QueryError } from "../../front/diagnostics.ts";
import type { PlanNode } from "../../plan/plan.ts";
import type { Row } from "../../values/values.ts";
import { Grouping } from "../aggregate.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "../../plan/context.ts";
import {
  type FileShare,
  ISOLATE_BYTES,
  type ParallelContext,
  type PartialGroups,
  type ScanWorkers,
  type ShareHandle,
  type ShareMessage,
} from "../../contracts/scan_workers.ts";
import { splitShares } from "./shares.ts";
import { type SkipTally, skipWarning, type TallyWarning } from "../../plan/skip_tally.ts";
import {
  type AbsentReport,
  type AbsentTally,
  absentWarnings,
  mergeAbsent,
} from "../absent_fields.ts";
import { RenderedRows } from "../../render/rendered.ts";
import { decodeRow } from "../../table/sxt_values.ts";
import { shareLimits } from "../../contracts/engine_limits.ts";

type AggregateNode = PlanNode & { kind: "aggregate" };
type SourceNode = PlanNode & { kind: "source" };

interface Split {
  /** Who runs the shares: the query's workers, or those it spreads a large scan over. */
  readonly workers: ScanWorkers;
  readonly shares: readonly FileShare[][];
  readonly files: readonly FileEntry[];
  readonly scan: NonNullable<SourceNode["scan"]>;
}

/**
 * What runs a node whose source may be shared: the workers' rows, or, when there is too little
 * for a worker, the context to run it here with. That context hands the source the files
 * already listed (`ExecContext.listed`): listing them again would repeat every warning of the
 * listing (a missing file, a folder one may not list).
 */
export type Shared<T> = { readonly rows: T } | { readonly here: ExecContext };

/** The source's files in shares, or the context to read them here with (see `Shared`). */
async function split(
  source: SourceNode,
  ctx: ExecContext,
  parallel: ParallelContext,
): Promise<Split | { readonly here: ExecContext }> {
  const scan = source.scan!;
  const files: FileEntry[] = [];
  for await (const f of scan.list(ctx)) files.push(f);
  const here = () => ({
    here: { ...ctx, listed: new Map([...ctx.listed ?? [], [scan.list, files]]) },
  });
  checkCancelled(ctx.signal);
  const total = files.reduce((n, f) => n + f.size, 0);
  const workers = parallel.workers.distribute?.(total) ?? parallel.workers;
  const shareable = await Promise.all(files.map(async (f) => ({
    uri: f.uri,
    size: f.size,
    lines: f.openAt !== undefined && f.size > workers.minShareBytes &&
      await scan.lines(f, ctx.signal).catch(() => false),
  })));
  // Rendered rows placed by their lane (RenderRequest.lanes) are cut finer than a share per
  // worker and run a worker's worth at a time: the first lanes are then whole, and sent, while
  // the later ones are still read, so a streamed answer keeps pace with the scan.
  const lanes = parallel.render?.task.lanes === true && workers === parallel.workers;
  const shares = splitShares(
    shareable,
    lanes ? laneShares(total, workers.count, workers.laneBytes) : workers.count,
    workers.minShareBytes,
  );
  // One share of a larger input still goes to a worker: the scan then runs apart from the
  // thread that answers every request (a catastrophic pattern there would hold them all up).
  const isolate = workers.isolateBytes ?? ISOLATE_BYTES;
  if (shares.length === 0 || (shares.length === 1 && total <= isolate)) return here();
  ctx.progress.expect(total);
  // Counted here, once: a file cut into ranges is opened by several workers.
  if (ctx.stats) ctx.stats.filesRead += files.length;
  return { workers, shares, files, scan } satisfies Split;
}

/** About the input of one lane when rendered rows are placed by lanes (`laneShares`). */
export const LANE_BYTES = 32 << 20;

/**
 * How many shares a rendered scan of `bytes` is cut into for `workers` workers: about one per
 * `laneBytes`, a multiple of the workers (each takes the next share when done with one), and
 * at most 16 per worker (each share starts a task: a few milliseconds).
 */
export function laneShares(bytes: number, workers: number, laneBytes = LANE_BYTES): number {
  const rounds = Math.min(16, Math.max(1, Math.ceil(bytes / Math.max(1, laneBytes) / workers)));
  return rounds * workers;
}

/**
 * The aggregate's rows computed by workers, or the context to run it here with when its input
 * is too small to share.
 */
export async function parallelAggregate(
  node: AggregateNode,
  source: SourceNode,
  number: number,
  ctx: ExecContext,
  parallel: ParallelContext,
): Promise<Shared<BatchStream>> {
  const shares = await split(source, ctx, parallel);
  return "here" in shares ? shares : { rows: mergeGroups(node, number, shares, ctx, parallel) };
}

/**
 * A row pipeline's rows read by workers, or the context to read them here with when its input
 * is too small to share. With `parallel.render`, the pipeline is the plan's root and its rows
 * come rendered.
 */
export async function parallelRows(
  _node: PlanNode,
  source: SourceNode,
  number: number,
  ctx: ExecContext,
  parallel: ParallelContext,
): Promise<Shared<AsyncIterable<readonly Row[] | RenderedRows>>> {
  const shares = await split(source, ctx, parallel);
  return "here" in shares ? shares : { rows: mergeRows(number, shares, ctx, parallel) };
}

/**
 * Workers running the shares of one node, their messages sorted out per share. At most
 * `workers.count` run at once: a share starts when one before it has posted its last message,
 * in the order of the shares.
 */
class ShareRun {
  readonly handles: ShareHandle[] = [];
  readonly tallies: SkipTally[][];
  /** What each share saw of the fields a query reads (absent_fields.ts), merged at the end. */
  readonly absent: AbsentTally[];
  /** Per share: rows posted and not yet taken, whether the share is done, its groups. */
  readonly queues: (readonly Row[] | RenderedRows)[][];
  readonly done: boolean[];
  readonly groups: (PartialGroups | undefined)[];
  /** Per rendering share done: which columns held a null. */
  readonly nulls: (readonly boolean[])[] = [];
  failure: unknown = undefined;
  #wake: (() => void) | null = null;
  readonly #ctx: ExecContext;
  readonly #stop = () => {
    this.stop();
    this.#wake?.();
  };

  constructor(number: number, split: Split, ctx: ExecContext, parallel: ParallelContext) {
    const { shares } = split;
    this.#ctx = ctx;
    this.tallies = shares.map(() => []);
    this.absent = [];
    this.queues = shares.map(() => []);
    this.done = shares.map(() => false);
    this.groups = shares.map(() => undefined);
    ctx.signal.addEventListener("abort", this.#stop, { once: true });
    const running = Math.min(shares.length, split.workers.count);
    const limits = shareLimits(parallel.limits, running);
    this.#startShare = (k: number) => {
      this.handles.push(split.workers.start({
        query: parallel.query,
        now: parallel.now,
        node: number,
        part: parallel.parts[number]!,
        shares: shares[k]!,
        limits,
        ...(parallel.render ? { render: parallel.render.task } : {}),
        ...(ctx.cache ? { cache: ctx.cache.config } : {}),
      }, (m) => this.#hear(k, m)));
    };
    for (let k = 0; k < running; k++) this.#startShare(k);
  }

  readonly #startShare: (k: number) => void;
  #stopped = false;

  /** Starts the next share not started, if any: one has posted its last message. */
  #startNext(): void {
    const k = this.handles.length;
    if (!this.#stopped && this.failure === undefined && k < this.done.length) this.#startShare(k);
  }

  #hear(k: number, m: ShareMessage): void {
    switch (m.kind) {
      case "progress": {
        if (m.bytes > 0) this.#ctx.progress.consume(m.bytes);
        const stats = this.#ctx.stats;
        if (stats && m.stats) {
          stats.bytesRead += m.stats.bytesRead;
          stats.recordsRead += m.stats.recordsRead;
          stats.recordsUnmatched += m.stats.recordsUnmatched;
          stats.cacheBytes += m.stats.cacheBytes ?? 0;
          stats.cacheBlocks += m.stats.cacheBlocks ?? 0;
          stats.cacheBlocksSkipped += m.stats.cacheBlocksSkipped ?? 0;
        }
        return;
      }
      case "warning": {
        const tally = (m.warning as Partial<TallyWarning>).tally;
        const absent = (m.warning as Partial<AbsentReport>).absent;
        if (tally) this.tallies[k]!.push(tally);
        else if (absent) this.absent.push(absent);
        else this.#ctx.warn(m.warning);
        return;
      }
      case "rows":
        this.queues[k]!.push(m.rows.map(decodeRow));
        break;
      case "groups":
        this.groups[k] = m.groups;
        this.done[k] = true;
        this.#startNext();
        break;
      case "rendered":
        this.queues[k]!.push(new RenderedRows(m.bytes, m.ends, undefined, k));
        break;
      case "done":
        this.done[k] = true;
        if (m.nulls) this.nulls.push(m.nulls);
        this.#startNext();
        break;
      case "failed":
        this.failure ??= "diagnostic" in m ? new QueryError(m.diagnostic) : new Error(m.message);
    }
    this.#wake?.();
  }

  /** Waits for the next message of any share; throws a failure or the cancellation. */
  async next(): Promise<void> {
    this.check();
    await new Promise<void>((resolve) => this.#wake = resolve);
    this.#wake = null;
    this.check();
  }

  check(): void {
    checkCancelled(this.#ctx.signal);
    if (this.failure !== undefined) throw this.failure;
  }

  stop(): void {
    this.#stopped = true;
    for (const h of this.handles) h.stop();
  }

  close(): void {
    this.stop();
    this.#ctx.signal.removeEventListener("abort", this.#stop);
  }
}

async function* mergeGroups(
  node: AggregateNode,
  number: number,
  split: Split,
  ctx: ExecContext,
  parallel: ParallelContext,
): BatchStream {
  const run = new ShareRun(number, split, ctx, parallel);
  let charged = 0;
  try {
    const grouping = new Grouping(node);
    for (let k = 0; k < split.shares.length; k++) {
      while (run.groups[k] === undefined) await run.next();
      // A worker's groups (a million of them, say) merge in slices of the query's time.
      const bytes = await grouping.mergeInSlices(run.groups[k]!, ctx);
      run.groups[k] = undefined;
      if (bytes > 0) {
        ctx.memory.take(bytes, "group");
        charged += bytes;
      }
    }
    run.stop();
    await warnSkipped(run, split, ctx);
    for (const out of grouping.rows()) {
      checkCancelled(ctx.signal);
      yield out;
    }
  } finally {
    run.close();
    ctx.memory.release(charged);
  }
}

async function* mergeRows(
  number: number,
  split: Split,
  ctx: ExecContext,
  parallel: ParallelContext,
): AsyncGenerator<readonly Row[] | RenderedRows> {
  const run = new ShareRun(number, split, ctx, parallel);
  try {
    if (parallel.render?.task.lanes) {
      // The consumer places each batch by its lane: every share's batches are taken as they
      // come, so that no share waits for the ones before it (its credits come back at once).
      // A lane whose share is done and whose rows were all taken is told ended once.
      const { queues, done } = run;
      const ended = queues.map(() => false);
      for (;;) {
        run.check();
        let took = false;
        for (let k = 0; k < queues.length; k++) {
          const batch = queues[k]!.shift();
          if (batch === undefined) {
            if (done[k] && !ended[k]) {
              ended[k] = took = true;
              yield RenderedRows.laneEnd(k);
            }
            continue;
          }
          took = true;
          run.handles[k]!.credit();
          yield batch;
        }
        if (took) continue;
        if (ended.every((e) => e)) break;
        await run.next();
      }
    }
    for (let k = 0; k < split.shares.length; k++) {
      const queue = run.queues[k]!;
      for (;;) {
        run.check();
        const batch = queue.shift();
        if (batch !== undefined) {
          run.handles[k]!.credit();
          yield batch;
        } else if (run.done[k]) break;
        else await run.next();
      }
    }
    const render = parallel.render;
    if (render) {
      for (const nulls of run.nulls) nulls.forEach((n, c) => render.nulls[c] ||= n);
    }
    await warnSkipped(run, split, ctx);
  } finally {
    run.close();
  }
}

/** The shares' skip warnings as one thread gives them, worded by the source where it words them. */
async function warnSkipped(run: ShareRun, split: Split, ctx: ExecContext) {
  for (const w of await mergeTallies(run.tallies, split.shares, split.files, ctx.signal)) {
    const own = split.scan.skipped && await split.scan.skipped(split.files, w.tally, ctx);
    ctx.warn(own ? { ...own, tally: w.tally } : w);
  }
  for (const t of mergeAbsent(run.absent)) for (const w of absentWarnings(t)) ctx.warn(w);
}

/**
 * The skip warnings of the shares as one thread gives them: one per source kind, the counts
 * added, the first record the first share's (its line counted from the file's start).
 */
async function mergeTallies(
  tallies: readonly SkipTally[][],
  shares: readonly FileShare[][],
  files: readonly FileEntry[],
  signal: AbortSignal,
): Promise<TallyWarning[]> {
  const merged = new Map<string, { count: number; first: SkipTally["first"]; share: number }>();
  tallies.forEach((list, k) => {
    for (const t of list) {
      const m = merged.get(t.kind);
      if (m) m.count += t.count;
      else merged.set(t.kind, { count: t.count, first: t.first, share: k });
    }
  });
  const out: TallyWarning[] = [];
  for (const [kind, m] of merged) {
    let first = m.first;
    const part = shares[m.share]!.find((s) => s.uri === first.uri);
    const file = files.find((f) => f.uri === first.uri);
    if (first.line !== undefined && part && part.start > 0 && file) {
      // The share counted from its first line: the lines before it are counted here.
      first = { ...first, line: first.line + 1 + await countLines(file, part.start - 1, signal) };
    }
    out.push(skipWarning({ kind: kind as SkipTally["kind"], count: m.count, first }));
  }
  return out;
}

/** The line ends in the first `bytes` bytes of `file`. */
async function countLines(file: FileEntry, bytes: number, signal: AbortSignal): Promise<number> {
  const reader = (await file.open(signal)).getReader();
  let n = 0;
  try {
    for (let at = 0; at < bytes;) {
      const { value, done } = await reader.read();
      if (done) break;
      const end = Math.min(value.length, bytes - at);
      for (let i = value.indexOf(0x0a); i >= 0 && i < end; i = value.indexOf(0x0a, i + 1)) n++;
      at += value.length;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return n;
}
