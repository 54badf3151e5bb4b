/**
 * The planner's rewrites of a whole plan, run in order by `compile()` after `planScript()`:
 * each pass takes a plan and gives an equivalent one, so the plan `explain()` prints is the plan
 * that runs. Every pass can run on its own, in any order, and twice. The split over scan workers
 * (split_workers.ts) comes after them, when the query has workers: it rewrites nothing and marks
 * the parts that run in them.
 */

import type { PlanNode } from "../../plan/plan.ts";
import { neededFields } from "./needed_fields.ts";
import { pushFilters } from "./push_filters.ts";
import { topN } from "./top_n.ts";

/** A rewrite of a whole plan into an equivalent one. */
export type PlanPass = (root: PlanNode) => PlanNode;

/**
 * Any order gives the same plan (a filter adds what it reads to its source's fields whether it
 * was pushed in or not); fields come last, so they read as the summary of the others.
 */
export const PLAN_PASSES: readonly PlanPass[] = [pushFilters, topN, neededFields];

/** `root` after every pass of `passes`, in order. */
export function optimizePlan(root: PlanNode, passes: readonly PlanPass[] = PLAN_PASSES): PlanNode {
  return passes.reduce((node, pass) => pass(node), root);
}
