/**
 * The query's side of a parallel aggregate: lists the source's files once, splits them into
 * shares (shares.ts), starts a worker per share, and merges their partial groups in the order
 * of the shares, so that the result is the one of a single pass (groups in order of first
 * appearance, each with its first row). Progress and warnings of the workers are the query's;
 * each worker has its part of the memory limit, and the merge is charged to the query's.
 * Cancelling the query stops every worker at once (Worker.terminate).
 */

import type { FileEntry } from "../../datastore.ts";
import { type DiagnosticCode, QueryError } from "../../diagnostics.ts";
import type { PlanNode } from "../../plan.ts";
import { Grouping } from "../aggregate.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "../context.ts";
import type { ParallelContext, PartialGroups, ShareHandle } from "./scan_workers.ts";
import { type FileShare, splitShares } from "./shares.ts";
import { type SkipTally, skipWarning, type TallyWarning } from "../skip_tally.ts";

type AggregateNode = PlanNode & { kind: "aggregate" };
type SourceNode = PlanNode & { kind: "source" };

/**
 * The aggregate's rows computed by workers, or null when its input is too small to share (the
 * caller then runs it here).
 */
export async function parallelAggregate(
  node: AggregateNode,
  source: SourceNode,
  number: number,
  ctx: ExecContext,
  parallel: ParallelContext,
): Promise<BatchStream | null> {
  const scan = source.scan!;
  const files: FileEntry[] = [];
  for await (const f of scan.list(ctx)) files.push(f);
  checkCancelled(ctx.signal);
  const { workers } = parallel;
  const shareable = await Promise.all(files.map(async (f) => ({
    uri: f.uri,
    size: f.size,
    lines: f.openAt !== undefined && f.size > workers.minShareBytes &&
      await scan.lines(f, ctx.signal).catch(() => false),
  })));
  const shares = splitShares(shareable, workers.count, workers.minShareBytes);
  if (shares.length <= 1) return null;
  ctx.progress.expect(files.reduce((n, f) => n + f.size, 0));
  return mergeShares(node, number, shares, files, ctx, parallel);
}

async function* mergeShares(
  node: AggregateNode,
  number: number,
  shares: readonly FileShare[][],
  files: readonly FileEntry[],
  ctx: ExecContext,
  parallel: ParallelContext,
): BatchStream {
  const tallies: SkipTally[][] = shares.map(() => []);
  const handles: ShareHandle[] = [];
  const stopAll = () => {
    for (const h of handles) h.stop();
  };
  ctx.signal.addEventListener("abort", stopAll, { once: true });
  let charged = 0;
  try {
    const memoryLimit = Math.floor(parallel.memoryLimit / shares.length);
    const results = shares.map((share, k) =>
      new Promise<PartialGroups>((resolve, reject) => {
        const handle = parallel.workers.start({
          source: parallel.source,
          query: parallel.query,
          now: parallel.now,
          node: number,
          shares: share,
          memoryLimit,
        }, (m) => {
          switch (m.kind) {
            case "progress":
              ctx.progress.consume(m.bytes);
              break;
            case "warning": {
              const tally = (m.warning as Partial<TallyWarning>).tally;
              if (tally) tallies[k].push(tally);
              else ctx.warn(m.warning);
              break;
            }
            case "groups":
              resolve(m.groups);
              break;
            case "failed":
              reject(
                m.code === "INTERNAL"
                  ? new Error(m.message)
                  : new QueryError({ code: m.code as DiagnosticCode, message: m.message }),
              );
          }
        });
        handles.push(handle);
      })
    );
    // One failure ends them all; a cancellation rejects with the signal's reason.
    const cancelled = new Promise<never>((_, reject) => {
      const fail = () => reject(ctx.signal.reason ?? new DOMException("cancelled", "AbortError"));
      if (ctx.signal.aborted) fail();
      ctx.signal.addEventListener("abort", fail, { once: true });
    });
    cancelled.catch(() => {});
    for (const r of results) r.catch(() => {});
    const grouping = new Grouping(node);
    for (const result of results) {
      const partial = await Promise.race([result, cancelled]);
      const bytes = grouping.merge(partial);
      if (bytes > 0) {
        ctx.memory.take(bytes, "group");
        charged += bytes;
      }
    }
    stopAll();
    for (const w of await mergeTallies(tallies, shares, files, ctx.signal)) ctx.warn(w);
    for (const out of grouping.rows()) {
      checkCancelled(ctx.signal);
      yield out;
    }
  } finally {
    stopAll();
    ctx.signal.removeEventListener("abort", stopAll);
    ctx.memory.release(charged);
  }
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
    const part = shares[m.share].find((s) => s.uri === first.uri);
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
