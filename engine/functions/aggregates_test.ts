import assert from "node:assert/strict";
import { QueryError } from "../front/diagnostics.ts";
import { parseIp } from "../values/ip.ts";
import { arrayOf, scalar, type Type, typeToString } from "../values/types.ts";
import { Interval, Timestamp, type Value } from "../values/values.ts";
import { AGGREGATES, isAggregate } from "./aggregates.ts";

function aggregate(name: string, values: readonly Value[]): Value {
  const acc = AGGREGATES.get(name)!.create();
  for (const v of values) acc.add(v);
  return acc.result();
}

Deno.test("aggregates compute over values, skipping nulls", () => {
  const cases: [string, Value[], Value][] = [
    ["count", [1, null, 3], 2],
    ["count", [], 0],
    ["count_distinct", [1, 1, "1", null, 2], 3],
    ["count_distinct", [new Timestamp(5), new Timestamp(5), parseIp("::1"), parseIp("::1")], 2],
    ["sum", [1, 2, null, 3], 6],
    ["sum", [null], null],
    ["sum", [0.5, 0.25], 0.75],
    ["avg", [1, 2, null, 6], 3],
    ["avg", [], null],
    ["min", [3, null, 1, 2], 1],
    ["max", ["b", "c", "a"], "c"],
    ["max", [], null],
    ["first", [null, "x", "y"], "x"],
    ["last", ["x", "y", null], "y"],
    ["array_agg", [1, null, 2], [1, 2]],
  ];
  for (const [name, values, want] of cases) {
    assert.deepEqual(aggregate(name, values), want, `${name}(${values.map(String)})`);
  }
  assert.deepEqual(aggregate("sum", [new Interval(5), new Interval(7)]), new Interval(12));
  assert.deepEqual(aggregate("min", [new Timestamp(9), new Timestamp(4)]), new Timestamp(4));
});

Deno.test("aggregate result types follow the argument type", () => {
  const cases: [string, Type | null, string][] = [
    ["count", null, "LONG"],
    ["count", scalar("STRING"), "LONG"],
    ["count_distinct", scalar("IPADDR"), "LONG"],
    ["sum", scalar("INTEGER"), "LONG"],
    ["sum", scalar("LONG"), "LONG"],
    ["sum", scalar("DOUBLE"), "DOUBLE"],
    ["sum", scalar("INTERVAL"), "INTERVAL"],
    ["avg", scalar("INTEGER"), "DOUBLE"],
    ["min", scalar("TIMESTAMP"), "TIMESTAMP"],
    ["max", scalar("STRING"), "STRING"],
    ["first", scalar("IPADDR"), "IPADDR"],
    ["last", scalar("BOOLEAN"), "BOOLEAN"],
    ["array_agg", scalar("STRING"), typeToString(arrayOf(scalar("STRING")))],
    ["sum", { kind: "ANY" }, "ANY"],
  ];
  for (const [name, arg, want] of cases) {
    assert.equal(typeToString(AGGREGATES.get(name)!.resultType(arg)), want, name);
  }
});

Deno.test("aggregates refuse arguments they cannot take", () => {
  assert.throws(() => AGGREGATES.get("sum")!.resultType(scalar("STRING")), QueryError);
  assert.throws(() => AGGREGATES.get("avg")!.resultType(scalar("TIMESTAMP")), /avg needs a number/);
  assert.throws(() => AGGREGATES.get("max")!.resultType(null), /only count\(\*\)/);
  const acc = AGGREGATES.get("sum")!.create();
  assert.throws(() => acc.add("x"), /sum needs numbers/);
});

Deno.test("count_distinct and array_agg report the bytes they hold", () => {
  const distinct = AGGREGATES.get("count_distinct")!.create();
  for (let i = 0; i < 100; i++) distinct.add(`value ${i % 50}`);
  const small = AGGREGATES.get("count_distinct")!.create();
  small.add("x");
  assert.ok(distinct.bytes! > small.bytes!);
  const arr = AGGREGATES.get("array_agg")!.create();
  arr.add("x".repeat(1000));
  assert.ok(arr.bytes! >= 2000);
});

Deno.test("isAggregate() knows aggregate names in any case", () => {
  assert.ok(isAggregate("COUNT"));
  assert.ok(isAggregate("array_agg"));
  assert.ok(!isAggregate("lower"));
});

