import assert from "node:assert/strict";
import { Timestamp } from "../values/values.ts";
import { compilePattern } from "./compile_pattern.ts";
import { type FileClock, inferYear } from "./year_inference.ts";

const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0) =>
  Date.UTC(y, mo - 1, d, h, mi, s, ms);

/** `Dec 31 ...` read as if of `year`. */
const dec31 = (year: number) => utc(year, 12, 31, 23, 59);
const jan1 = (year: number) => utc(year, 1, 1, 0, 0, 7);

const clock = (pathTime: number | null, modified: number | null): FileClock => ({
  pathTime,
  modified,
  version: 1,
});

Deno.test("a year-less time takes the year of the file's modification time", () => {
  assert.equal(inferYear(jan1, clock(null, utc(2025, 1, 15)), "UTC"), jan1(2025));
  assert.equal(
    inferYear((y) => utc(y, 7, 1), clock(null, utc(2024, 9, 1)), "UTC"),
    utc(2024, 7, 1),
  );
});

Deno.test("a December line in a file modified in January is of the year before", () => {
  assert.equal(inferYear(dec31, clock(null, utc(2025, 1, 15)), "UTC"), dec31(2024));
  // Up to a day after the modification still counts as the same year (clocks differ a little).
  assert.equal(
    inferYear((y) => utc(y, 1, 16, 6), clock(null, utc(2025, 1, 15, 12)), "UTC"),
    utc(2025, 1, 16, 6),
  );
});

Deno.test("a path time wins over the modification time, with the turn of the year both ways", () => {
  const modified = utc(2030, 6, 1);
  assert.equal(inferYear(jan1, clock(utc(2025, 1, 2), modified), "UTC"), jan1(2025));
  assert.equal(inferYear(dec31, clock(utc(2025, 1, 2), modified), "UTC"), dec31(2024));
  assert.equal(inferYear(jan1, clock(utc(2024, 12, 31), modified), "UTC"), jan1(2025));
  assert.equal(
    inferYear((y) => utc(y, 8, 1), clock(utc(2024, 1, 1), modified), "UTC"),
    utc(2024, 8, 1),
  );
});

Deno.test("the year is counted in the query's time zone", () => {
  // 2024-12-31 23:30 UTC is already 2025 in Berlin: a January line is of 2025 there.
  const pathTime = utc(2024, 12, 31, 23, 30);
  assert.equal(inferYear(jan1, clock(pathTime, 0), "UTC"), jan1(2025));
  assert.equal(inferYear(jan1, clock(pathTime, 0), "Europe/Berlin"), jan1(2025));
  assert.equal(
    inferYear((y) => utc(y, 3, 1), clock(pathTime, 0), "Europe/Berlin"),
    utc(2025, 3, 1),
  );
  assert.equal(inferYear((y) => utc(y, 3, 1), clock(pathTime, 0), "UTC"), utc(2024, 3, 1));
});

Deno.test("with no file the year is the current one, never in the future", () => {
  const now = Date.now();
  const t = inferYear((y) => utc(y, 1, 1), clock(null, null), "UTC")!;
  assert.ok(t <= now && t > now - 366 * 86_400_000);
});

function parseWith(
  pattern: string,
  text: string,
  file: { pathTime: number | null; modified: number },
) {
  const r = compilePattern(pattern, { timeZone: "UTC" });
  if (!r.ok) throw new Error(r.message);
  const extractor = r.pattern.makeExtractor(r.pattern.fields.map((f) => f.name));
  extractor.setFile(file);
  const rows: unknown[] = [];
  extractor.extractAll(text, 0, text.length, (row) => rows.push(row));
  return rows;
}

Deno.test("SYSLOGTIME reads space-padded, zero-padded and two-digit days, with a fraction", () => {
  const rows = parseWith(
    "SYSLOGTIME:t ' ' WORD:w EOL",
    "Jul  1 09:10:11 a\nJul 01 09:10:11 b\nJul 10 09:10:11.250 c\nFeb 29 00:00:00 d\nFoo 10 09:10:11 e\n",
    { pathTime: null, modified: utc(2024, 12, 1) },
  );
  assert.deepEqual(rows, [
    { t: new Timestamp(utc(2024, 7, 1, 9, 10, 11)), w: "a" },
    { t: new Timestamp(utc(2024, 7, 1, 9, 10, 11)), w: "b" },
    { t: new Timestamp(utc(2024, 7, 10, 9, 10, 11, 250)), w: "c" },
    { t: new Timestamp(utc(2024, 2, 29)), w: "d" },
    { t: null, w: "e" },
  ]);
});

Deno.test("a TIMESTAMP format without a year infers it per file (Android's logcat time)", () => {
  const pattern = "TIMESTAMP('MM-dd HH:mm:ss.SSS'):t ' ' LD:msg EOL";
  const text = "12-31 23:59:59.120 before\n01-01 00:00:00.250 after\n";
  const january = parseWith(pattern, text, { pathTime: null, modified: utc(2025, 1, 3) });
  assert.deepEqual(january, [
    { t: new Timestamp(utc(2024, 12, 31, 23, 59, 59, 120)), msg: "before" },
    { t: new Timestamp(utc(2025, 1, 1, 0, 0, 0, 250)), msg: "after" },
  ]);
  // The same text in another file: the cache of the last conversion does not leak the year.
  const later = parseWith(pattern, text, { pathTime: utc(2022, 12, 31), modified: 0 });
  assert.deepEqual(later, [
    { t: new Timestamp(utc(2022, 12, 31, 23, 59, 59, 120)), msg: "before" },
    { t: new Timestamp(utc(2023, 1, 1, 0, 0, 0, 250)), msg: "after" },
  ]);
});

Deno.test("SYSLOG5424 reads an RFC 3339 time and takes '-' as no time", () => {
  const rows = parseWith(
    "SYSLOG5424:t ' ' WORD:w EOL",
    "2024-08-24T05:14:15.000003-07:00 a\n- b\n",
    { pathTime: null, modified: 0 },
  );
  assert.deepEqual(rows, [{ t: new Timestamp(utc(2024, 8, 24, 12, 14, 15)), w: "a" }, {
    t: null,
    w: "b",
  }]);
});
