import assert from "node:assert/strict";
import { parseTimestamp } from "./time_parse.ts";
import { compileTimestampParser } from "./time_pattern.ts";
import { compileTimestampFormatter } from "./time_format.ts";
import { AMBIGUOUS_ZONES, ambiguousZoneIn, ZONE_ABBREVIATIONS } from "./time_zones.ts";

const at = (iso: string) => Date.parse(iso);

Deno.test("timestamps name their zone by abbreviation or IANA name", () => {
  assert.equal(parseTimestamp("2024-07-01 13:00:00 CEST", "UTC"), at("2024-07-01T11:00:00Z"));
  assert.equal(parseTimestamp("2024-07-01 13:00:00 edt", "UTC"), at("2024-07-01T17:00:00Z"));
  assert.equal(parseTimestamp("2024-07-01T13:00:00 NPT", "UTC"), at("2024-07-01T07:15:00Z"));
  // An IANA name follows daylight saving: +02:00 in January, +03:00 in July.
  assert.equal(
    parseTimestamp("2024-01-15 13:00:00 Europe/Tallinn", "UTC"),
    at("2024-01-15T11:00:00Z"),
  );
  assert.equal(
    parseTimestamp("2024-07-15 13:00:00.250 Europe/Tallinn", "UTC"),
    at("2024-07-15T10:00:00.250Z"),
  );
  assert.equal(
    parseTimestamp("2024-07-15 13:00 America/Argentina/Salta", "UTC"),
    at("2024-07-15T16:00:00Z"),
  );
  for (const bad of ["IST", "CST", "Mars/Olympus", "XYZ", "Europe/"]) {
    assert.equal(parseTimestamp(`2024-07-01 13:00:00 ${bad}`, "UTC"), null, bad);
  }
  assert.match(ambiguousZoneIn("2024-07-01 13:00:00 ist") ?? "", /'IST' is ambiguous \(India/);
  assert.equal(ambiguousZoneIn("2024-07-01 13:00:00 CEST"), null);
  for (const name of AMBIGUOUS_ZONES.keys()) assert.ok(!ZONE_ABBREVIATIONS.has(name), name);
});

Deno.test("the pattern letters z and VV read a zone's name; format_time writes the zone", () => {
  const pg = compileTimestampParser("yyyy-MM-dd HH:mm:ss.SSS z");
  assert.equal(pg("2024-03-31 02:59:30.507 EET", "UTC"), at("2024-03-31T00:59:30.507Z"));
  assert.equal(pg("2024-03-31 04:00:02.881 EEST", "UTC"), at("2024-03-31T01:00:02.881Z"));
  assert.equal(pg("2024-03-31 04:00:02.881 IST", "UTC"), null);
  const iana = compileTimestampParser("yyyy-MM-dd'T'HH:mm:ssXXX'['VV']'");
  assert.equal(iana("2024-03-31T04:00:00+03:00[Europe/Tallinn]", "UTC"), at("2024-03-31T01:00Z"));
  const named = compileTimestampParser("dd/MM/yyyy HH:mm VV");
  assert.equal(named("31/03/2024 03:30 Europe/Berlin", "UTC"), at("2024-03-31T01:30:00Z"));
  assert.equal(
    compileTimestampFormatter("HH:mm z")(at("2024-07-01T10:00:00Z"), "Europe/Tallinn"),
    "13:00 Europe/Tallinn",
  );
});

Deno.test("S alone is an unpadded count of milliseconds, read and written", () => {
  const parse = compileTimestampParser("HH:mm:ss.S");
  assert.equal(parse("13:55:36.5", "UTC"), 13 * 3600_000 + 55 * 60_000 + 36_000 + 5);
  assert.equal(parse("13:55:36.50", "UTC"), 13 * 3600_000 + 55 * 60_000 + 36_000 + 50);
  assert.equal(parse("13:55:36.500", "UTC"), 13 * 3600_000 + 55 * 60_000 + 36_000 + 500);
  assert.equal(parse("13:55:36.5000", "UTC"), null);
  assert.equal(compileTimestampFormatter("ss.S")(36_005, "UTC"), "36.5");
  // SSS stays a fraction of three digits.
  assert.equal(compileTimestampParser("ss.SSS")("36.500", "UTC"), 36_500);
});
