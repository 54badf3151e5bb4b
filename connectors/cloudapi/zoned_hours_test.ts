import assert from "node:assert/strict";
import { dayStart, hourFields, hoursBetween, hourStart } from "./zoned_hours.ts";

const H = 3_600_000;

Deno.test("hourStart() cuts at the local hour, also in zones a quarter off the hour", () => {
  const t = Date.UTC(2026, 2, 10, 10, 50, 12, 345);
  assert.equal(hourStart(t, "UTC"), Date.UTC(2026, 2, 10, 10));
  // Kathmandu is UTC+05:45: its hours start at :15 UTC.
  assert.equal(hourStart(t, "Asia/Kathmandu"), Date.UTC(2026, 2, 10, 10, 15));
});

Deno.test("hoursBetween() gives 23 local hours on a spring-forward day", () => {
  const zone = "Europe/Berlin";
  const from = Date.UTC(2026, 2, 28, 23); // 2026-03-29 00:00 local
  const to = Date.UTC(2026, 2, 29, 22); // 2026-03-30 00:00 local
  const hours = hoursBetween(from, to, zone);
  assert.equal(hours.length, 23);
  assert.deepEqual(hours.slice(1, 3).map((h) => hourFields(h, zone).HH), ["01", "03"]);
});

Deno.test("dayStart() finds local midnight from any hour of the day", () => {
  const zone = "America/New_York";
  const hour = Date.UTC(2026, 2, 10, 20); // 16:00 local (EDT)
  assert.equal(dayStart(hour, zone), Date.UTC(2026, 2, 10, 4));
});

Deno.test("zoned hours work in every zone the engine accepts, the spelling Z included", () => {
  const t = Date.UTC(2026, 2, 10, 10, 30);
  for (const zone of ["Z", "utc", "Etc/UTC"]) {
    assert.equal(hourStart(t, zone), Date.UTC(2026, 2, 10, 10), zone);
    assert.equal(dayStart(hourStart(t, zone), zone), Date.UTC(2026, 2, 10), zone);
    assert.deepEqual(hourFields(t - 30 * 60_000, zone), {
      yyyy: "2026",
      MM: "03",
      dd: "10",
      HH: "10",
    });
  }
  assert.equal(hoursBetween(t, t + 2 * H, "Z").length, 3);
});

Deno.test("dayStart() finds local midnight from the last hour of a 25-hour fall-back day", () => {
  // Europe/Berlin, 27 October 2024: midnight is 22:00 UTC the day before (CEST), 23:00 local
  // is 22:00 UTC (CET); the day has 25 hours.
  const midnight = Date.UTC(2024, 9, 26, 22);
  const hours = hoursBetween(midnight, Date.UTC(2024, 9, 27, 23), "Europe/Berlin");
  assert.equal(hours.length, 25);
  for (const h of hours) {
    assert.equal(dayStart(h, "Europe/Berlin"), midnight, new Date(h).toISOString());
  }
  assert.equal(dayStart(Date.UTC(2024, 9, 27, 23), "Europe/Berlin"), Date.UTC(2024, 9, 27, 23));
});

Deno.test("hoursBetween() re-aligns to the zone's hours across a half-hour shift (Lord Howe Island)", () => {
  const zone = "Australia/Lord_Howe";
  // 6 October 2024, 02:00 local (+10:30) becomes 02:30 (+11:00); 7 April 2024, 02:00 (+11:00)
  // becomes 01:30 (+10:30). The hours are those that hourStart() gives the span's instants.
  for (
    const [from, to] of [
      [Date.UTC(2024, 9, 5, 10), Date.UTC(2024, 9, 5, 20)],
      [Date.UTC(2024, 3, 6, 10), Date.UTC(2024, 3, 6, 20)],
    ] as const
  ) {
    const starts = new Set<number>();
    for (let t: number = from; t < to; t += 60_000) starts.add(hourStart(t, zone));
    const hours = hoursBetween(from, to, zone);
    assert.deepEqual(hours, [...starts].sort((a, b) => a - b), new Date(from).toISOString());
    // Before the shift and after it, local hours start at :30 and at :00 UTC.
    assert.deepEqual([...new Set(hours.map((h) => new Date(h).getUTCMinutes()))].sort(), [0, 30]);
  }
});

Deno.test("hourFields() gives the local hour's fields, zero-padded", () => {
  assert.deepEqual(hourFields(Date.UTC(2024, 0, 5, 3), "UTC"), {
    yyyy: "2024",
    MM: "01",
    dd: "05",
    HH: "03",
  });
  assert.deepEqual(hourFields(Date.UTC(2024, 0, 4, 23), "Asia/Kolkata").dd, "05");
  assert.deepEqual(hourFields(Date.UTC(999, 8, 9, 9), "UTC").yyyy, "0999");
});

Deno.test("on Lord Howe Island's spring-forward day, each local hour is listed once, the shortened one from the shift", () => {
  const zone = "Australia/Lord_Howe";
  // 6 October 2024: 01:00 local is 14:30 UTC (+10:30); at 02:00 (15:30 UTC) clocks go to 02:30.
  assert.equal(hourStart(Date.UTC(2024, 9, 5, 15, 45), zone), Date.UTC(2024, 9, 5, 15, 30));
  assert.equal(hourStart(Date.UTC(2024, 9, 5, 15, 15), zone), Date.UTC(2024, 9, 5, 14, 30));
  const midnight = Date.UTC(2024, 9, 5, 13, 30);
  const hours = hoursBetween(midnight, Date.UTC(2024, 9, 6, 13), zone);
  assert.deepEqual(hours.map((h) => hourFields(h, zone).HH), [
    ...Array.from({ length: 24 }, (_, i) => String(i).padStart(2, "0")),
  ]);
  for (const h of hours) {
    assert.equal(hourStart(h, zone), h, new Date(h).toISOString());
    assert.equal(dayStart(h, zone), midnight);
  }
  assert.equal(hours[3]! - hours[2]!, 30 * 60_000, "hour 02 lasts half an hour");
});
