/**
 * Pass: a filter right above a source that takes filters moves into it, so that the rows it
 * drops are never built whole nor batched (the PARSE byte scanner even tests it on the few
 * fields it reads before building the rest). The condition runs once per row either way.
 *
 *   filter (status = 200)                 source PARSE(...) filter (status = 200)
 *     source PARSE(...)           →
 */

import type { PlanNode } from "../../plan/plan.ts";
import { rewriteBottomUp } from "./rewrite_bottom_up.ts";

export function pushFilters(root: PlanNode): PlanNode {
  return rewriteBottomUp(root, pushFilter);
}

function pushFilter(node: PlanNode): PlanNode {
  if (node.kind !== "filter") return node;
  const source = node.input;
  // One filter per source: a second one above stays a filter node.
  if (source.kind !== "source" || !source.takes.filter || source.filter !== null) return node;
  const condition = node.condition.fn;
  const negated = node.negated;
  return {
    ...source,
    filter: {
      condition: node.condition,
      negated,
      reads: node.reads,
      // filter_out drops the rows where the condition is true; null is not true, so it keeps them.
      keep: (row) => (condition(row) === true) !== negated,
    },
  };
}
