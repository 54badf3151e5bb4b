import assert from "node:assert/strict";
import { parseLiteralOfType } from "./literal.ts";
import { arrayOf, scalar, type Type } from "./types.ts";
import { toJsonValue } from "../render/render.ts";

Deno.test("parseLiteralOfType() reads view arguments of each type", () => {
  const cases: [string, Type, unknown][] = [
    ["10.0.0.1", scalar("IPADDR"), "10.0.0.1"],
    ["2001:db8::1", scalar("IPADDR"), "2001:db8::1"],
    ["10.0.0.0/8", scalar("IPNET"), "10.0.0.0/8"],
    ["2024-01-01T00:00:00Z", scalar("TIMESTAMP"), "2024-01-01T00:00:00.000+00:00"],
    ["2024-01-01 01:00:00", scalar("TIMESTAMP"), "2024-01-01T01:00:00.000+00:00"],
    ["5", scalar("INTEGER"), 5],
    ["-5", scalar("LONG"), -5],
    ["9007199254740991", scalar("LONG"), 9007199254740991],
    ["2.5e3", scalar("DOUBLE"), 2500],
    ["TRUE", scalar("BOOLEAN"), true],
    ["15 min", scalar("INTERVAL"), 900000],
    [" as is ", scalar("STRING"), " as is "],
    ['["a","b"]', arrayOf(scalar("STRING")), ["a", "b"]],
  ];
  for (const [text, type, want] of cases) {
    const r = parseLiteralOfType(text, type, "UTC");
    assert.ok(r.ok, `${text}: ${!r.ok && r.message}`);
    assert.deepEqual(toJsonValue(r.value, { timeZone: "UTC" }), want, text);
  }
});

Deno.test("parseLiteralOfType() refuses text that is not of the type, naming both", () => {
  const cases: [string, Type][] = [
    ["10.0.0.256", scalar("IPADDR")],
    ["10.0.0.0/40", scalar("IPNET")],
    ["yesterday", scalar("TIMESTAMP")],
    ["5.5", scalar("INTEGER")],
    ["3000000000", scalar("INTEGER")],
    ["five", scalar("DOUBLE")],
    ["yes", scalar("BOOLEAN")],
    ["15 parsecs", scalar("INTERVAL")],
    ["[1,", arrayOf(scalar("INTEGER"))],
  ];
  for (const [text, type] of cases) {
    const r = parseLiteralOfType(text, type, "UTC");
    assert.ok(!r.ok, text);
    assert.match(
      r.message,
      new RegExp(`'${RegExp.escape(text)}' is not a literal of type`),
    );
    assert.ok(r.message.includes(type.kind), r.message);
  }
});
