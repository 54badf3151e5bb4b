import assert from "node:assert/strict";
import fc from "fast-check";
import {
  ByteSink,
  type ColumnVectors,
  compileColumnBytesWriter,
  compileRowBytesWriter,
  type RowTextFormat,
} from "./render_bytes.ts";
import type { RenderOptions } from "./render.ts";
import { IpAddr, type Row, Timestamp, type Value } from "../values/values.ts";

const utf8 = new TextEncoder();
const decoder = new TextDecoder();

const FORMATS: RowTextFormat[] = ["json", "csv", "tsv"];
const OPTIONS: RenderOptions[] = [
  { timeZone: "UTC" },
  { timeZone: "Europe/Berlin" },
  { timeZone: "Asia/Kolkata", timestampFormat: "yyyy-MM-dd HH:mm:ss.SSS Z" },
];
const FRAMES = [{}, { lead: ",", trail: "\n" }, { lead: "[", trail: "]" }];

/** One column of `n` rows as vectors, and its values by row as a row would hold them. */
interface Generated {
  readonly vectors: ColumnVectors;
  readonly values: readonly (Value | undefined)[];
}

const tagArb = fc.constantFrom(0, 0, 0, 1, 2);
const numberArb = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(-0, NaN, Infinity, -Infinity, 2 ** 53, -2147483648),
);
const textArb = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.constantFrom(
    'say "hi";\n\t\\',
    "C:\\logs\\a",
    "tab\there",
    "Zürich – 東京 😀",
    "a\ud800b",
    "",
  ),
);

function tagged<T>(
  n: number,
  arb: fc.Arbitrary<T>,
): fc.Arbitrary<{ tags: Uint8Array | null; xs: T[] }> {
  return fc.tuple(
    fc.boolean(),
    fc.array(tagArb, { minLength: n, maxLength: n }),
    fc.array(arb, { minLength: n, maxLength: n }),
  ).map(([some, tags, xs]) => ({ tags: some ? Uint8Array.from(tags) : null, xs }));
}

/** The value of row i where `tags` says it has one (else null or absent). */
function byTag<T>(tags: Uint8Array | null, i: number, v: T): T | null | undefined {
  return tags === null || tags[i] === 0 ? v : tags[i] === 1 ? null : undefined;
}

function columnArb(n: number): fc.Arbitrary<Generated> {
  const vector = (
    kind: "num" | "bool" | "ts" | "ip4",
    arb: fc.Arbitrary<number>,
    value: (x: number) => Value,
  ) =>
    tagged(n, arb).map(({ tags, xs }): Generated => ({
      vectors: {
        kind,
        vec: kind === "ip4" ? Uint32Array.from(xs) : Float64Array.from(xs),
        tags,
      },
      values: xs.map((x, i) => byTag(tags, i, value(x))),
    }));
  return fc.oneof(
    vector("num", numberArb, (x) => x),
    vector("bool", fc.constantFrom(0, 1), (x) => x === 1),
    // Runs of one second (a writer's cache of the second's text) and any time at all.
    vector(
      "ts",
      fc.oneof(
        fc.integer({ min: 0, max: 2999 }).map((ms) => Date.UTC(2024, 2, 31, 1) - 1500 + ms),
        fc.integer({ min: -62_000_000_000_000, max: 250_000_000_000_000 }),
      ),
      (ms) => new Timestamp(ms),
    ),
    vector("ip4", fc.integer({ min: 0, max: 0xffffffff }), (b) => new IpAddr(4, b)),
    tagged(n, textArb).map(({ tags, xs }): Generated => {
      const offsets = [0];
      for (const x of xs) offsets.push(offsets.at(-1)! + x.length);
      return {
        vectors: { kind: "str", text: xs.join(""), offsets: Uint32Array.from(offsets), tags },
        values: xs.map((x, i) => byTag(tags, i, x)),
      };
    }),
    // Spans of one buffer (PARSE's texts): UTF-8 or any bytes (a lone 0xff, a cut sequence),
    // other bytes between them; a null where the tag says (a span has no absent).
    fc.array(
      fc.tuple(
        fc.oneof(
          textArb.map((x) => utf8.encode(x)),
          fc.uint8Array({ maxLength: 6 }),
          fc.constant(Uint8Array.from([0x5c, 0x22, 0xc3])),
        ),
        fc.boolean(),
        fc.uint8Array({ maxLength: 3 }),
      ),
      { minLength: n, maxLength: n },
    ).map((xs): Generated => {
      const bytes = new Uint8Array(xs.reduce((m, [x, , gap]) => m + x.length + gap.length, 0));
      const vec = new Int32Array(2 * n);
      let at = 0;
      xs.forEach(([x, isNull, gap], i) => {
        bytes.set(gap, at);
        at += gap.length;
        bytes.set(x, at);
        vec[2 * i] = isNull ? -1 : at;
        vec[2 * i + 1] = at + x.length;
        at += x.length;
      });
      return {
        vectors: { kind: "span", bytes, vec },
        values: xs.map(([x, isNull]) => isNull ? null : decoder.decode(x)),
      };
    }),
    fc.tuple(fc.uniqueArray(textArb, { minLength: 1, maxLength: 4 }), tagged(n, fc.nat()))
      .map(([list, { tags, xs }]): Generated => {
        const vec = Uint16Array.from(xs, (x) => x % list.length);
        return {
          vectors: { kind: "dict", list, vec, tags },
          values: [...vec].map((e, i) => byTag(tags, i, list[e]!)),
        };
      }),
    fc.array(
      fc.oneof(
        fc.constant(null),
        fc.constant(undefined),
        numberArb,
        textArb,
        fc.integer({ min: 0, max: 0xffffffff }).map((b) => new IpAddr(4, b)),
        fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }).map((b) => new IpAddr(6, b)),
        fc.array(fc.integer(), { maxLength: 2 }),
      ),
      { minLength: n, maxLength: n },
    ).map((list): Generated => ({
      vectors: { kind: "values", list: list as (Value | undefined)[] },
      values: list as (Value | undefined)[],
    })),
  );
}

