/**
 * Drives a plan: opens each node as an async generator of batches over its inputs, pushing
 * down which fields each source must produce, and resolves the result schema from what flows.
 * A stream bound once and used twice (`@x`) is opened twice: computed twice, never buffered.
 */

import { assertNever } from "../ast.ts";
import type { CompiledPlan, PlanNode } from "../plan.ts";
import type { ExecuteOptions, QueryRun } from "./query_run.ts";
import type { Schema } from "../types.ts";
import type { Row } from "../values.ts";
import {
  type BatchStream,
  checkCancelled,
  type ExecContext,
  MemoryBudget,
  ProgressMeter,
} from "./context.ts";
import { valuesSource } from "./values_source.ts";
import { filterRows } from "./filter.ts";
import { projectRows } from "./project.ts";
import { aggregateRows } from "./aggregate.ts";
import { sortRows } from "./sort.ts";
import { limitRows } from "./limit.ts";
import { joinRows } from "./join.ts";
import { unionRows } from "./union.ts";
import { unnestRows } from "./unnest.ts";
import { saveRows } from "./save.ts";
import { storedTableSource } from "./stored_source.ts";
import { SchemaObserver } from "./schema_observer.ts";

type Needed = ReadonlySet<string> | null;

function plus(needed: Needed, reads: ReadonlySet<string> | null): Needed {
  if (needed === null || reads === null) return null;
  return new Set([...needed, ...reads]);
}

/** Opens `node`; `needed` names the output fields read downstream (null: all). */
export function openNode(node: PlanNode, ctx: ExecContext, needed: Needed): BatchStream {
  switch (node.kind) {
    case "values":
      return valuesSource(node.rows, ctx);
    case "source":
      return node.start(ctx, needed);
    case "table":
      return storedTableSource(node, ctx);
    case "view":
      return openNode(node.input, ctx, needed);
    case "filter": {
      const input = node.input;
      if (input.kind === "source" && input.startFiltered !== undefined) {
        // The condition runs once per row either way, inside the scan instead of after it.
        const condition = node.condition.fn;
        const negated = node.negated;
        return input.startFiltered(ctx, plus(needed, node.reads), {
          reads: node.reads,
          keep: (row) => (condition(row) === true) !== negated,
        });
      }
      return filterRows(openNode(node.input, ctx, plus(needed, node.reads)), node.condition.fn, {
        negated: node.negated,
        ctx,
      });
    }
    case "project":
      return projectRows(openNode(node.input, ctx, node.reads), node, ctx);
    case "aggregate":
      return aggregateRows(openNode(node.input, ctx, node.reads), node, ctx);
    case "sort":
      return sortRows(openNode(node.input, ctx, plus(needed, node.reads)), node.keys, ctx);
    case "limit": {
      const input = node.input;
      // A sort under a limit keeps only the rows the limit can return.
      if (input.kind === "sort" && Number.isFinite(node.count + node.offset)) {
        const sorted = sortRows(
          openNode(input.input, ctx, plus(needed, input.reads)),
          input.keys,
          ctx,
          {
            keep: node.count + node.offset,
          },
        );
        return limitRows(sorted, node, ctx);
      }
      return limitRows(openNode(input, ctx, needed), node, ctx);
    }
    case "join": {
      if (node.rightNames === null) {
        return joinRows(
          openNode(node.left, ctx, null),
          openNode(node.right, ctx, null),
          node,
          ctx,
        );
      }
      const rightNames = node.rightNames;
      const leftNames = new Set(node.left.schema.map((f) => f.name));
      const leftNeeded = needed === null
        ? null
        : new Set([...needed].filter((n) => leftNames.has(n)));
      const rightNeeded = needed === null ? null : new Set(
        [...rightNames].filter(([, to]) => needed.has(to)).map(([from]) => from),
      );
      return joinRows(
        openNode(node.left, ctx, plus(leftNeeded, node.leftReads)),
        openNode(node.right, ctx, plus(rightNeeded, node.rightReads)),
        node,
        ctx,
      );
    }
    case "union":
      return unionRows(node.inputs.map((i) => openNode(i, ctx, needed)), node.schema, ctx);
    case "unnest":
      return unnestRows(openNode(node.input, ctx, plus(needed, node.reads)), {
        array: node.array.fn,
        name: node.name,
      }, ctx);
    case "save":
      return saveRows(openNode(node.input, ctx, null), node, ctx);
    case "after":
      return afterRows(node.before, openNode(node.input, ctx, needed), ctx);
    default:
      return assertNever(node);
  }
}

/** Drains each of `before` in order (their rows are dropped), then passes `rows` on. */
async function* afterRows(
  before: readonly PlanNode[],
  rows: BatchStream,
  ctx: ExecContext,
): BatchStream {
  for (const node of before) {
    for await (const _ of openNode(node, ctx, null)) checkCancelled(ctx.signal);
  }
  yield* rows;
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
    memory: new MemoryBudget(plan.memoryLimit),
  };
  const observer = new SchemaObserver(plan.root.schema, plan.root.open ?? false);
  let final: Schema | null = null;

  async function* batches(): AsyncGenerator<readonly Row[]> {
    checkCancelled(ctx.signal);
    for await (const batch of openNode(plan.root, ctx, null)) {
      checkCancelled(ctx.signal);
      observer.observe(batch);
      if (batch.length > 0) yield batch;
    }
    checkCancelled(ctx.signal);
    final = observer.schema();
    progress.finish();
  }

  return {
    batches: batches(),
    schema: () => final ?? observer.schema(),
  };
}
