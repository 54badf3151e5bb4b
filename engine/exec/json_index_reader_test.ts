import assert from "node:assert/strict";
import fc from "fast-check";
import { indexedPathReader, scanPathReader } from "./json_index_reader.ts";
import { type JsonPath, type JsonPathReader, jsonPathReader } from "./json_line_reader.ts";
import { giveScanner, scannerPath, setScannerPath, takeScanner } from "../simd/scanner.ts";

const encoder = new TextEncoder();

const space = fc.constantFrom("", "", "", " ", "\t", "\r", "  ");
const KEYS = ["status", "errorCode", "location", "a", "b", "__proto__", "é", "x\\y", "", 'q"'];
const jsonKey = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...KEYS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 3 }) },
);
/** Strings rich in escapes and runs of backslashes, some long enough to cross 64-byte blocks. */
const text = fc.oneof(
  fc.string({
    unit: fc.oneof(
      fc.constantFrom("é", '"', "\\", "\\\\", "\u0000", "\u001f", "😀", "\u2028", "\ud800", "\n"),
      fc.string({ maxLength: 1 }),
    ),
  }),
  fc.tuple(fc.nat(130), fc.constantFrom('"', "\\", "\\\\\\", "é", "😀", "")).map(([n, c]) =>
    "y".repeat(n) + c + "z".repeat(n % 7)
  ),
);
const leaf = fc.oneof(
  text.map((v) => JSON.stringify(v)),
  fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))
    .map((v) => JSON.stringify(v)),
  fc.constantFrom(
    "0",
    "-0",
    "1e21",
    "1E+2",
    "-0.0e0",
    "12345678901234567890",
    "true",
    "false",
    "null",
    '"\\u00e9\\n\\t\\/\\""',
    '"\\u00e"',
    '"\\x"',
    '"a\\\\\\"b"',
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
/** Edits that break a line in the ways the index must see: quotes, escapes, control bytes. */
const TRICKY = ['"', "\\", "{", "}", "[", "]", ",", ":", "\u0001", "\t", " ", "x", "é", "\\u"];
const line = fc.tuple(
  fc.array(fc.tuple(jsonKey, tree), { maxLength: 6 }),
  fc.array(fc.tuple(fc.nat(), fc.constantFrom(...TRICKY)), { maxLength: 2 }),
  fc.constantFrom("\n", "\n", "\n", "\r\n", " \n"),
).map(([pairs, edits, end]) => {
  let t = `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`;
  for (const [at, c] of edits) {
    const k = at % t.length;
    t = t.slice(0, k) + c + t.slice(k + 1);
  }
  return t.replace(/\n/g, "") + end;
});
/** A piece of lines: records, blank lines, a line that is no object, deep nesting. */
const piece = fc.array(
  fc.oneof(
    { weight: 12, arbitrary: line },
    { weight: 1, arbitrary: fc.constantFrom("\n", "  \n", "\r\n", "[1,2]\n", '"x"\n', "{\n") },
    {
      weight: 1,
      arbitrary: fc.nat(130).map((n) => `{"a":${"[".repeat(n)}1${"]".repeat(n)},"b":2}\n`),
    },
  ),
  { minLength: 1, maxLength: 12 },
).map((lines) => lines.join(""));
const path = fc.tuple(
  fc.constantFrom("status", "location", "a", "b", ""),
  fc.array(fc.oneof(fc.constantFrom("errorCode", "a", "b", ""), fc.nat(3)), { maxLength: 3 }),
).map(([head, rest]): JsonPath => [head, ...rest]);

/**
 * Reads every line of `text` (as read_json_source.ts does: a line the reader leaves is passed
 * over to its "\n") with both readers; they must give the same values and the same next offset.
 * Returns how many lines the reference took, and how many of them the index walk took.
 */
function compare(text: string, paths: readonly JsonPath[], lead = 0): [number, number] {
  const reference = jsonPathReader(paths)!;
  const indexed = indexedPathReader(paths)!;
  const body = encoder.encode(text);
  // The piece starts at `lead` in its buffer, as pieces do after a carried line.
  const bytes = new Uint8Array(lead + body.length);
  bytes.set(body, lead);
  const end = bytes.length;
  indexed.prepare(bytes, lead, end);
  let i = lead;
  let read = 0;
  while (i < end) {
    const want = reference.read(bytes, i);
    const wantCopy = want && [...want];
    const got = indexed.read(bytes, i);
    assert.deepEqual(got && [...got], wantCopy, `line at ${i} of ${JSON.stringify(text)}`);
    if (want !== undefined) {
      assert.equal(indexed.next, reference.next);
      i = reference.next;
      read++;
    } else i = bytes.indexOf(0x0a, i) + 1 || end;
  }
  return [read, indexed.taken];
}

/** compare() over 3000 random pieces and sets of `paths`: the lines read, and those the index took. */
function compareRandom(paths: fc.Arbitrary<JsonPath[]>): { read: number; taken: number } {
  let read = 0;
  let taken = 0;
  fc.assert(
    fc.property(piece, paths, fc.nat(70), (text, paths, lead) => {
      const [r, t] = compare(text, paths, lead);
      read += r;
      taken += t;
    }),
    { numRuns: 3000 },
  );
  return { read, taken };
}

Deno.test("the indexed JSON reader gives the reference reader's values on random and broken lines", () => {
  const { read, taken } = compareRandom(fc.array(path, { minLength: 1, maxLength: 4 }));
  // The walk itself took the lines the reference took (none left to it but a key with escapes).
  assert.ok(read > 3000, `lines read: ${read}`);
  assert.ok(taken > 0.97 * read, `lines the index walk took: ${taken} of ${read}`);
});

Deno.test("the indexed JSON reader agrees at every block offset of escapes, runs and huge strings", () => {
  const paths: JsonPath[] = [["a"], ["b", "c"], ["d", 1]];
  const pieces = ['\\"', "\\\\", '\\\\\\"', "\\u00e9", "\\u00", "\\/", "é", "😀", "\t", "\\\\\\\\"];
  for (const p of pieces) {
    for (let at = 40; at < 140; at++) {
      const s = "s".repeat(at);
      const lines = [
        `{"x":"${s}${p}","a":1,"b":{"c":"${p}${s}"},"d":[0,"${s}${p}"]}\n`,
        `{"a":"${s}${p}"}\n{"b":{"c":[1,{"${p}":2}]}}\n`,
        `{"k${p}":1,"a":2}\r\n`,
        `{"a":"${s}${p}x\n`, // a line that ends inside a string
        `{"a":true,"b":{"c":null}}\n`,
      ];
      const [read, taken] = compare(lines.join(""), paths, at % 9);
      assert.ok(taken > 0 && taken >= read - 1, `${taken} of ${read} for ${p} at ${at}`);
    }
  }
  // A string of a megabyte, and records nested up to and past the reader's depth.
  const huge = `{"a":"${"h".repeat(1 << 20)}\\"","b":{"c":2}}\n`;
  assert.deepEqual(compare(huge + huge, paths), [2, 2]);
  for (const depth of [98, 99, 100, 101, 150]) {
    const deep = `{"b":{"c":${"[".repeat(depth)}${"]".repeat(depth)}},"a":${
      '{"q":'.repeat(depth)
    }1${"}".repeat(depth)}}\n`;
    compare(deep, paths);
    compare(deep, [["a", "q", "q"], ["b", "c", 0, 0]]);
  }
});

Deno.test("the indexed JSON reader on paths of members only (values found by stage 2) gives the reference's values", () => {
  const member = fc.constantFrom("status", "location", "a", "b", "", "errorCode", 'q"');
  const { read, taken } = compareRandom(
    // One member (the root's) to three deep.
    fc.array(fc.array(member, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }),
  );
  assert.ok(read > 3000, `lines read: ${read}`);
  assert.ok(taken > 0.97 * read, `lines the index took: ${taken} of ${read}`);
  // Repeated keys (the last counts), a key that is a prefix of another, an absent one, values of
  // every kind read whole, and a line with a backslash (walked instead).
  const lines = [
    '{"a":1,"ab":"x","a":{"k":[1,2]},"b":"t\\"","c":null}\n',
    '{ "b" : [ ] , "a" :  -0.5e3 ,"status":"ok"}\n',
    '{"ab":1}\n',
    '{"a":"\\u00e9","b":true}\n',
  ].join("");
  assert.deepEqual(compare(lines, [["a"], ["b"], ["status"], ["a"]]), [4, 4]);
  // Members of members: a repeated parent undoes what the earlier one gave, a parent that is no
  // object or an array gives null, a key like the wanted one deeper down is not taken.
  const nested = [
    '{"s":{"e":1,"c":"SE"},"s":{"c":"NO"},"x":{"s":{"e":9}}}\n',
    '{"s":"x","l":{"c":[1],"e":{"e":2}},"e":3}\n',
    '{"s":[{"e":1}],"l":{},"s":{"e":{"z":[]},"e":5}}\n',
    '{"l":{"c":"DE","c":"FR","q":{"c":1}},"s":{"e":null}}\n',
  ].join("");
  assert.deepEqual(compare(nested, [["s", "e"], ["l", "c"], ["s", "c"], ["e"]]), [4, 4]);
  assert.deepEqual(compare(nested, [["l", "e", "e"], ["s", "e"], ["x", "s", "e"]]), [4, 4]);
});

Deno.test({
  name:
    "READ_JSON's member paths take the indexed reader by default, PARSE's line ends the JavaScript search; TRAWL_SCANNER sends both one way",
  // The defaults are what an unset environment gives; a run with TRAWL_SCANNER set has chosen.
  ignore: Deno.env.get("TRAWL_SCANNER") !== undefined,
  fn() {
    const paths = [["status", "errorCode"], ["location", "countryOrRegion"]];
    const indexed = (reader: JsonPathReader | null) => reader !== null && "taken" in reader;
    try {
      setScannerPath(undefined);
      assert.equal(scannerPath("json"), "wasm");
      assert.equal(scannerPath("lines"), "js");
      assert.ok(indexed(scanPathReader(paths)));
      setScannerPath("js");
      assert.equal(scannerPath("json"), "js");
      assert.ok(!indexed(scanPathReader(paths)));
      setScannerPath("wasm");
      assert.equal(scannerPath("lines"), "wasm");
    } finally {
      setScannerPath(undefined);
    }
  },
});

Deno.test("readers alive at once read through scanners of their own; a released reader's scanner serves the next, and the released reader reads on through the reference", () => {
  const paths: JsonPath[] = [["status", "errorCode"], ["location", "city"]];
  const piece = (n: number) =>
    encoder.encode(
      Array.from(
        { length: 40 },
        (_, i) =>
          JSON.stringify({ status: { errorCode: n * 100 + i }, location: { city: `c${n}-${i}` } }),
      ).join("\n") + "\n",
    );
  /** Every line's values through `reader`, as the reference reads them. */
  const readAll = (reader: JsonPathReader, bytes: Uint8Array) => {
    const reference = jsonPathReader(paths)!;
    for (let from = 0; from < bytes.length;) {
      const got = reader.read(bytes, from);
      const want = reference.read(bytes, from);
      assert.deepEqual(got && [...got], want && [...want], `line at ${from}`);
      from = reader.next;
    }
  };
  const [one, two, three] = [piece(1), piece(2), piece(3)];
  const a = indexedPathReader(paths)!;
  const b = indexedPathReader(paths)!;
  a.prepare(one, 0, one.length);
  // Were b given a's scanner, this index would overwrite the one a reads from.
  b.prepare(two, 0, two.length);
  readAll(a, one);
  readAll(b, two);
  assert.equal(a.taken, 40, "a read its lines on the index");
  a.release!();
  a.release!(); // twice is harmless
  const c = indexedPathReader(paths)!;
  c.prepare(three, 0, three.length);
  readAll(c, three);
  assert.equal(c.taken, 40);
  // a, released, no longer reads from the index it had (now c's scanner's memory).
  readAll(a, one);
  assert.equal(a.taken, 40, "a's later reads went to the reference");
  b.release!();
  c.release!();
});

Deno.test("takeScanner() gives back a scanner given to the pool, else a new one", () => {
  const first = takeScanner();
  giveScanner(first);
  assert.equal(takeScanner(), first);
  assert.notEqual(takeScanner(), first);
});
