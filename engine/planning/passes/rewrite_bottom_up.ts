/** The traversal the context-free passes share (push_filters.ts, top_n.ts). */

import { childrenOf, type PlanNode, withChildren } from "../../plan/plan.ts";

/**
 * Rebuilds `root` bottom up: each node gets its rewritten inputs, then `rule` may replace it.
 * A node reached twice (a stream `@x` used twice) is rewritten once, so the plan keeps sharing it.
 */
export function rewriteBottomUp(root: PlanNode, rule: (node: PlanNode) => PlanNode): PlanNode {
  const done = new Map<PlanNode, PlanNode>();
  const visit = (node: PlanNode): PlanNode => {
    const known = done.get(node);
    if (known) return known;
    const children = childrenOf(node);
    const rebuilt = children.length === 0 ? node : withChildren(node, children.map(visit));
    const result = rule(rebuilt);
    done.set(node, result);
    return result;
  };
  return visit(root);
}
