/**
 * `VALUES((a: 1, b: 'x'), (a: 2))`: rows evaluated at compile time. The schema holds every
 * field of any row, in order of first appearance, types widened; a field missing from a row
 * is null there.
 */

import type { Source } from "../front/ast.ts";
import type { PlanNode } from "../plan/plan.ts";
import { type Field, widen } from "../values/types.ts";
import type { Row } from "../values/values.ts";
import { type PlanEnv, report } from "./env.ts";
import { constant } from "./expressions.ts";

export function planValues(
  env: PlanEnv,
  source: Source & { kind: "values" },
): PlanNode | undefined {
  const fields = new Map<string, Field>();
  const rows: Row[] = [];
  let ok = true;
  for (const rowExpr of source.rows) {
    if (rowExpr.kind !== "tuple") {
      report(
        env,
        "TYPE_ERROR",
        "each row of VALUES must be a tuple such as (a: 1, b: 'x')",
        rowExpr.span,
      );
      ok = false;
      continue;
    }
    const row: Row = {};
    for (const f of rowExpr.fields) {
      const c = constant(env, f.value);
      if (!c) {
        ok = false;
        continue;
      }
      row[f.name] = c.value;
      const prev = fields.get(f.name);
      const nullable = c.value === null || (prev ? prev.nullable : rows.length > 0);
      fields.set(f.name, {
        name: f.name,
        type: prev ? widen(prev.type, c.type) : c.type,
        nullable,
      });
    }
    rows.push(row);
  }
  if (!ok) return undefined;
  // A field absent from some row is null there.
  for (const [name, f] of fields) {
    if (!f.nullable && rows.some((r) => !(name in r))) fields.set(name, { ...f, nullable: true });
  }
  const schema = [...fields.values()];
  const full = rows.map((r) => Object.fromEntries(schema.map((f) => [f.name, r[f.name] ?? null])));
  return { kind: "values", schema, rows: full };
}
