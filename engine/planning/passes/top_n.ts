/**
 * Pass: a sort right under a limit needs only the rows the limit can return, so it becomes a
 * top-N sort that holds `count + offset` rows (engine/exec/sort.ts) instead of all of them.
 *
 *   limit 10                              limit 10
 *     sort bytes desc             →         sort bytes desc (top 10)
 */

import type { PlanNode } from "../../plan/plan.ts";
import { rewriteBottomUp } from "./rewrite_bottom_up.ts";

export function topN(root: PlanNode): PlanNode {
  return rewriteBottomUp(root, trimSort);
}

function trimSort(node: PlanNode): PlanNode {
  if (node.kind !== "limit" || node.input.kind !== "sort") return node;
  const sort = node.input;
  const wanted = node.count + node.offset;
  if (!Number.isFinite(wanted)) return node;
  const top = sort.top === null ? wanted : Math.min(sort.top, wanted);
  return { ...node, input: { ...sort, top } };
}
