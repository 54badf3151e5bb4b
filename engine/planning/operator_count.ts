/**
 * The operators a plan runs, counted as they run: a node reached twice (a stream `@x` used
 * twice) runs twice, and a stored script's operators count where it is called. The checker
 * counts the streams of one script before planning; this count adds the views, which are known
 * only once planned, and is taken on the shared plan, before any pass copies a node per use.
 */

import { childrenOf, type PlanNode } from "../plan/plan.ts";

/**
 * Operators of `root` with every use of a shared node counted, without walking a shared node
 * twice. A view node only names its plan: it adds none of its own.
 */
export function operatorCount(root: PlanNode): number {
  const counted = new Map<PlanNode, number>();
  const count = (node: PlanNode): number => {
    const known = counted.get(node);
    if (known !== undefined) return known;
    let n = node.kind === "view" ? 0 : 1;
    for (const child of childrenOf(node)) n += count(child);
    counted.set(node, n);
    return n;
  };
  return count(root);
}
