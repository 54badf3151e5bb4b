/** A `count` or `sum` aggregate as the planner makes it, for tests of groupings. */

import { AGGREGATES } from "../../engine/functions/aggregates.ts";
import type { AggregateSpec } from "../../engine/plan/plan.ts";

/** `name(field)` (`count(*)` with a null field) into `slot`; `argField` set for a plain field. */
export function foldSpec(
  name: "count" | "sum",
  field: string | null,
  slot: string,
): AggregateSpec {
  const def = AGGREGATES.get(name)!;
  return {
    slot,
    label: `${name}(${field ?? "*"})`,
    arg: field === null ? null : (r) => r[field] ?? null,
    create: () => def.create(),
    fold: name,
    ...(field === null ? {} : { argField: field }),
  };
}
