import assert from "node:assert/strict";
import fc from "fast-check";
import { httpDateBytesMs, parseHttpDate } from "./time_parse.ts";

const encoder = new TextEncoder();
const digit = fc.integer({ min: 0, max: 9 }).map(String);
const two = fc.tuple(digit, digit).map(([a, b]) => a + b);
const letter = fc.constantFrom(..."ABCDEFGJLMNOPRSTUVYZabcdefgjlmnoprstuvyz");
/** A month: a real one in any case, or three letters that may be none. */
const month = fc.oneof(
  fc.constantFrom(..."Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(" "))
    .chain((m) =>
      fc.tuple(fc.boolean(), fc.boolean(), fc.boolean()).map(([a, b, c]) =>
        (a ? m[0]!.toLowerCase() : m[0]!) + (b ? m[1]!.toUpperCase() : m[1]!) +
        (c ? m[2]!.toUpperCase() : m[2]!)
      )
    ),
  fc.tuple(letter, letter, letter).map((l) => l.join("")),
);
/** Texts of HTTPDATE's shape (what the byte scanner's matcher lets through), valid or not. */
const shaped = fc.tuple(
  fc.oneof(two, fc.constantFrom("01", "28", "29", "30", "31", "00", "32", "99")),
  month,
  fc.oneof(
    fc.tuple(two, two).map(([a, b]) => a + b),
    fc.constantFrom("2024", "2023", "2000", "1900"),
  ),
  fc.oneof(two, fc.constantFrom("23", "24")),
  fc.oneof(two, fc.constantFrom("59", "60")),
  fc.oneof(two, fc.constantFrom("59", "60", "61")),
  fc.constantFrom("+", "-"),
  fc.oneof(
    fc.tuple(two, two).map(([a, b]) => a + b),
    fc.constantFrom("0000", "2359", "2400", "0060"),
  ),
).map(([d, m, y, h, mi, s, sign, z]) => `${d}/${m}/${y}:${h}:${mi}:${s} ${sign}${z}`);

Deno.test("httpDateBytesMs() reads every text of HTTPDATE's shape as parseHttpDate does, lines after lines", () => {
  fc.assert(
    fc.property(fc.array(shaped, { minLength: 1, maxLength: 12 }), fc.nat(7), (texts, pad) => {
      // One after the other, as a scan reads them (the day of the line before is kept), at an
      // offset in a larger buffer.
      for (const text of texts) {
        const bytes = encoder.encode(" ".repeat(pad) + text + "\n");
        assert.equal(httpDateBytesMs(bytes, pad), parseHttpDate(text), text);
      }
    }),
    { numRuns: 3000 },
  );
});

Deno.test("httpDateBytesMs() keeps no invalid day from the line before: 31 after 30, 29 Feb by year", () => {
  const at = (text: string) => httpDateBytesMs(encoder.encode(text), 0);
  for (
    const [first, then] of [
      ["30/Apr/2024:10:00:00 +0000", "31/Apr/2024:10:00:00 +0000"],
      ["29/Feb/2024:10:00:00 +0000", "29/Feb/2023:10:00:00 +0000"],
      ["01/May/2024:10:00:00 +0000", "33/Apr/2024:10:00:00 +0000"],
    ]
  ) {
    assert.equal(at(first!), parseHttpDate(first!));
    assert.equal(at(then!), null, then);
    assert.equal(at(first!), parseHttpDate(first!), `${first} again`);
  }
  assert.equal(at("10/oCT/2024:13:55:36 -0130"), Date.UTC(2024, 9, 10, 15, 25, 36));
});
