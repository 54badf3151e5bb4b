import assert from "node:assert/strict";
import fc from "fast-check";
import { jsonLineReader, type JsonPath, jsonPathReader } from "./json_line_reader.ts";
import { ShortStrings } from "../values/short_strings.ts";
import type { Row } from "../values/values.ts";

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
  for (const n of names) row[n] = Object.hasOwn(o, n) ? o[n]! : null;
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

Deno.test("the JSON line reader takes flat and nested lines and leaves odd ones to JSON.parse", () => {
  const reader = jsonLineReader(["status", "path"]);
  assert.ok(reader);
  const read = (text: string) => reader.read(encoder.encode(`${text}\n`), 0);
  assert.deepEqual(read('{"status":200,"path":"/a\\"b","status":404}'), {
    status: 404,
    path: '/a"b',
  });
  assert.deepEqual(read(' { "path" : "é" } \r'), { status: null, path: "é" });
  assert.deepEqual(read("{}"), { status: null, path: null });
  assert.deepEqual(read('{"status":{"code":200},"x":[1,{"y":[]}]}'), {
    status: { code: 200 },
    path: null,
  });
  assert.equal(read('{"status":{"code":200,}}'), undefined);
  assert.equal(read('{"x":[1,]}'), undefined);
  assert.equal(read('{"x":{"a" 1}}'), undefined);
  assert.equal(read('{"x":[1}'), undefined);
  assert.equal(read('{"status":200,}'), undefined);
  assert.equal(read('{"status":01}'), undefined);
  assert.equal(read('{"status":"\t"}'), undefined);
  assert.equal(read("[1]"), undefined);
  assert.equal(jsonLineReader(["__proto__"]), null);
  assert.equal(jsonLineReader(["é"]), null);
});

/** The value at `path` of JSON.parse's object, as the engine's member and index access see it. */
function atPath(v: unknown, path: JsonPath): unknown {
  for (const step of path) {
    if (typeof step === "string") {
      if (typeof v !== "object" || v === null || Array.isArray(v) || !Object.hasOwn(v, step)) {
        return null;
      }
      v = (v as Record<string, unknown>)[step];
    } else {
      if (!Array.isArray(v) || step >= v.length) return null;
      v = v[step];
    }
  }
  return v;
}

// Nested records: JSON values of every kind, keys repeated, white space, escapes, unicode.
const KEYS = ["status", "errorCode", "location", "a", "b", "__proto__", "é", "x\\y", ""];
const jsonKey = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...KEYS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 3 }) },
);
const leaf = fc.oneof(
  fc.string({
    unit: fc.oneof(
      fc.constantFrom("é", '"', "\\", "\u0000", "\u001f", "😀", "\u2028", "\ud800"),
      fc.string({ maxLength: 1 }),
    ),
  }).map((v) => JSON.stringify(v)),
  fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.maxSafeInteger())
    .map((v) => JSON.stringify(v)),
  fc.constantFrom(
    "0",
    "-0",
    "1e21",
    "1E+2",
    "1e-7",
    "-0.0e0",
    "12345678901234567890",
    "9007199254740993",
    "0.1",
    "123456789012345",
    "1234567890123456",
    "true",
    "false",
    "null",
    '"\\u00e9\\n\\t\\/\\""',
  ),
);
const { tree } = fc.letrec((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(fc.tuple(space, tie("tree") as fc.Arbitrary<string>, space), { maxLength: 4 })
      .map((xs) => `[${xs.map(([a, v, b]) => `${a}${v}${b}`).join(",")}]`),
    fc.array(
      fc.tuple(jsonKey, space, tie("tree") as fc.Arbitrary<string>, space),
      { maxLength: 5 },
    ).map((ps) =>
      `{${ps.map(([k, a, v, b]) => `${a}${JSON.stringify(k)}${b}:${a}${v}`).join(",")}}`
    ),
  ),
}));
const nestedLine = fc.tuple(
  fc.array(fc.tuple(jsonKey, tree), { maxLength: 6 }),
  fc.array(fc.tuple(fc.nat(), fc.constantFrom(...TRICKY)), { maxLength: 1 }),
).map(([pairs, edits]) => {
  let text = `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`;
  for (const [at, c] of edits) {
    const k = at % text.length;
    text = text.slice(0, k) + c + text.slice(k + 1);
  }
  return text.replace(/\n/g, "");
});
const path = fc.tuple(
  fc.constantFrom("status", "location", "a", "b", ""),
  fc.array(fc.oneof(fc.constantFrom("errorCode", "a", "b", "é", ""), fc.nat(3)), {
    maxLength: 3,
  }),
).map(([head, rest]): JsonPath => [head, ...rest]).filter((p) => p.every((s) => s !== "é"));

