import assert from "node:assert/strict";
import { spanOverlaps, timeSpan } from "./path_time.ts";

const utc = (s: string) => Date.parse(s);

Deno.test("timeSpan() spans the finest field the path names", () => {
  assert.deepEqual(timeSpan({ yyyy: 2024 }, "UTC"), {
    start: utc("2024-01-01T00:00:00Z"),
    end: utc("2025-01-01T00:00:00Z"),
  });
  assert.deepEqual(timeSpan({ yyyy: 2024, MM: 12 }, "UTC"), {
    start: utc("2024-12-01T00:00:00Z"),
    end: utc("2025-01-01T00:00:00Z"),
  });
  assert.deepEqual(timeSpan({ yyyy: 2024, MM: 2, dd: 29, HH: 23, mm: 59 }, "UTC"), {
    start: utc("2024-02-29T23:59:00Z"),
    end: utc("2024-03-01T00:00:00Z"),
  });
});

Deno.test("timeSpan() reads the fields in the query's zone", () => {
  assert.deepEqual(timeSpan({ yyyy: 2024, MM: 5, dd: 17 }, "Europe/Berlin"), {
    start: utc("2024-05-16T22:00:00Z"),
    end: utc("2024-05-17T22:00:00Z"),
  });
});

Deno.test("timeSpan() ignores fields that do not follow on from the year", () => {
  assert.equal(timeSpan({ MM: 5 }, "UTC"), null);
  assert.deepEqual(timeSpan({ yyyy: 2024, dd: 17 }, "UTC"), timeSpan({ yyyy: 2024 }, "UTC"));
});

Deno.test("spanOverlaps() keeps a span that holds any time in [from, to)", () => {
  const may = timeSpan({ yyyy: 2024, MM: 5 }, "UTC");
  assert.equal(spanOverlaps(may, utc("2024-05-31T23:00:00Z")), true);
  assert.equal(spanOverlaps(may, utc("2024-06-01T00:00:00Z")), false);
  assert.equal(spanOverlaps(may, undefined, utc("2024-05-01T00:00:01Z")), true);
  // `to` is exclusive: the month that starts at `to` holds no time before it.
  assert.equal(spanOverlaps(may, undefined, utc("2024-05-01T00:00:00Z")), false);
  assert.equal(spanOverlaps(may, undefined, utc("2024-04-30T23:59:59Z")), false);
  assert.equal(spanOverlaps(null, utc("2030-01-01T00:00:00Z")), true);
});
