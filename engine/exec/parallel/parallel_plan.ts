/**
 * Which parts of a plan run in workers: an aggregate (every built-in aggregate merges) over
 * a pipeline of filters, projections and unnests down to a source that can be read in shares
 * (PARSE, READ_JSON over this host's files). Each worker runs that pipeline and a partial
 * aggregation over its share; the aggregate node is the merge point, run once. Any other such
 * pipeline runs in the workers too, and its rows come back share after share, in order.
 *
 *   aggregate (merge)          ← the query's thread: merge the shares in order, then outputs
 *     filter / project ...     ← each worker, over its share
 *       source PARSE(...)      ← each worker: its byte ranges
 *
 * Numbered in a fixed walk of the plan, so that a worker that planned the same script finds
 * the same node by its number.
 */

import { childrenOf, type PlanNode } from "../../plan.ts";
import { readsHostFiles } from "../../datastore.ts";
import { Grouping } from "../aggregate.ts";
import type { Type } from "../../types.ts";

type SourceNode = PlanNode & { kind: "source" };

/** The source a parallel aggregate's pipeline reads, or null when `node` is not one. */
export function scanSourceOf(node: PlanNode): SourceNode | null {
  if (node.kind !== "aggregate" || !Grouping.mergeable(node)) return null;
  return rowSourceOf(node.input);
}

/**
 * The source a top-N sort (a `sort` under a `limit`) over a row pipeline reads, or null when
 * `node` is not one: each worker keeps the first N rows of its share in the order, and the
 * query's thread keeps the first N of those (stable sorts, shares in order: one pass's rows).
 */
export function topSourceOf(node: PlanNode): SourceNode | null {
  if (node.kind !== "sort" || node.top === null) return null;
  return rowSourceOf(node.input);
}

/**
 * The source at the bottom of a row pipeline (filters, projections, unnests over a source that
 * can be read in shares; the source alone is one too), or null when `node` is not one.
 */
export function rowSourceOf(node: PlanNode): SourceNode | null {
  let at = node;
  for (;;) {
    switch (at.kind) {
      case "filter":
      case "project":
      case "unnest":
      case "view":
        at = at.input;
        continue;
      case "source":
        return at.scan ? at : null;
      default:
        return null;
    }
  }
}

/**
 * The parts of the plan that run in workers, numbered in a fixed depth-first walk: mergeable
 * aggregates over row pipelines, and the longest row pipelines elsewhere that filter their rows
 * (whose rows the query's thread takes in order). A pipeline that keeps every row stays in the
 * query's thread: handing each row over from a worker (encoded, cloned, decoded) costs more
 * than reading it here (bench/engine_bench.ts, the wide task: twice as slow on 2 workers).
 * Unless `renderRoot`: the result's rows are rendered where they are made (rendered.ts), so a
 * root that is a row pipeline with a renderable schema runs in the workers whether it filters
 * or not: what crosses over is bytes of the result, not rows.
 */
export function parallelNodes(root: PlanNode, renderRoot = false): PlanNode[] {
  const found: PlanNode[] = [];
  const seen = new Set<PlanNode>();
  const walk = (node: PlanNode) => {
    if (seen.has(node)) return;
    seen.add(node);
    if (
      scanSourceOf(node) !== null || topSourceOf(node) !== null ||
      (rowSourceOf(node) !== null && (filters(node) || (node === root && renderRoot)))
    ) {
      found.push(node);
      return;
    }
    for (const child of childrenOf(node)) walk(child);
  };
  walk(root);
  return found;
}

/**
 * Whether a worker can plan this script as the server did: every source reads this host's
 * files (a cloud store is fetched and paced by the server, not by workers).
 */
export function workerSafe(root: PlanNode): boolean {
  const seen = new Set<PlanNode>();
  const walk = (node: PlanNode): boolean => {
    if (seen.has(node)) return true;
    seen.add(node);
    if (node.kind === "source" && !sourceReadsHostFiles(node.label)) return false;
    return childrenOf(node).every(walk);
  };
  return walk(root);
}

/** Whether the plan's root runs in workers that render its rows (`parallelNodes(root, true)`). */
export function rendersRoot(root: PlanNode): boolean {
  return rowSourceOf(root) !== null && renderable(root);
}

/** Whether a source's label (`PARSE(src: '...')`) names only this host's files. */
function sourceReadsHostFiles(label: string): boolean {
  const src = /\(src: '(.*)'\)$/s.exec(label)?.[1];
  return src === undefined ? !/:\/\//.test(label) : readsHostFiles(src);
}

/** Whether a row pipeline drops rows: a filter in it, or one pushed into its source. */
function filters(node: PlanNode): boolean {
  for (let at = node;;) {
    switch (at.kind) {
      case "filter":
        return true;
      case "project":
      case "unnest":
      case "view":
        at = at.input;
        continue;
      case "source":
        return at.filter !== null;
      default:
        return false;
    }
  }
}

function hasAny(t: Type): boolean {
  switch (t.kind) {
    case "ANY":
    case "NULL":
      return true;
    case "ARRAY":
      return hasAny(t.element);
    case "TUPLE":
      return t.fields.some((f) => hasAny(f.type));
    default:
      return false;
  }
}

/**
 * Whether rows of `node` may be rendered before they reach the query's thread (rendered.ts): a
 * closed schema without ANY, so that its columns are known before the first row.
 */
export function renderable(node: PlanNode): boolean {
  return !node.open && !node.schema.some((f) => hasAny(f.type));
}
