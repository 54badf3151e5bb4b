import assert from "node:assert/strict";
import { formatInterval, intervalMillis, parseInterval } from "./interval.ts";

const GOOD: readonly [string, number][] = [
  ["5 min", 300_000],
  ["15min", 900_000],
  ["1 h 30 min", 5_400_000],
  ["500 ms", 500],
  ["500ms", 500],
  ["10 sec", 10_000],
  ["1 s", 1_000],
  ["2 seconds", 2_000],
  ["24 h", 86_400_000],
  ["7 days", 604_800_000],
  ["1 d", 86_400_000],
  ["2 weeks", 1_209_600_000],
  ["1 w", 604_800_000],
  ["1.5 h", 5_400_000],
  ["0.5 s", 500],
  ["0 ms", 0],
  ["  3 min  ", 180_000],
  ["1 MIN", 60_000],
  ["1 Hour 1 minute 1 second", 3_661_000],
  ["1 m", 60_000],
];

const BAD: readonly [string, RegExp][] = [
  ["", /empty interval/],
  ["   ", /empty interval/],
  ["5", /not an interval/],
  ["min", /not an interval/],
  ["5 parsecs", /unknown time unit 'parsecs'/],
  ["-5 min", /not an interval/],
  ["5 min x", /not an interval/],
  ["five minutes", /not an interval/],
  ["1,5 h", /not an interval/],
  ["1e3 ms", /unknown time unit 'e'/],
  ["99999999999999999999 weeks", /too large/],
];

Deno.test("parseInterval() reads every good interval of the table", () => {
  for (const [text, millis] of GOOD) {
    assert.deepEqual(parseInterval(text), { ok: true, millis, whole: true }, text);
  }
});

Deno.test("parseInterval() tells a fraction of a millisecond, rounded, from whole ones", () => {
  for (const [text, millis] of [["1.5 ms", 2], ["0.0005 s", 1], ["1 s 0.25 ms", 1000]] as const) {
    assert.deepEqual(parseInterval(text), { ok: true, millis, whole: false }, text);
  }
  for (const text of ["0.3 s", "4.35 s", "0.001 s", "1.1 min", "0.007 s"]) {
    const r = parseInterval(text);
    assert.ok(r.ok && r.whole, text);
  }
});

Deno.test("parseInterval() refuses every bad interval of the table with a message", () => {
  for (const [text, message] of BAD) {
    const r = parseInterval(text);
    assert.equal(r.ok, false, text);
    if (!r.ok) assert.match(r.message, message, text);
  }
});

Deno.test("formatInterval() writes what parseInterval() reads back", () => {
  for (const millis of [0, 1, 999, 1_000, 61_000, 5_400_000, 90_061_001]) {
    assert.equal(intervalMillis(formatInterval(millis)), millis);
  }
  assert.equal(formatInterval(5_400_000), "1 h 30 min");
});

Deno.test("intervalMillis() throws on a bad constant", () => {
  assert.throws(() => intervalMillis("soon"), /not an interval/);
});
