/**
 * The split of a plan over scan workers, a pass of the planner that `compile()` runs when the
 * query has workers: which parts run in them (mergeable aggregates, top-N sorts and filtering row
 * pipelines over a source read in shares), numbered in a fixed depth-first walk. `explain()`
 * prints each part's number on its node; a worker's task names its part by that number and
 * carries its description (engine/exec/parallel/part_description.ts), which the worker builds
 * its operators from. A part that cannot be described (not made by the planner) stays here.
 *
 *   aggregate (merge)          ← the query's thread: merge the shares in order, then outputs
 *     filter / project ...     ← each worker, over its share
 *       source PARSE(...)      ← each worker: its byte ranges
 */

import { readByWorkers } from "../../contracts/datastore.ts";
import { childrenOf, type PlanNode, type WorkerSplit } from "../../plan/plan.ts";
import {
  renderable,
  rowSourceOf,
  scanSourceOf,
  topSourceOf,
} from "../../exec/parallel/parallel_plan.ts";
import { describePart } from "../../exec/parallel/part_description.ts";

/** The plan's parts that may run in workers, or undefined when none may. */
export function splitWorkers(root: PlanNode): WorkerSplit | undefined {
  if (!workerSafe(root)) return undefined;
  const rootRenders = rendersRoot(root);
  const nodes = parallelNodes(root, rootRenders);
  if (nodes.length === 0) return undefined;
  const alone = !parallelNodes(root, false).includes(root);
  return {
    nodes,
    parts: nodes.map((n) => describePart(n)!),
    rootRenders: rootRenders && nodes[0] === root,
    rootOnlyRendered: nodes[0] === root && alone,
  };
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
function parallelNodes(root: PlanNode, renderRoot = false): PlanNode[] {
  const found: PlanNode[] = [];
  const seen = new Set<PlanNode>();
  const walk = (node: PlanNode) => {
    if (seen.has(node)) return;
    seen.add(node);
    if (
      (scanSourceOf(node) !== null || topSourceOf(node) !== null ||
        (rowSourceOf(node) !== null && (filters(node) || (node === root && renderRoot)))) &&
      describePart(node) !== undefined
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
 * Whether a worker can plan this script as the server did: every source reads what workers
 * read themselves (this host's files, `azblob://` blobs; a cloud API is fetched and paced by the
 * server, not by workers: readByWorkers).
 */
function workerSafe(root: PlanNode): boolean {
  const seen = new Set<PlanNode>();
  const walk = (node: PlanNode): boolean => {
    if (seen.has(node)) return true;
    seen.add(node);
    if (node.kind === "source" && !sourceReadByWorkers(node.label)) return false;
    return childrenOf(node).every(walk);
  };
  return walk(root);
}

/** Whether a source's label (`PARSE(src: '...')`) names only what workers read (readByWorkers). */
function sourceReadByWorkers(label: string): boolean {
  const src = /\(src: '(.*)'\)$/s.exec(label)?.[1];
  return src === undefined ? !/:\/\//.test(label) : readByWorkers(src);
}

/** Whether the root's rows may be rendered by the workers that make them (`parallelNodes(root, true)`). */
function rendersRoot(root: PlanNode): boolean {
  return rowSourceOf(root) !== null && renderable(root);
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