Deno.test("every aggregate's state exported and merged in order gives one pass's result", () => {
  const inputs: Value[][] = [
    [new Timestamp(5), new Timestamp(1), null, new Timestamp(1), new Timestamp(9)],
    [parseIp("10.0.0.2"), parseIp("::1"), parseIp("10.0.0.1"), null],
    [3, null, 1, 4, 1, 5, 9, 2, 6, null, 5, 3],
    ["b", "a", null, "c", "a", "b"],
    [new Interval(5), null, new Interval(-2), new Interval(5)],
    [[1, 2], [1], null, [1, 2]],
    [],
    [null, null],
  ];
  for (const [name, def] of AGGREGATES) {
    for (const values of inputs) {
      const one = def.create();
      let ok = true;
      try {
        for (const v of values) one.add(v);
      } catch {
        ok = false; // a value the aggregate refuses (sum of strings): nothing to merge
      }
      if (!ok) continue;
      for (let cut = 0; cut <= values.length; cut++) {
        for (let cut2 = cut; cut2 <= values.length; cut2++) {
          const parts = [values.slice(0, cut), values.slice(cut, cut2), values.slice(cut2)];
          const merged = def.create();
          for (const part of parts) {
            const acc = def.create();
            for (const v of part) acc.add(v);
            // Through a structured clone, as between a worker and the query's thread.
            merged.mergeState(structuredClone(acc.exportState()));
          }
          assert.deepEqual(merged.result(), one.result(), `${name} cut ${cut},${cut2}`);
          assert.equal(merged.bytes, one.bytes, `${name} bytes`);
        }
      }
    }
  }
});

Deno.test("percentile interpolates between the nearest ranks, median is the 0.5th", () => {
  const p = (q: number, values: readonly Value[]) => {
    const acc = AGGREGATES.get("percentile")!.create([q]);
    for (const v of values) acc.add(v);
    return acc.result();
  };
  assert.equal(p(0.5, [4, 1, 3, 2]), 2.5);
  assert.equal(p(0, [4, 1, null, 3]), 1);
  assert.equal(p(1, [4, 1, 3]), 4);
  assert.equal(p(0.95, [10, 20, 30, 40, 50]), 48);
  assert.equal(p(0.9, [7]), 7);
  assert.equal(p(0.5, [null]), null);
  assert.equal(aggregate("median", [5, 1, 3]), 3);
  assert.equal(aggregate("median", [5, 1, 3, 4]), 3.5);
  assert.deepEqual(p(0.5, [new Interval(10), new Interval(15)]), new Interval(12));
  assert.deepEqual(p(0.5, [new Timestamp(1000), new Timestamp(3000)]), new Timestamp(2000));
  const check = AGGREGATES.get("percentile")!.params!.check;
  assert.equal(check(0.95, 0), null);
  assert.match(check(95, 0) ?? "", /between 0 and 1 \(0\.95 for the 95th\), found 95/);
  assert.equal(typeToString(AGGREGATES.get("median")!.resultType(scalar("INTEGER"))), "DOUBLE");
  assert.equal(
    typeToString(AGGREGATES.get("percentile")!.resultType(scalar("INTERVAL"))),
    "INTERVAL",
  );
  assert.throws(() => AGGREGATES.get("median")!.resultType(scalar("STRING")), QueryError);
});

Deno.test("percentile states merged in any split give the one-pass answer", () => {
  const values = [9, 3, 7, 1, 8, 2, 2, 6, 5, 4, 0.5, 11];
  for (const q of [0, 0.25, 0.5, 0.9, 0.95, 1]) {
    const whole = AGGREGATES.get("percentile")!.create([q]);
    for (const v of values) whole.add(v);
    for (let cut = 0; cut <= values.length; cut++) {
      const a = AGGREGATES.get("percentile")!.create([q]);
      const b = AGGREGATES.get("percentile")!.create([q]);
      values.slice(0, cut).forEach((v) => a.add(v));
      values.slice(cut).forEach((v) => b.add(v));
      a.mergeState(structuredClone(b.exportState()));
      assert.equal(a.result(), whole.result(), `q ${q} cut ${cut}`);
    }
  }
});
