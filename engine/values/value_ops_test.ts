import assert from "node:assert/strict";
import {
  combineKeys,
  compareValues,
  estimateBytes,
  typeOfValue,
  valueKey,
  valuesEqual,
} from "./value_ops.ts";
import { parseIp, parseNet } from "./ip.ts";
import { typeToString } from "./types.ts";
import { Interval, Timestamp, type Value } from "./values.ts";

Deno.test("compareValues() orders each kind of value", () => {
  const ordered: [Value, Value][] = [
    [1, 2],
    [-1.5, 1],
    [2, NaN],
    ["B", "a"],
    ["a", "ab"],
    [false, true],
    [new Timestamp(1), new Timestamp(2)],
    [new Interval(-5), new Interval(5)],
    [parseIp("255.255.255.255"), parseIp("::1")],
    [parseIp("10.0.0.1"), parseIp("10.0.0.2")],
    [parseIp("::1"), parseIp("::2")],
    [parseNet("10.0.0.0/8"), parseNet("10.0.0.0/16")],
    [[1, 2], [1, 3]],
    [[1], [1, 0]],
    [{ a: 1, b: 1 }, { a: 1, b: 2 }],
  ];
  for (const [a, b] of ordered) {
    assert.ok(compareValues(a, b) < 0, `${String(a)} < ${String(b)}`);
    assert.ok(compareValues(b, a) > 0, `${String(b)} > ${String(a)}`);
    assert.equal(compareValues(a, a), 0);
  }
});

Deno.test("valuesEqual() compares by value, not identity", () => {
  assert.ok(valuesEqual(new Timestamp(5), new Timestamp(5)));
  assert.ok(valuesEqual(parseIp("2001:db8::1"), parseIp("2001:DB8:0::1")));
  assert.ok(valuesEqual([1, "a"], [1, "a"]));
  assert.ok(valuesEqual(null, null));
  assert.ok(!valuesEqual(new Timestamp(5), new Interval(5)));
  assert.ok(!valuesEqual(1, "1"));
});

Deno.test("valueKey() is equal exactly for equal values", () => {
  const values: Value[] = [
    1,
    "1",
    true,
    "true",
    null,
    new Timestamp(1),
    new Interval(1),
    parseIp("0.0.0.1"),
    parseNet("0.0.0.1/32"),
    parseIp("::1"),
    "\u0000t1",
    [1],
    ["1"],
    [1, 2],
    { a: 1 },
    { a: "1" },
  ];
  const keys = values.map(valueKey);
  assert.equal(new Set(keys).size, values.length);
  assert.equal(valueKey(new Timestamp(1)), valueKey(new Timestamp(1)));
  assert.equal(valueKey([parseIp("::1")]), valueKey([parseIp("0::1")]));
  assert.notEqual(combineKeys(["a;", "b"]), combineKeys(["a", ";b"]));
  assert.notEqual(combineKeys([1, null]), combineKeys([null, 1]));
  assert.notEqual(combineKeys(["1"]), combineKeys([1]));
});

Deno.test("combineKeys() keeps ('as', 'b') and ('a', 'sb') apart, and every other split", () => {
  assert.notEqual(combineKeys(["as", "b"]), combineKeys(["a", "sb"]));
  const splits = ["", "a", "as", "asb", "s", "sb", "b"].flatMap((x) =>
    ["", "a", "as", "asb", "s", "sb", "b"].map((y) => [x, y])
  );
  const keys = splits.map(combineKeys);
  assert.equal(new Set(keys).size, splits.length);
  assert.notEqual(valueKey(["as", "b"]), valueKey(["a", "sb"]));
  assert.notEqual(valueKey({ x: "as", y: "b" }), valueKey({ x: "a", y: "sb" }));
});

Deno.test("typeOfValue() names INTEGER, LONG and DOUBLE by value and widens arrays", () => {
  const cases: [Value, string][] = [
    [5, "INTEGER"],
    [2147483648, "LONG"],
    [2.5, "DOUBLE"],
    ["x", "STRING"],
    [true, "BOOLEAN"],
    [new Timestamp(0), "TIMESTAMP"],
    [new Interval(0), "INTERVAL"],
    [parseIp("1.2.3.4"), "IPADDR"],
    [parseNet("1.2.3.0/24"), "IPNET"],
    [[1, 2.5], "ARRAY<DOUBLE>"],
    [[1, null], "ARRAY<INTEGER>"],
    [{ a: 1, b: null }, "TUPLE<a INTEGER, b ?NULL>"],
    [null, "NULL"],
  ];
  for (const [v, want] of cases) assert.equal(typeToString(typeOfValue(v)), want);
});

Deno.test("estimateBytes() grows with the size of the value", () => {
  assert.ok(estimateBytes("x".repeat(1000)) > estimateBytes("x"));
  assert.ok(estimateBytes([1, 2, 3, 4]) > estimateBytes([1]));
  assert.ok(estimateBytes({ a: "x".repeat(100) }) > 200);
  assert.ok(estimateBytes(null) > 0);
});
