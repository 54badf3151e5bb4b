import assert from "node:assert/strict";
import { parseIp, parseNet } from "../values/ip.ts";
import { arrayOf, scalar, type Type, typeToString } from "../values/types.ts";
import { Interval, Timestamp, type Value } from "../values/values.ts";
import { commonType } from "./common_type.ts";
import { likeMatcher } from "./like.ts";
import { type ArithOp, arithValues, compareAny } from "./operators.ts";
import { cpuStopwatch } from "../../tests/support/thread_cpu.ts";

Deno.test("arithValues() covers numbers, timestamps and intervals, undefined on a clash", () => {
  const cases: [ArithOp, Value, Value, Value | undefined][] = [
    ["+", 1, 2, 3],
    ["/", 1, 4, 0.25],
    ["/", 1, 0, null],
    ["%", 7, 0, null],
    ["-", 1, null, null],
    ["+", new Timestamp(10), new Interval(5), new Timestamp(15)],
    ["+", new Interval(5), new Timestamp(10), new Timestamp(15)],
    ["-", new Timestamp(10), new Interval(5), new Timestamp(5)],
    ["-", new Timestamp(10), new Timestamp(4), new Interval(6)],
    ["*", new Interval(10), 1.5, new Interval(15)],
    ["*", 2, new Interval(10), new Interval(20)],
    ["/", new Interval(10), new Interval(4), 2.5],
    ["+", "a", "b", undefined],
    ["+", new Timestamp(1), new Timestamp(1), undefined],
    ["*", new Timestamp(1), 2, undefined],
  ];
  for (const [op, a, b, want] of cases) {
    assert.deepEqual(arithValues(op, a, b), want, `${String(a)} ${op} ${String(b)}`);
  }
});

Deno.test("compareAny() reads strings as the other side's kind", () => {
  const t = Date.UTC(2024, 4, 1, 12);
  assert.equal(compareAny(new Timestamp(t), "2024-05-01T12:00:00Z", "UTC"), 0);
  assert.ok(compareAny("2024-05-01 13:00:00", new Timestamp(t), "UTC")! > 0);
  assert.equal(compareAny("2024-05-01 14:00:00", new Timestamp(t), "Europe/Berlin"), 0);
  assert.equal(compareAny(parseIp("10.0.0.1"), "10.0.0.1", "UTC"), 0);
  assert.equal(compareAny(parseNet("10.0.0.0/8"), "10.0.0.0/8", "UTC"), 0);
  assert.equal(compareAny(new Interval(60_000), "1 min", "UTC"), 0);
  assert.equal(compareAny(1, "1", "UTC"), undefined);
  assert.equal(compareAny(new Timestamp(t), "not a time", "UTC"), undefined);
});

Deno.test("likeMatcher() treats % and _ as wildcards and everything else literally", () => {
  const cases: [string, string, boolean][] = [
    ["adm%", "admin", true],
    ["adm%", "xadmin", false],
    ["a_c", "abc", true],
    ["a_c", "abbc", false],
    ["%.log", "app.log", true],
    ["%.log", "applog", false],
    ["(x)+", "(x)+", true],
    ["100\\%", "100%", true],
    ["100\\%", "1000", false],
    ["%", "line one\nline two", true],
    ["a-b[c]", "a-b[c]", true],
    ["\\_x", "_x", true],
    ["\\_x", "ax", false],
    ["x_", "x😀", true], // one character, not one UTF-16 unit
    ["^$|a{2}", "^$|a{2}", true],
    ["a_c", "a\u{1F600}c", true],
    ["%a%b", "xaxxb", true],
    ["%a%b", "xbxa", false],
  ];
  for (const [pattern, text, want] of cases) {
    assert.equal(likeMatcher(pattern)(text), want, `${text} like ${pattern}`);
  }
});

Deno.test("likeMatcher() answers a pattern that backtracks exponentially in a RegExp at once", () => {
  const text = "a".repeat(50_000);
  const started = cpuStopwatch();
  assert.equal(likeMatcher("%a%a%a%a%a%a%a%b")(text), false);
  assert.equal(likeMatcher("%a_a%a_a%a_a%a_%b")(text), false);
  assert.ok(started() < 500, `${started()} ms`);
});

Deno.test("commonType() widens numbers, lets NULL fit and refuses a clash", () => {
  const s = (k: string) => scalar(k as "INTEGER");
  const cases: [Type[], string | null][] = [
    [[s("INTEGER"), s("DOUBLE")], "DOUBLE"],
    [[s("INTEGER"), s("LONG")], "LONG"],
    [[{ kind: "NULL" }, s("STRING")], "STRING"],
    [[s("STRING"), { kind: "ANY" }], "ANY"],
    [[arrayOf(s("INTEGER")), arrayOf(s("DOUBLE"))], "ARRAY<DOUBLE>"],
    [[s("IPADDR"), s("STRING")], null],
    [[s("TIMESTAMP"), s("INTERVAL")], null],
  ];
  for (const [types, want] of cases) {
    const got = commonType(types);
    assert.equal(got === null ? null : typeToString(got), want, types.map(typeToString).join(","));
  }
});
