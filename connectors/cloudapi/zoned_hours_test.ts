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
