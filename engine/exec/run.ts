/**
 * Drives a plan: opens each node as an async generator of batches over its inputs, and resolves
 * the result schema from what flows. It rewrites nothing: filters pushed into sources, top-N
 * sorts and the fields each source reads are in the plan already (engine/planning/passes/),
 * so what runs is what `explain()` prints. A stream bound once and used twice (`@x`) is opened
 * twice: computed twice, never buffered.
 */

import { ColumnCache } from "../fs/column_cache.ts";
import { assertNever } from "../front/ast.ts";
import { childrenOf, type CompiledPlan, type PlanNode } from "../plan/plan.ts";
import type { ExecuteOptions, QueryRun } from "./query_run.ts";
import type { Schema } from "../values/types.ts";
import type { Row } from "../values/values.ts";
import {
  type BatchStream,
  checkCancelled,
  type ExecContext,
  MemoryBudget,
  ProgressMeter,
  TimeSlicer,
} from "../plan/context.ts";
import { valuesSource } from "./values_source.ts";
import { filterRows } from "./filter.ts";
import { projectRows } from "./project.ts";
import { aggregateRows, Grouping } from "./aggregate.ts";
import { sortRows } from "./sort.ts";
import { limitRows } from "./limit.ts";
import { joinRows } from "./join.ts";
import { unionRows } from "./union.ts";
import { unnestRows } from "./unnest.ts";
import { saveRows } from "./save.ts";
import { windowRows } from "./window.ts";
import { storedTableSource } from "./stored_source.ts";
import { SchemaObserver } from "./schema_observer.ts";
import { renderable, rowSourceOf, scanSourceOf, topSourceOf } from "./parallel/parallel_plan.ts";
import { RenderedRows, type RenderRequest } from "../render/rendered.ts";
import { renderRows } from "./render_rows.ts";
import { parallelAggregate, parallelRows } from "./parallel/parallel_aggregate.ts";
import type { ParallelContext } from "../contracts/scan_workers.ts";

/**
 * Opens `node` as it stands: the plan's passes made every rewrite before it runs. A part of the
 * plan that runs in workers (engine/exec/parallel/) is opened there.
 */
export function openNode(node: PlanNode, ctx: ExecContext): BatchStream {
  const number = ctx.parallel?.nodes.get(node);
  const stream = number === undefined
    ? openHere(node, ctx)
    : node.kind === "aggregate"
    ? aggregateInWorkers(node, number, ctx)
    : node.kind === "sort"
    ? topInWorkers(node, number, ctx)
    // Rendered batches come only from the root with ctx.parallel.render, opened by runPlan.
    : rowsInWorkers(node, number, ctx) as BatchStream;
  return ctx.slicer ? withTurns(stream, ctx.slicer) : stream;
}

/**
 * `input`, with a turn of the event loop after a batch once the query's slice is used up: rows
 * that flow from operator to operator without I/O (held rows, VALUES, data already in memory)
 * go through microtasks only, which never let the server answer anyone else.
 */
async function* withTurns(input: BatchStream, slicer: TimeSlicer): BatchStream {
  for await (const batch of input) {
    yield batch;
    await slicer.check();
  }
}

/** Opens `node` in this thread (its inputs may still run in workers). */
function openHere(node: PlanNode, ctx: ExecContext): BatchStream {
  switch (node.kind) {
    case "values":
      return valuesSource(node.rows, ctx);
    case "source": {
      // In a worker, its share of the files; the node is its own SourceRead: the fields and
      // the filter explain() shows on it.
      const share = ctx.shareFiles?.get(node);
      return share && node.scan ? node.scan.read(share, ctx, node) : node.start(ctx, node);
    }
    case "table":
      return storedTableSource(node, ctx);
    case "view":
      return openNode(node.input, ctx);
    case "filter":
      return filterRows(openNode(node.input, ctx), node.condition.fn, {
        negated: node.negated,
        ctx,
      });
    case "project":
      return projectRows(openNode(node.input, ctx), node, ctx);
    case "aggregate": {
      // A source right under it may fold its records into the grouping without rows.
      const grouping = new Grouping(node);
      return aggregateRows(
        openNode(node.input, grouping.inputContext(node.input, ctx)),
        node,
        ctx,
        grouping,
      );
    }
    case "sort":
      return sortRows(
        openNode(node.input, ctx),
        node.keys,
        ctx,
        node.top === null ? {} : { keep: node.top },
      );
    case "limit":
      return limitRows(openNode(node.input, ctx), node, ctx, savesIn(node.input));
    case "join":
      return joinRows(openNode(node.left, ctx), openNode(node.right, ctx), node, ctx);
    case "union":
      return unionRows(node.inputs.map((i) => openNode(i, ctx)), node.schema, ctx, node.open);
    case "unnest":
      return unnestRows(openNode(node.input, ctx), {
        array: node.array.fn,
        name: node.name,
        outer: node.outer ?? false,
      }, ctx);
    case "window":
      return windowRows(openNode(node.input, ctx), node, ctx);
    case "save":
      return saveRows(openNode(node.input, ctx), node, ctx);
    case "after":
      return afterRows(node.before, openNode(node.input, ctx), ctx);
    default:
      return assertNever(node);
  }
}

