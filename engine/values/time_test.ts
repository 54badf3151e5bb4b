import assert from "node:assert/strict";
import {
  fromLocalParts,
  isValidZone,
  localParts,
  truncate,
  truncatedMillis,
  zoneOffsetMillis,
} from "./time.ts";
import { compileTimestampFormatter, formatIso, formatLocal } from "./time_format.ts";
import { parseHttpDate, parseIso8601, parseTimestamp } from "./time_parse.ts";
import { compileTimestampParser } from "./time_pattern.ts";

const HOUR = 3_600_000;
const DAY = 86_400_000;

Deno.test("parseTimestamp() reads the forms of the language reference", () => {
  const cases: [string, string, string | null][] = [
    ["2024-05-01 13:00:00", "UTC", "2024-05-01T13:00:00.000Z"],
    ["2024-05-01 13:00:00", "Europe/Berlin", "2024-05-01T11:00:00.000Z"],
    ["2024-05-01 13:00:00.250", "UTC", "2024-05-01T13:00:00.250Z"],
    ["2024-05-01 13:00:00.25", "UTC", "2024-05-01T13:00:00.250Z"],
    ["2024-05-01T13:00:00.250Z", "Europe/Berlin", "2024-05-01T13:00:00.250Z"],
    ["2024-05-01 13:00:00 +0200", "UTC", "2024-05-01T11:00:00.000Z"],
    ["2024-05-01T13:00:00+02:00", "UTC", "2024-05-01T11:00:00.000Z"],
    ["2024-05-01T13:00:00-05", "UTC", "2024-05-01T18:00:00.000Z"],
    ["2024-05-01 13:00", "UTC", "2024-05-01T13:00:00.000Z"],
    ["2024-05-01", "America/New_York", "2024-05-01T04:00:00.000Z"],
    ["  2024-05-01  ", "UTC", "2024-05-01T00:00:00.000Z"],
    ["2024-02-30", "UTC", null],
    ["2024-05-01 25:00:00", "UTC", null],
    ["2024-05-01 13:00:00 CEST", "UTC", "2024-05-01T11:00:00.000Z"],
    ["2024-05-01 13:00:00 IST", "UTC", null],
    ["yesterday", "UTC", null],
    ["", "UTC", null],
  ];
  for (const [text, zone, want] of cases) {
    const got = parseTimestamp(text, zone);
    assert.equal(got === null ? null : new Date(got).toISOString(), want, `${text} in ${zone}`);
  }
  assert.equal(parseIso8601("2024-05-01T13:00:00Z", "UTC"), Date.UTC(2024, 4, 1, 13));
});

Deno.test("parseTimestamp() handles the DST gap and overlap in Europe/Berlin", () => {
  // 02:30 does not exist on 2024-03-31: it moves forward by the gap, to 03:30 CEST.
  assert.equal(
    formatIso(parseTimestamp("2024-03-31 02:30:00", "Europe/Berlin")!, "Europe/Berlin"),
    "2024-03-31T03:30:00.000+02:00",
  );
  // 02:30 happens twice on 2024-10-27: the earlier one (CEST) wins.
  assert.equal(
    formatIso(parseTimestamp("2024-10-27 02:30:00", "Europe/Berlin")!, "Europe/Berlin"),
    "2024-10-27T02:30:00.000+02:00",
  );
  assert.equal(
    formatIso(parseTimestamp("2024-10-27 03:30:00", "Europe/Berlin")!, "Europe/Berlin"),
    "2024-10-27T03:30:00.000+01:00",
  );
});

Deno.test("zoneOffsetMillis() follows America/New_York across both DST changes", () => {
  assert.equal(zoneOffsetMillis(Date.UTC(2024, 2, 10, 6, 59), "America/New_York"), -5 * HOUR);
  assert.equal(zoneOffsetMillis(Date.UTC(2024, 2, 10, 7, 0), "America/New_York"), -4 * HOUR);
  assert.equal(zoneOffsetMillis(Date.UTC(2024, 10, 3, 5, 59), "America/New_York"), -4 * HOUR);
  assert.equal(zoneOffsetMillis(Date.UTC(2024, 10, 3, 6, 0), "America/New_York"), -5 * HOUR);
  assert.equal(zoneOffsetMillis(Date.UTC(2024, 0, 1), "Asia/Kolkata"), 5.5 * HOUR);
  assert.equal(zoneOffsetMillis(Date.UTC(2024, 0, 1), "UTC"), 0);
});

