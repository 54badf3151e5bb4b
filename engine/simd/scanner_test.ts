import assert from "node:assert/strict";
import fc from "fast-check";
import { END, indexListRoom, SimdScanner } from "./scanner.ts";
import { referenceFind, referenceIndex, referenceValid } from "./scanner_reference.ts";

const encoder = new TextEncoder();

/** Bytes rich in what the index looks at: quotes, runs of backslashes, structurals, line ends. */
const soup = fc.array(
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('"', "\\", "{", "}", "[", "]", ":", ",", "\n") },
    { weight: 2, arbitrary: fc.constantFrom("\\\\", "\\\\\\", '\\"', "\\u", "\\u00e9", "\r\n") },
    { weight: 2, arbitrary: fc.constantFrom("u", "0", "a", "F", "g", " ", "\t", "\u0001", "é") },
    { weight: 1, arbitrary: fc.constantFrom("😀", "\u2028", "x".repeat(61), "\\".repeat(64)) },
    { weight: 3, arbitrary: fc.string({ maxLength: 3 }) },
  ),
  { maxLength: 120 },
).map((parts) => encoder.encode(parts.join("")));

function check(scanner: SimdScanner, bytes: Uint8Array, start: number): void {
  const end = bytes.length;
  const index = scanner.indexJson(bytes, start, end);
  const want = referenceIndex(bytes, start, end);
  if (index === null) {
    // No room for the lists: only when one is longer than the room.
    const room = indexListRoom(end - start);
    assert.ok(want.backslashes.length >= room || want.errors.length + 4 >= room);
    return;
  }
  assert.deepEqual([...index.tokens.subarray(0, index.count)], want.tokens, "tokens");
  assert.deepEqual([...index.tokens.subarray(index.count)], [END, END, END, END]);
  const backslashes = [...index.backslashes.subarray(0, index.backslashCount)];
  assert.deepEqual(backslashes, want.backslashes, "backslashes");
  const errors = [...index.errors.subarray(0, index.errorCount)].filter((e) => e < end);
  assert.deepEqual(errors, want.errors, "errors");
  assert.equal(index.backslashes[index.backslashCount], END);
  assert.equal(index.errors[index.errorCount], END);
}

Deno.test("the SIMD JSON index equals the byte-at-a-time reference on adversarial bytes", () => {
  const scanner = new SimdScanner();
  fc.assert(
    fc.property(soup, fc.nat(70), (bytes, skip) => {
      check(scanner, bytes, Math.min(skip, bytes.length));
    }),
    { numRuns: 3000 },
  );
});

Deno.test("the SIMD JSON index is exact across 64-byte blocks for every offset of a run", () => {
  const scanner = new SimdScanner();
  // A backslash run, a quote, a \u escape and a line end placed at every offset around a block
  // edge, so that each carry (odd run, in-string, \u digits) crosses it.
  for (const piece of ['\\"', '\\\\"', '\\\\\\"', "\\u12", "\\u1234", '"\n', "\\\n", '"a\\']) {
    for (let at = 50; at < 140; at++) {
      const text = '{"k":"' + "a".repeat(at) + piece + 'b",\n"x":[1,"\\\\"]}\n';
      check(scanner, encoder.encode(text), 0);
    }
  }
});

/** Lines of JSON, valid and broken, with nesting near the 96 levels stage 2 takes. */
const lines = fc.array(
  fc.oneof(
    { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify({ v })) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v, null, 1)) },
    { weight: 2, arbitrary: soup.map((b) => new TextDecoder().decode(b)) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.integer({ min: 90, max: 100 }), fc.constantFrom("[", '{"k":')).map((
        [n, open],
      ) => `{"d":${open.repeat(n)}0${(open === "[" ? "]" : "}").repeat(n)}}`),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '{"a":1.}',
        '{"a":-}',
        '{"a":01}',
        '{"a":1e}',
        '{"a":tru}',
        '{"a":nulll}',
        '{"a":[1,]}',
        '{"a":{,}}',
        '{"a" 1}',
        '{"a":1,}',
        "{}",
        ' { "a" : [ 1 , { } ] } \r',
        '{"a":"\u00e9"}',
        '{"a":"x"}}',
      ),
    },
  ),
  { maxLength: 8 },
).map((ls) => encoder.encode(ls.map((l) => l.replace(/\n/g, "") + "\n").join("")));

Deno.test("stage 2 finds valid exactly the lines JSON.parse takes as objects, closing tokens right", () => {
  const scanner = new SimdScanner();
  fc.assert(
    fc.property(lines, (bytes) => {
      const index = scanner.indexJson(bytes, 0, bytes.length);
      if (index === null) return;
      const valid = [...index.valid.subarray(0, index.validCount)];
      assert.deepEqual(valid, referenceValid(bytes, 0, bytes.length));
      // Each { and [ of a valid line: its closing token is the one that matches it.
      const tokens = index.tokens;
      const stack: number[] = [];
      let line = 0;
      for (let t = 0; t < index.count; t++) {
        const p = tokens[t]!;
        while (line < valid.length - 1 && valid[line + 1]! <= p) line++;
        const inValid = valid.length > 0 && valid[line]! <= p &&
          bytes.indexOf(0x0a, valid[line]!) > p;
        if (!inValid) continue;
        const c = bytes[p];
        if (c === 0x7b || c === 0x5b) stack.push(t);
        else if (c === 0x7d || c === 0x5d) assert.equal(index.jumps[stack.pop()!], t);
      }
      assert.equal(stack.length, 0);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("the SIMD byte search gives every position of the byte and none in the padding", () => {
  const scanner = new SimdScanner();
  fc.assert(
    fc.property(
      soup,
      fc.constantFrom(0x0a, 0x20, 0x2c, 0x7c, 0x09, 0x00),
      fc.nat(70),
      (bytes, byte, skip) => {
        const start = Math.min(skip, bytes.length);
        const hits = scanner.findByte(bytes, start, bytes.length, byte);
        assert.deepEqual([...hits.positions], referenceFind(bytes, start, bytes.length, byte));
      },
    ),
    { numRuns: 2000 },
  );
  // A large buffer grows the instance's memory; the views still read right after.
  const big = new Uint8Array(3_000_000).fill(0x61);
  for (let i = 7; i < big.length; i += 9973) big[i] = 0x0a;
  const hits = scanner.findByte(big, 5, big.length, 0x0a);
  assert.deepEqual([...hits.positions], referenceFind(big, 5, big.length, 0x0a));
});