/** Checks one line against JSON.parse of its decoded bytes; false when the reader left it. */
function checkPaths(text: string, paths: readonly JsonPath[]): boolean {
  const reader = jsonPathReader(paths);
  assert.ok(reader);
  const bytes = encoder.encode(`${text}\n`);
  const values = reader.read(bytes, 0);
  if (values === undefined) return false;
  const decoded = new TextDecoder().decode(bytes.subarray(0, bytes.length - 1));
  let v: unknown;
  try {
    v = JSON.parse(decoded);
  } catch {
    assert.fail(`took a line JSON.parse rejects: ${JSON.stringify(text)}`);
  }
  assert.ok(typeof v === "object" && v !== null && !Array.isArray(v), `not an object: ${text}`);
  assert.deepEqual(
    [...values],
    paths.map((p) => atPath(v, p)),
    `values differ for ${JSON.stringify(text)} at ${JSON.stringify(paths)}`,
  );
  assert.equal(reader.next, bytes.length);
  return true;
}

Deno.test("the JSON path reader gives JSON.parse's values for every nested line it takes", () => {
  let taken = 0;
  fc.assert(
    fc.property(nestedLine, fc.array(path, { minLength: 1, maxLength: 4 }), (text, paths) => {
      if (checkPaths(text, paths)) taken++;
    }),
    { numRuns: 5000, seed: 9 },
  );
  assert.ok(taken > 2000, `lines taken: ${taken}`);
});

Deno.test("the JSON path reader reads sign-in records of Graph's shape exactly", () => {
  const record = {
    id: "71d7198a-9027-4a51-9ce4-903746c02ada",
    createdDateTime: "2024-05-01T00:00:00Z",
    userDisplayName: 'Jürgen O\u2019Brien "JB" \\ 😀',
    riskEventTypes: [],
    riskEventTypes_v2: ["unfamiliarFeatures"],
    status: { errorCode: 50126, failureReason: 'Invalid "password".', additionalDetails: null },
    deviceDetail: { deviceId: "", displayName: null, isCompliant: false, trustType: null },
    location: {
      city: "東京",
      countryOrRegion: "JP",
      geoCoordinates: { altitude: null, latitude: 35.6762, longitude: -1.5e-7 },
    },
    appliedConditionalAccessPolicies: [
      { id: "x", enforcedGrantControls: ["mfa"], enforcedSessionControls: [], result: "success" },
      { id: "y", enforcedGrantControls: [], enforcedSessionControls: [{}], result: "failure" },
    ],
  };
  const paths: JsonPath[] = [
    ["status", "errorCode"],
    ["location", "countryOrRegion"],
    ["location", "geoCoordinates", "longitude"],
    ["appliedConditionalAccessPolicies", 1, "result"],
    ["appliedConditionalAccessPolicies", 0, "enforcedGrantControls", 0],
    ["appliedConditionalAccessPolicies", 5, "result"],
    ["deviceDetail"],
    ["status", "errorCode"],
    ["userDisplayName"],
    ["riskEventTypes"],
    ["missing", "x"],
  ];
  const text = JSON.stringify(record);
  assert.ok(checkPaths(text, paths));
  assert.ok(checkPaths(JSON.stringify(record, null, 1).replace(/\n/g, " "), paths));
  // Keys as long as a wanted one, or differing from it in the first or last byte only.
  assert.ok(checkPaths(`{"statuz":{"errorCode":9},"Status":7,"status":{"errorCodf":2}}`, paths));
  assert.ok(
    checkPaths(`{"a":1,"b":2,"":3,"location":{"countryOrRegioN":"X"}}`, [["a"], ["b"], [""]]),
  );
  // Keys repeated: the last counts, at every depth.
  assert.ok(checkPaths(`{"status":{"errorCode":1},"status":{"errorCode":2,"errorCode":3}}`, paths));
  assert.ok(checkPaths(`{"status":{"errorCode":1},"status":7}`, paths));
  // Deep nesting within the limit is read; beyond it the line goes to JSON.parse.
  assert.ok(checkPaths(`{"a":${"[".repeat(90)}${"]".repeat(90)}}`, [["a"], ["b"]]));
  assert.equal(
    jsonPathReader([["b"]])!.read(
      encoder.encode(`{"a":${"[".repeat(150)}${"]".repeat(150)}}\n`),
      0,
    ),
    undefined,
  );
  assert.equal(jsonPathReader([]) !== null, true);
  assert.equal(jsonPathReader([["__proto__"]]), null);
  assert.equal(jsonPathReader([["a", -1]]), null);
});

