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
 * Which nodes run in workers is decided when the script is planned
 * (engine/planning/passes/split_workers.ts, printed by `explain()`); these are the shapes that
 * pass looks for and the operators run by.
 */

import type { PlanNode } from "../../plan/plan.ts";
import { Grouping } from "../aggregate.ts";
import type { Type } from "../../values/types.ts";

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
