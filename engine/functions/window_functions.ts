/**
 * Window functions: computed per row of a `window(...)` step over the rows of its group that
 * come before it in the window's order (engine/exec/window.ts runs them). Aggregates are valid
 * there too, as running values (WINDOW_AGGREGATES). The checker's catalogue derives their
 * arities from here; the planner their result types.
 */

import { ANY, scalar, type Type } from "../values/types.ts";

export interface WindowFunctionDef {
  readonly name: "row_number" | "rank" | "dense_rank" | "lag" | "lead";
  readonly minArgs: number;
  readonly maxArgs: number;
  /** The result type for the first argument's type (null: none), and whether it may be null. */
  resultType(arg: Type | null): { type: Type; nullable: boolean };
}

const LONG = { type: scalar("LONG"), nullable: false };
const offsetOf = (arg: Type | null) => ({ type: arg ?? ANY, nullable: true });

export const WINDOW_FUNCTIONS: ReadonlyMap<string, WindowFunctionDef> = new Map(
  ([
    { name: "row_number", minArgs: 0, maxArgs: 0, resultType: () => LONG },
    { name: "rank", minArgs: 0, maxArgs: 0, resultType: () => LONG },
    { name: "dense_rank", minArgs: 0, maxArgs: 0, resultType: () => LONG },
    { name: "lag", minArgs: 1, maxArgs: 2, resultType: offsetOf },
    { name: "lead", minArgs: 1, maxArgs: 2, resultType: offsetOf },
  ] as const).map((d) => [d.name, d as WindowFunctionDef]),
);

/**
 * The aggregates a window computes as running values (the rows of the group up to this one,
 * this one included): those whose result is a plain value after each row.
 */
export const WINDOW_AGGREGATES: ReadonlySet<string> = new Set([
  "count",
  "count_distinct",
  "sum",
  "avg",
  "min",
  "max",
  "first",
  "last",
]);

/** True for the name of a window function, in any case. */
export function isWindowFunction(name: string): boolean {
  return WINDOW_FUNCTIONS.has(name.toLowerCase());
}
