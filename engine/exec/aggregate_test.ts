import assert from "node:assert/strict";
import { aggregateRows } from "./aggregate.ts";
import { AGGREGATES } from "../functions/aggregates.ts";
import type { AggregateSpec } from "../plan.ts";
import { testContext } from "../../tests/support/temp_tree.ts";
import { Interval, IpAddr, type Row } from "../values.ts";

async function* once(rows: Row[]) {
  yield rows;
}

function spec(name: "count" | "sum", field: string | null, slot: string): AggregateSpec {
  const def = AGGREGATES.get(name)!;
  return {
    slot,
    label: `${name}(${field ?? "*"})`,
    arg: field === null ? null : (r) => r[field] ?? null,
    create: () => def.create(),
    fold: name,
  };
}

async function run(rows: Row[]) {
  const out: Row[] = [];
  const source = aggregateRows(once(rows), {
    keys: [{ fn: (r) => r.k, label: "k" }],
    aggregates: [spec("count", null, "n"), spec("count", "v", "c"), spec("sum", "v", "s")],
    outputs: ["k", "n", "c", "s"].map((name) => ({ name, label: name, fn: (r: Row) => r[name] })),
  }, testContext());
  for await (const b of source) out.push(...b);
  return out;
}

Deno.test("aggregateRows() folds count and sum per group as the accumulators do", async () => {
  const ip = (n: number) => new IpAddr(4, n);
  const got = await run([
    { k: ip(1), v: 2 },
    { k: "1", v: null },
    { k: ip(1), v: 3 },
    { k: 1, v: new Interval(5) },
    { k: ip(1), v: null },
    { k: 1, v: new Interval(7) },
  ]);
  // The IPv4 address 0.0.0.1, the string "1" and the number 1 are three groups, in order.
  assert.deepEqual(got, [
    { k: ip(1), n: 3, c: 2, s: 5 },
    { k: "1", n: 1, c: 0, s: null },
    { k: 1, n: 2, c: 2, s: new Interval(12) },
  ]);
});

Deno.test("aggregateRows() fails a sum of text with sum's own error", async () => {
  await assert.rejects(run([{ k: 1, v: 2 }, { k: 1, v: "x" }]), /sum needs numbers/);
});