const caseArb = fc.integer({ min: 0, max: 12 }).chain((n) =>
  fc.record({
    n: fc.constant(n),
    columns: fc.array(columnArb(n), { maxLength: 5 }),
    names: fc.uniqueArray(fc.string({ maxLength: 5 }), { minLength: 5, maxLength: 5 }),
    // Which rows, in which order (a filter's picks), or all of them.
    picks: fc.option(fc.array(fc.nat({ max: Math.max(0, n - 1) }), { maxLength: n }), {
      nil: null,
    }),
    cut: fc.nat(),
    format: fc.constantFrom(...FORMATS),
    opts: fc.constantFrom(...OPTIONS),
    frame: fc.constantFrom(...FRAMES),
  })
);

Deno.test("compileColumnBytesWriter() writes what compileRowBytesWriter writes for the same rows", () => {
  fc.assert(
    fc.property(caseArb, ({ n, columns, names, picks, cut, format, opts, frame }) => {
      const chosen = n === 0 ? [] : picks === null ? [...Array(n).keys()] : picks;
      const cols = names.slice(0, columns.length);
      // The rows those columns are: a value tagged absent is no field of its row.
      const rows = chosen.map((i) => {
        const row: Row = {};
        columns.forEach((c, k) => {
          const v = c.values[i];
          if (v !== undefined) row[cols[k]!] = v;
        });
        return row;
      });
      const rowSink = new ByteSink(8);
      const rowEnds: number[] = [];
      const rowNulls = cols.map(() => false);
      compileRowBytesWriter(format, cols, opts, { nulls: rowNulls, ...frame })(
        rows,
        rowSink,
        rowEnds,
      );

      const sink = new ByteSink(8);
      const ends: number[] = [];
      const nulls = cols.map(() => false);
      const writer = compileColumnBytesWriter(format, cols, opts, sink, ends, nulls, frame);
      const write = writer.block(columns.map((c) => c.vectors));
      const list = n === 0 || picks === null ? null : Int32Array.from(picks);
      // In two steps, as a source writes a block (the writer's caches carry over).
      const at = chosen.length === 0 ? 0 : cut % (chosen.length + 1);
      write(list, 0, at);
      write(list, at, chosen.length);

      assert.deepEqual(ends, rowEnds);
      assert.deepEqual(sink.bytes.subarray(0, sink.at), rowSink.bytes.subarray(0, rowSink.at));
      assert.deepEqual(nulls, rowNulls);
    }),
    { numRuns: 400 },
  );
});

Deno.test("compileColumnBytesWriter(): a dictionary's entry written once is copied, escapes and all", () => {
  const sink = new ByteSink(4);
  const ends: number[] = [];
  const nulls = [false];
  const list = ['a "quoted" one', "plain", "Zürich"];
  const vec = Uint16Array.from([0, 1, 0, 2, 2, 0]);
  const tags = Uint8Array.from([0, 0, 1, 0, 0, 0]);
  const writer = compileColumnBytesWriter("json", ["p"], { timeZone: "UTC" }, sink, ends, nulls);
  writer.block([{ kind: "dict", list, vec, tags }])(null, 0, vec.length);
  const text = new TextDecoder().decode(sink.bytes.subarray(0, sink.at));
  assert.equal(
    text,
    '{"p":"a \\"quoted\\" one"}{"p":"plain"}{"p":null}{"p":"Zürich"}{"p":"Zürich"}{"p":"a \\"quoted\\" one"}',
  );
  assert.deepEqual(nulls, [true]);
  assert.equal(ends.length, 6);
  // A block of other columns is its own: its entries are not those of the first.
  const other = writer.block([{
    kind: "dict",
    list: ["x"],
    vec: Uint16Array.from([0]),
    tags: null,
  }]);
  other(null, 0, 1);
  assert.ok(new TextDecoder().decode(sink.bytes.subarray(0, sink.at)).endsWith('{"p":"x"}'));
});