Deno.test("one path reader gives JSON.parse's values for many lines read back to back", () => {
  // One reader for all the lines of one buffer: what it keeps between lines (the short strings
  // it made) must not leak into another line, and lines start at every alignment.
  let taken = 0;
  let lines = 0;
  fc.assert(
    fc.property(
      fc.array(nestedLine, { minLength: 1, maxLength: 40 }),
      fc.array(path, { minLength: 1, maxLength: 4 }),
      fc.nat(7),
      (texts, paths, pad) => {
        const reader = jsonPathReader(paths);
        assert.ok(reader);
        const bytes = encoder.encode(`${" ".repeat(pad)}\n${texts.join("\n")}\n`);
        let at = pad + 1;
        for (const text of texts) {
          lines++;
          const length = encoder.encode(`${text}\n`).length;
          const values = reader.read(bytes, at);
          if (values !== undefined) {
            taken++;
            assert.equal(reader.next, at + length);
            const v = JSON.parse(new TextDecoder().decode(bytes.subarray(at, at + length - 1)));
            assert.deepEqual([...values], paths.map((p) => atPath(v, p)), `at ${text}`);
          }
          at += length;
        }
      },
    ),
    { numRuns: 400, seed: 11 },
  );
  assert.ok(taken > lines * 0.3, `lines taken: ${taken} of ${lines}`);
});

Deno.test("ShortStrings gives the decoded text of every short ASCII run, colliding or not", () => {
  const strings = new ShortStrings();
  const decoder = new TextDecoder();
  // Far more distinct texts than the table has entries, from a small alphabet: entries are
  // replaced, and equal hashes of different texts happen.
  fc.assert(
    fc.property(
      fc.array(
        fc.string({ unit: fc.constantFrom("a", "b", "S", "E", "0", " ", "~"), maxLength: 40 }),
        {
          minLength: 50,
          maxLength: 400,
        },
      ),
      (texts) => {
        for (const text of texts) {
          const bytes = encoder.encode(`x${text}y`);
          const got = strings.get(bytes, 1, bytes.length - 1);
          if (text.length > 32) assert.equal(got, undefined);
          else assert.equal(got, decoder.decode(bytes.subarray(1, bytes.length - 1)));
        }
      },
    ),
    { numRuns: 200, seed: 5 },
  );
  assert.equal(strings.get(encoder.encode("é"), 0, 2), undefined);
  assert.equal(strings.get(encoder.encode("a\\nb"), 0, 4), undefined);
  assert.equal(strings.get(encoder.encode("SE"), 0, 2), strings.get(encoder.encode("xSE"), 1, 3));
});

Deno.test("the JSON path reader decides on every byte in a string at every alignment", () => {
  // The string skipper tests four bytes at a time: each byte value, at each place in a word,
  // in a long string (the word loop) and a short one (the bytes around it), as JSON.parse does.
  for (let c = 0; c < 256; c++) {
    for (let shift = 0; shift < 8; shift++) {
      for (const length of [1, 13]) {
        const head = encoder.encode(`${" ".repeat(shift)}{"a":"${"x".repeat(length)}`);
        const bytes = new Uint8Array([...head, c, ...encoder.encode(`${"y".repeat(length)}"}\n`)]);
        const reader = jsonPathReader([["a"]]);
        assert.ok(reader);
        const values = reader.read(bytes, 0);
        let expected: unknown;
        try {
          expected = JSON.parse(new TextDecoder().decode(bytes.subarray(0, bytes.length - 1))).a;
        } catch {
          expected = undefined;
        }
        if (c === 0x5c) {
          // `\y` is no escape: both refuse it.
          assert.equal(values, undefined);
          assert.equal(expected, undefined);
        } else assert.deepEqual(values?.[0], expected, `byte ${c} shift ${shift} length ${length}`);
      }
    }
  }
});

Deno.test("the JSON path reader reads strings with escapes at every alignment", () => {
  // After an escape the string's plain bytes are stepped over a word at a time again.
  const escapes = ["\\n", '\\"', "\\\\", "\\/", "\\u00e9", "\\uD83D\\uDE00", "\\x", "\\u12"];
  const tails = ["abcdefghijklmnop", 'abcdefgh"ijkl', "abcdefgh\\tijklmnop", "abc\u0001defghijk"];
  for (const escape of escapes) {
    for (const tail of tails) {
      for (let shift = 0; shift < 8; shift++) {
        const text = `${" ".repeat(shift)}{"a":"xy${escape}${tail}","b":"${tail}${escape}"}`;
        const reader = jsonPathReader([["a"], ["b"]]);
        assert.ok(reader);
        const bytes = encoder.encode(`${text}\n`);
        const values = reader.read(bytes, 0);
        let expected: unknown[] | undefined;
        try {
          const v = JSON.parse(text);
          expected = [v.a, v.b];
        } catch {
          expected = undefined;
        }
        assert.deepEqual(values && [...values], expected, `${text}`);
      }
    }
  }
});