Deno.test("localParts() and fromLocalParts() agree with Date in many zones", () => {
  const zones = [
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "Asia/Kathmandu",
    "Australia/Lord_Howe",
  ];
  const pad = (n: number) => String(n).padStart(2, "0");
  for (const zone of zones) {
    const intl = new Intl.DateTimeFormat("en-CA", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    for (let ms = Date.UTC(2023, 0, 1); ms < Date.UTC(2025, 0, 1); ms += 7 * HOUR + 13 * 60_000) {
      const p = localParts(ms, zone);
      const mine = `${p.year}-${pad(p.month)}-${pad(p.day)}, ${pad(p.hour)}:${pad(p.minute)}:${
        pad(p.second)
      }`;
      assert.equal(mine, intl.format(ms), `${zone} ${ms}`);
      const back = fromLocalParts(p, zone);
      // Only the repeated hour of an overlap maps back to the earlier instant.
      if (back !== ms) assert.ok(ms - back === HOUR || ms - back === HOUR / 2, `${zone} ${ms}`);
    }
  }
  assert.equal(localParts(Date.UTC(2024, 4, 5, 12), "UTC").weekday, 7); // a Sunday
  assert.equal(localParts(Date.UTC(2024, 4, 6, 12), "UTC").weekday, 1); // a Monday
  assert.equal(localParts(Date.UTC(1969, 11, 31, 23, 59, 59, 999), "UTC").year, 1969);
});

Deno.test("formatIso() always writes the numeric offset", () => {
  const ms = Date.UTC(2024, 4, 1, 13);
  assert.equal(formatIso(ms, "UTC"), "2024-05-01T13:00:00.000+00:00");
  assert.equal(formatIso(ms, "Europe/Berlin"), "2024-05-01T15:00:00.000+02:00");
  assert.equal(formatIso(ms, "America/New_York"), "2024-05-01T09:00:00.000-04:00");
  assert.equal(formatIso(Date.UTC(2024, 0, 1), "Europe/Berlin"), "2024-01-01T01:00:00.000+01:00");
  assert.equal(formatIso(ms + 7, "Asia/Kolkata"), "2024-05-01T18:30:00.007+05:30");
  assert.equal(formatLocal(ms, "Europe/Berlin"), "2024-05-01T15:00:00.000");
});

Deno.test("parseHttpDate() reads access-log dates and rejects near misses", () => {
  assert.equal(parseHttpDate("10/Oct/2024:13:55:36 +0000"), Date.UTC(2024, 9, 10, 13, 55, 36));
  assert.equal(parseHttpDate("10/Oct/2024:13:55:36 -0700"), Date.UTC(2024, 9, 10, 20, 55, 36));
  assert.equal(parseHttpDate("01/jan/2024:00:00:00 +0100"), Date.UTC(2023, 11, 31, 23));
  assert.equal(parseHttpDate("10/Foo/2024:13:55:36 +0000"), null);
  assert.equal(parseHttpDate("31/Feb/2024:13:55:36 +0000"), null);
  assert.equal(parseHttpDate("10/Oct/2024 13:55:36 +0000"), null);
  assert.equal(parseHttpDate("10/Oct/2024:13:55:36"), null);
});

Deno.test("compileTimestampParser() reads Java-style patterns", () => {
  const cases: [string, string, string, string | null][] = [
    ["yyyy-MM-dd HH:mm:ss.SSS", "2024-05-01 13:00:00.250", "UTC", "2024-05-01T13:00:00.250Z"],
    ["dd.MM.yyyy HH:mm", "01.05.2024 13:00", "Europe/Berlin", "2024-05-01T11:00:00.000Z"],
    ["yyyy-MM-dd'T'HH:mm:ssXXX", "2024-05-01T13:00:00+02:00", "UTC", "2024-05-01T11:00:00.000Z"],
    [
      "yyyy-MM-dd'T'HH:mm:ssXXX",
      "2024-05-01T13:00:00Z",
      "Europe/Berlin",
      "2024-05-01T13:00:00.000Z",
    ],
    ["dd/MMM/yyyy:HH:mm:ss Z", "10/Oct/2024:13:55:36 +0000", "UTC", "2024-10-10T13:55:36.000Z"],
    [
      "EEE, d MMM yyyy HH:mm:ss Z",
      "Wed, 1 May 2024 13:00:00 +0200",
      "UTC",
      "2024-05-01T11:00:00.000Z",
    ],
    ["MMMM d, yyyy h:mm a", "May 1, 2024 1:05 PM", "UTC", "2024-05-01T13:05:00.000Z"],
    ["yy-MM-dd", "24-05-01", "UTC", "2024-05-01T00:00:00.000Z"],
    ["yyyy-MM-dd", "2024-05-01 trailing", "UTC", null],
    ["yyyy-MM-dd", "2024-13-01", "UTC", null],
  ];
  for (const [pattern, text, zone, want] of cases) {
    const got = compileTimestampParser(pattern)(text, zone);
    assert.equal(got === null ? null : new Date(got).toISOString(), want, `${pattern} / ${text}`);
  }
  assert.throws(() => compileTimestampParser("yyyy-MM-dd Q"), /unknown letter 'Q'/);
});

Deno.test("compileTimestampFormatter() writes Java-style patterns in a zone", () => {
  const ms = Date.UTC(2024, 4, 1, 13, 5, 9, 42);
  const cases: [string, string, string][] = [
    ["yyyy-MM-dd HH:mm", "UTC", "2024-05-01 13:05"],
    ["yyyy-MM-dd HH:mm:ss.SSS Z", "Europe/Berlin", "2024-05-01 15:05:09.042 +0200"],
    ["yyyy-MM-dd'T'HH:mm:ssXXX", "UTC", "2024-05-01T13:05:09Z"],
    ["yyyy-MM-dd'T'HH:mm:ssXXX", "America/New_York", "2024-05-01T09:05:09-04:00"],
    ["EEE dd MMM yy h:mm a", "UTC", "Wed 01 May 24 1:05 PM"],
    ["EEEE, MMMM d", "UTC", "Wednesday, May 1"],
    ["'at' HH 'o''clock'", "UTC", "at 13 o'clock"],
  ];
  for (const [pattern, zone, want] of cases) {
    assert.equal(compileTimestampFormatter(pattern)(ms, zone), want, pattern);
  }
});

Deno.test("truncate() uses local days and Monday weeks, and epoch units below a day", () => {
  const berlin = "Europe/Berlin";
  const ms = Date.UTC(2024, 4, 1, 23, 30); // 2024-05-02 01:30 in Berlin
  assert.equal(formatIso(truncate(ms, DAY, berlin), berlin), "2024-05-02T00:00:00.000+02:00");
  assert.equal(formatIso(truncate(ms, 7 * DAY, berlin), berlin), "2024-04-29T00:00:00.000+02:00");
  assert.equal(truncate(ms, HOUR, berlin), Date.UTC(2024, 4, 1, 23));
  assert.equal(truncate(ms + 123, 15 * 60_000, "UTC"), Date.UTC(2024, 4, 1, 23, 30));
  // The day of the spring-forward change is 23 hours long and starts at local midnight.
  const dst = Date.UTC(2024, 2, 31, 20);
  assert.equal(formatIso(truncate(dst, DAY, berlin), berlin), "2024-03-31T00:00:00.000+01:00");
  assert.equal(
    formatIso(truncate(Date.UTC(2024, 10, 3, 12), DAY, "America/New_York"), "America/New_York"),
    "2024-11-03T00:00:00.000-04:00",
  );
});

Deno.test("isValidZone() knows IANA zones and refuses others", () => {
  assert.ok(isValidZone("Europe/Berlin"));
  assert.ok(isValidZone("UTC"));
  assert.ok(!isValidZone("Mars/Olympus_Mons"));
  assert.ok(!isValidZone(""));
});

Deno.test("isValidZone() also takes the UTC spellings, and refuses blank and over-long names", () => {
  for (const zone of ["Z", "utc", "Etc/UTC", "GMT", "+01:00"]) assert.ok(isValidZone(zone), zone);
  for (const zone of [" ", "Europe/Berlin ", "Europe/" + "x".repeat(70)]) {
    assert.ok(!isValidZone(zone), zone);
  }
});

Deno.test("truncatedMillis() truncates to the earlier millisecond, read through microseconds", () => {
  assert.equal(truncatedMillis(1320279566.447996), 1320279566447);
  assert.equal(truncatedMillis(1320279566.999999), 1320279566999);
  assert.equal(truncatedMillis(1730800801.987), 1730800801987);
  assert.equal(truncatedMillis(0.0005), 0);
  assert.equal(truncatedMillis(1.5, 1), 1);
  assert.equal(truncatedMillis(1320279566447996, 1e-3), 1320279566447);
  assert.equal(truncatedMillis(-0.0015), -2);
});