/** The aggregate's rows from the workers, or from here when its input is too small to share. */
async function* aggregateInWorkers(
  node: PlanNode & { kind: "aggregate" },
  number: number,
  ctx: ExecContext,
): BatchStream {
  const source = scanSourceOf(node)!;
  const merged = await parallelAggregate(node, source, number, ctx, ctx.parallel!);
  yield* "rows" in merged ? merged.rows : openHere(node, merged.here);
}

/**
 * A top-N sort: each worker's first N rows of its share, in the order of the shares, sorted
 * here again keeping N; or all of it here when the input is too small to share.
 */
async function* topInWorkers(
  node: PlanNode & { kind: "sort" },
  number: number,
  ctx: ExecContext,
): BatchStream {
  const source = topSourceOf(node)!;
  const tops = await parallelRows(node, source, number, ctx, ctx.parallel!);
  if (!("rows" in tops)) return yield* openHere(node, tops.here);
  yield* sortRows(tops.rows as BatchStream, node.keys, ctx, { keep: node.top! });
}

/**
 * A row pipeline's rows from the workers in order, or from here when too small to share;
 * rendered when it is the root and the workers render it.
 */
async function* rowsInWorkers(
  node: PlanNode,
  number: number,
  ctx: ExecContext,
): AsyncGenerator<readonly Row[] | RenderedRows> {
  const source = rowSourceOf(node)!;
  const rows = await parallelRows(node, source, number, ctx, ctx.parallel!);
  yield* "rows" in rows ? rows.rows : openHere(node, rows.here);
}

/** Drains each of `before` in order (their rows are dropped), then passes `rows` on. */
async function* afterRows(
  before: readonly PlanNode[],
  rows: BatchStream,
  ctx: ExecContext,
): BatchStream {
  for (const node of before) {
    for await (const _ of openNode(node, ctx)) checkCancelled(ctx.signal);
  }
  yield* rows;
}

/**
 * The plan's parts that run in workers (its split, engine/planning/passes/split_workers.ts) and
 * the workers, or nothing when no part of it runs in workers.
 */
function parallelContext(
  plan: CompiledPlan,
  render: RenderRequest | undefined,
): { parallel?: ParallelContext } {
  const p = plan.parallel!;
  const split = plan.split;
  if (!split) return {};
  const renderRoot = render !== undefined && split.rootRenders;
  if (split.rootOnlyRendered && !renderRoot) return {};
  const nodes = new Map<object, number>(split.nodes.map((n, i) => [n, i]));
  const columns = plan.root.schema.map((f) => f.name);
  return {
    parallel: {
      workers: p.workers,
      query: p.query,
      now: plan.now,
      limits: plan.limits,
      nodes,
      parts: split.parts,
      ...(renderRoot && nodes.has(plan.root)
        ? { render: { task: { ...render!, columns }, nulls: columns.map(() => false) } }
        : {}),
    },
  };
}

/** Whether a `save` is in the subtree: its input must then be read to the end. */
function savesIn(node: PlanNode): boolean {
  return node.kind === "save" || childrenOf(node).some(savesIn);
}

/** Starts a compiled plan; nothing is read until the batches are iterated. */
export function runPlan(plan: CompiledPlan, options: ExecuteOptions): QueryRun {
  const warn = options.onWarning ?? (() => {});
  const progress = new ProgressMeter(options.onProgress);
  const ctx: ExecContext = {
    signal: options.signal,
    timeZone: plan.timeZone,
    now: plan.now,
    warn,
    progress,
    memory: new MemoryBudget(plan.limits.memoryLimit),
    ...(plan.parallel ? parallelContext(plan, options.render) : {}),
    stats: options.stats,
    slicer: new TimeSlicer(options.signal),
    ...(plan.cache ? { cache: new ColumnCache(plan.cache) } : {}),
  };
  const render = ctx.parallel?.render;
  // A fixed text format and a renderable root not rendered by workers: rendered here.
  const renderHere = !render && options.render && renderable(plan.root)
    ? {
      task: { ...options.render, columns: plan.root.schema.map((f) => f.name) },
      nulls: plan.root.schema.map(() => false),
    }
    : undefined;
  const observer = new SchemaObserver(plan.root.schema, plan.root.open ?? false);
  let final: Schema | null = null;

  async function* batches(): AsyncGenerator<readonly Row[] | RenderedRows> {
    try {
      checkCancelled(ctx.signal);
      const root = render
        ? rowsInWorkers(plan.root, ctx.parallel!.nodes.get(plan.root)!, ctx)
        : renderHere
        ? renderRows(plan.root, ctx, renderHere.task, openNode, renderHere.nulls)
        : openNode(plan.root, ctx);
      for await (const batch of root) {
        checkCancelled(ctx.signal);
        if (batch instanceof RenderedRows) {
          if (ctx.stats) ctx.stats.rowsOut += batch.count;
          if (batch.count > 0 || batch.laneEnds) yield batch;
          await ctx.slicer!.check();
          continue;
        }
        observer.observe(batch);
        if (ctx.stats) ctx.stats.rowsOut += batch.length;
        if (batch.length > 0) yield batch;
      }
      checkCancelled(ctx.signal);
      const nulls = render?.nulls ?? renderHere?.nulls;
      if (nulls) observer.observeNulls(nulls);
      final = observer.schema();
      progress.finish();
    } finally {
      ctx.slicer!.stop();
    }
  }

  const all = batches();
  return {
    // Without options.render no batch comes rendered.
    batches: all as AsyncIterable<readonly Row[]>,
    ...(options.render ? { parts: all } : {}),
    schema: () => final ?? observer.schema(),
  };
}
