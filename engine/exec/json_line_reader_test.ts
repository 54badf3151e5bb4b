import assert from "node:assert/strict";
import fc from "fast-check";
import { jsonLineReader } from "./json_line_reader.ts";
import type { Row } from "../values.ts";

const encoder = new TextEncoder();
const NAMES = ["status", "a", "", "x y", "constructor"];

/** What READ_JSON's JSON.parse path makes of a line: the row, or null when it is no object. */
function parsed(line: string, names: readonly string[]): Row | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return null;
  const o = v as Record<string, Row[string]>;
  const row: Row = {};
  for (const n of names) row[n] = Object.hasOwn(o, n) ? o[n] : null;
  return row;
}

const TRICKY = [
  " ",
  "\t",
  "\r",
  "\u000b",
  '"',
  "\\",
  "\\u",
  "\\x",
  ",",
  ":",
  "{",
  "}",
  "[",
  "0",
  "-",
  "+",
  ".",
  "e",
  "t",
  "n",
  "é",
  "\u0001",
  "\u2028",
  "",
];

const space = fc.constantFrom("", "", "", " ", "\t", "\r", "  ");
const scalar = fc.oneof(
  fc.string({
    unit: fc.oneof(
      fc.constantFrom("é", '"', "\\", "\u0000", "\u001f", "😀"),
      fc.string({ maxLength: 1 }),
    ),
  }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, 1e21, 12345678901234567890, 1.5e-7),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.oneof(
  { weight: 8, arbitrary: scalar.map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.constantFrom("01", "1.", ".5", "-", "1e", "tru", "nul", "NaN", "+1") },
);
const key = fc.oneof(
  fc.constantFrom(...NAMES).map((k) => JSON.stringify(k)),
  fc.constantFrom('"st\\u0061tus"', '"\\"a"', '"é"', "status", '"a'),
  fc.string({ maxLength: 4 }).map((k) => JSON.stringify(k)),
);

/** Lines shaped like flat JSON objects, with random white space, then maybe a few edits. */
const line = fc.tuple(
  fc.array(fc.tuple(key, value, space, space, space), { maxLength: 6 }),
  space,
  space,
  fc.array(fc.tuple(fc.nat(), fc.constantFrom(...TRICKY)), { maxLength: 2 }),
).map(([pairs, before, after, edits]) => {
  let text = `${before}{${
    pairs.map(([k, v, s1, s2, s3]) => `${s1}${k}${s2}:${s3}${v}`).join(",")
  }}${after}`;
  for (const [at, c] of edits) {
    const k = at % text.length;
    text = text.slice(0, k) + c + text.slice(k + 1);
  }
  return text.replace(/\n/g, "");
});

Deno.test("the JSON line reader gives JSON.parse's row for every line it takes", () => {
  let taken = 0;
  fc.assert(
    fc.property(line, fc.subarray(NAMES, { minLength: 1 }), (text, names) => {
      const reader = jsonLineReader(names);
      assert.ok(reader);
      const bytes = encoder.encode(`${text}\n`);
      const row = reader.read(bytes, 0);
      if (row === undefined) return;
      taken++;
      // READ_JSON's other path parses the decoded bytes (a lone surrogate became U+FFFD).
      const decoded = new TextDecoder().decode(bytes.subarray(0, bytes.length - 1));
      const expected = parsed(decoded, names);
      assert.notEqual(expected, null, `took a line JSON.parse rejects: ${JSON.stringify(text)}`);
      assert.deepEqual(row, expected, `rows differ for ${JSON.stringify(text)}`);
      assert.equal(reader.next, bytes.length);
    }),
    { numRuns: 5000 },
  );
  assert.ok(taken > 400, `lines taken: ${taken}`);
});

Deno.test("the JSON line reader takes flat lines and leaves nested and odd ones to JSON.parse", () => {
  const reader = jsonLineReader(["status", "path"]);
  assert.ok(reader);
  const read = (text: string) => reader.read(encoder.encode(`${text}\n`), 0);
  assert.deepEqual(read('{"status":200,"path":"/a\\"b","status":404}'), {
    status: 404,
    path: '/a"b',
  });
  assert.deepEqual(read(' { "path" : "é" } \r'), { status: null, path: "é" });
  assert.deepEqual(read("{}"), { status: null, path: null });
  assert.equal(read('{"status":{"code":200}}'), undefined);
  assert.equal(read('{"status":200,}'), undefined);
  assert.equal(read('{"status":01}'), undefined);
  assert.equal(read('{"status":"\t"}'), undefined);
  assert.equal(read("[1]"), undefined);
  assert.equal(jsonLineReader(["__proto__"]), null);
  assert.equal(jsonLineReader(["é"]), null);
});
