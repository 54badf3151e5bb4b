import assert from "node:assert/strict";
import fc from "fast-check";
import { ByteSink, compileRowBytesWriter, type RowTextFormat } from "./render_bytes.ts";
import { type RenderOptions, toJsonValue, toText } from "./render.ts";
import { parseIp, parseNet } from "../values/ip.ts";
import { Interval, IpAddr, IpNet, type Row, Timestamp, type Value } from "../values/values.ts";
import { tsvEscape } from "./render_bytes.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A JSON row as JSON.stringify writes the values' JSON forms: the reference of the bytes. */
function jsonRow(columns: readonly string[], opts: RenderOptions): (row: Row) => string {
  return (row) =>
    "{" +
    columns.map((c) => JSON.stringify(c) + ":" + JSON.stringify(toJsonValue(row[c] ?? null, opts)))
      .join(",") +
    "}";
}

/** A CSV row as API.md says: text quoted with `"` doubled, numbers and booleans bare, null empty. */
function csvRow(columns: readonly string[], opts: RenderOptions): (row: Row) => string {
  return (row) =>
    columns.map((c) => {
      const v = row[c];
      if (v === null || v === undefined) return "";
      if (typeof v === "number") return Number.isFinite(v) ? String(v) : "";
      if (typeof v === "boolean" || v instanceof Interval) return toText(v, opts)!;
      return '"' + toText(v, opts)!.replaceAll('"', '""') + '"';
    }).join(";");
}

/** A TSV row as API.md says: cells as in CSV unquoted, escaped, null empty. */
function tsvRow(columns: readonly string[], opts: RenderOptions): (row: Row) => string {
  return (row) =>
    columns.map((c) => {
      const v = row[c];
      if (v === null || v === undefined) return "";
      const text = typeof v === "string" ? v : toText(v, opts);
      return text === null ? "" : tsvEscape(text);
    }).join("\t");
}

function reference(format: RowTextFormat, columns: readonly string[], opts: RenderOptions) {
  return format === "json"
    ? jsonRow(columns, opts)
    : format === "csv"
    ? csvRow(columns, opts)
    : tsvRow(columns, opts);
}

/** The rows through the compiled writer, each row's bytes on its own (cut at `ends`). */
function written(
  format: RowTextFormat,
  columns: readonly string[],
  opts: RenderOptions,
  rows: readonly Row[],
  sinkSize = 16,
): Uint8Array[] {
  const sink = new ByteSink(sinkSize);
  const ends: number[] = [];
  const write = compileRowBytesWriter(format, columns, opts);
  // Two calls: the writer keeps state (timestamp caches) across batches.
  const half = Math.floor(rows.length / 2);
  write(rows.slice(0, half), sink, ends);
  write(rows.slice(half), sink, ends);
  assert.equal(ends.length, rows.length);
  return ends.map((end, i) => sink.bytes.slice(i === 0 ? 0 : ends[i - 1], end));
}

function assertSame(
  format: RowTextFormat,
  columns: readonly string[],
  opts: RenderOptions,
  rows: readonly Row[],
): void {
  const ref = reference(format, columns, opts);
  const got = written(format, columns, opts, rows);
  rows.forEach((row, i) => {
    const want = encoder.encode(ref(row));
    assert.deepEqual(got[i], want, `${format} row ${i}: ${decoder.decode(got[i])} ≠ ${ref(row)}`);
  });
}

const MS = Date.UTC(2024, 4, 1, 13, 5, 7, 89);
const OPTIONS: RenderOptions[] = [
  { timeZone: "UTC" },
  { timeZone: "Europe/Berlin" },
  { timeZone: "America/St_Johns" },
  { timeZone: "Asia/Kolkata", timestampFormat: "yyyy-MM-dd HH:mm:ss.SSS Z" },
  { timeZone: "UTC", timestampFormat: "dd/MMM/yyyy 'at' \"HH\"\tmm" },
];
const FORMATS: RowTextFormat[] = ["json", "csv", "tsv"];

const EDGE_ROW: Row = {
  i: 42,
  neg: -17,
  min32: -2147483648,
  max32: 2147483647,
  big: 2 ** 53 - 1,
  bigNeg: -(2 ** 53 - 1),
  beyond: 2 ** 60,
  d: 2.5,
  tiny: 1e-7,
  huge: 1e21,
  negZero: -0,
  inf: Infinity,
  nan: NaN,
  s: 'say "hi";\n\ttab\\back',
  empty: "",
  uni: "Zürich – 東京 😀",
  lone: "a\ud800b",
  ctrl: "\u0001\u001f\u007f",
  b: true,
  f: false,
  t: new Timestamp(MS),
  tOld: new Timestamp(Date.UTC(-50, 0, 1)),
  tFar: new Timestamp(Date.UTC(12000, 0, 1, 0, 0, 0, 5)),
  tNeg: new Timestamp(-1),
  iv: new Interval(90_000),
  ivFrac: new Interval(1.5),
  ip: parseIp("10.1.2.3"),
  ipZero: parseIp("0.0.0.0"),
  ipMax: parseIp("255.255.255.255"),
  ip6: parseIp("2001:db8::1"),
  mapped: parseIp("::ffff:1.2.3.4"),
  net: parseNet("10.0.0.0/8"),
  arr: [1, "x", null, new Timestamp(MS)],
  tup: { a: 1, when: new Timestamp(MS), 'q"k': [true] },
  emptyArr: [],
  emptyTup: {},
  n: null,
};
const EDGE_COLUMNS = [...Object.keys(EDGE_ROW), "missing", 'odd "name";\t'];

Deno.test("compileRowBytesWriter() writes every kind of value as API.md says", () => {
  for (const format of FORMATS) {
    for (const opts of OPTIONS) {
      assertSame(format, EDGE_COLUMNS, opts, [EDGE_ROW, {}, EDGE_ROW]);
      assertSame(format, [], opts, [EDGE_ROW, {}]);
      assertSame(format, ["only"], opts, [{ only: null }, { only: "x" }]);
    }
  }
});

Deno.test("compileRowBytesWriter(): timestamps of one second and across a zone's change", () => {
  // Europe/Berlin goes from +01:00 to +02:00 at 2024-03-31T01:00:00Z.
  const change = Date.UTC(2024, 2, 31, 1);
  const rows: Row[] = [];
  for (let ms = change - 2500; ms < change + 2500; ms += 250) {
    rows.push({ t: new Timestamp(ms) }, { t: new Timestamp(ms + 1) });
  }
  for (const format of FORMATS) {
    for (const opts of OPTIONS) assertSame(format, ["t"], opts, rows);
  }
});

const valueArb: fc.Arbitrary<Value> = fc.letrec<{ value: Value; scalar: Value }>((tie) => ({
  scalar: fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }),
    fc.double(),
    fc.string({ unit: "binary" }),
    fc.string(),
    fc.integer({ min: -62_000_000_000_000, max: 250_000_000_000_000 }).map((ms) =>
      new Timestamp(ms)
    ),
    fc.integer({ min: 0, max: 2 ** 40 }).map((ms) => new Interval(ms)),
    fc.integer({ min: 0, max: 0xffffffff }).map((b) => new IpAddr(4, b)),
    fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }).map((b) => new IpAddr(6, b)),
    fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 32 })).map((
      [b, p],
    ) => new IpNet(new IpAddr(4, p === 0 ? 0 : (b >>> (32 - p)) << (32 - p) >>> 0), p)),
  ) as fc.Arbitrary<Value>,
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    tie("scalar"),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 4 }), tie("value"), { maxKeys: 3 }),
  ) as fc.Arbitrary<Value>,
})).value;

Deno.test("compileRowBytesWriter(): the bytes API.md says on generated rows", () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.string({ maxLength: 6 }), { minLength: 0, maxLength: 6 }),
      fc.array(fc.array(valueArb, { minLength: 6, maxLength: 6 }), { maxLength: 8 }),
      fc.constantFrom(...FORMATS),
      fc.constantFrom(...OPTIONS),
      (columns, values, format, opts) => {
        const rows = values.map((vs) => {
          const row: Row = {};
          columns.forEach((c, i) => {
            if (i !== 3) row[c] = vs[i]!;
          });
          return row;
        });
        assertSame(format, columns, opts, rows);
      },
    ),
    { numRuns: 400 },
  );
});

Deno.test("compileRowBytesWriter(): values computed by column functions, nulls noted", () => {
  const rows: Row[] = [{ a: 1, b: "x" }, { a: null, b: "y" }, { a: 3 }];
  const read = [(r: Row) => r.b ?? null, (r: Row) => (typeof r.a === "number" ? r.a * 2 : null)];
  for (const format of FORMATS) {
    const nulls = [false, false];
    const fused = compileRowBytesWriter(format, ["B", "twice"], { timeZone: "UTC" }, {
      read,
      nulls,
    });
    const sink = new ByteSink(4);
    const ends: number[] = [];
    fused(rows, sink, ends);
    const projected = rows.map((r) => ({ B: read[0]!(r), twice: read[1]!(r) }));
    const want = projected.map(reference(format, ["B", "twice"], { timeZone: "UTC" })).join("");
    assert.equal(decoder.decode(sink.bytes.subarray(0, sink.at)), want, format);
    assert.deepEqual(nulls, [true, true]);
  }
});

Deno.test("compileRowBytesWriter(): a frame's lead and trail around each row, ends after the trail", () => {
  const decoder = new TextDecoder();
  for (const format of FORMATS) {
    for (const columns of [EDGE_COLUMNS, [], ["only"]]) {
      for (
        const [lead, trail] of [[",", ""], ["\x1e", "\n"], ["", "\n"], [",ü", "\r\n"]] as const
      ) {
        const rows = [EDGE_ROW, {}, { only: "x" }];
        const opts = OPTIONS[0]!;
        const bare = new ByteSink();
        const bareEnds: number[] = [];
        compileRowBytesWriter(format, columns, opts)(rows, bare, bareEnds);
        const sink = new ByteSink();
        const ends: number[] = [];
        compileRowBytesWriter(format, columns, opts, { lead, trail })(rows, sink, ends);
        const want: string[] = [];
        let start = 0;
        for (const end of bareEnds) {
          want.push(lead + decoder.decode(bare.bytes.subarray(start, end)) + trail);
          start = end;
        }
        const got: string[] = [];
        start = 0;
        for (const end of ends) {
          got.push(decoder.decode(sink.bytes.subarray(start, end)));
          start = end;
        }
        assert.deepEqual(got, want, `${format} ${columns.length} ${JSON.stringify(lead)}`);
      }
    }
  }
});

Deno.test("tsvEscape() escapes each of tab, line feed, carriage return and backslash, alone or together", () => {
  const cases: [string, string][] = [
    ["plain", "plain"],
    ["", ""],
    ["a\rb", "a\\rb"],
    ["\r", "\\r"],
    ["a\tb", "a\\tb"],
    ["a\nb", "a\\nb"],
    ["a\\b", "a\\\\b"],
    ["\r\n\t\\", "\\r\\n\\t\\\\"],
  ];
  for (const [text, want] of cases) assert.equal(tsvEscape(text), want, JSON.stringify(text));
  // And in a written row: a text whose only special character is a carriage return.
  const [row] = written("tsv", ["s", "t"], { timeZone: "UTC" }, [{ s: "x\ry", t: "\r" }]);
  assert.equal(decoder.decode(row), "x\\ry\t\\r");
});

Deno.test("ByteSink.text() writes a character of 3 UTF-8 bytes whole wherever the buffer ends", () => {
  for (const text of ["€", "a東", "Zürich – 東京", "東京😀€", "\u0800\uffff"]) {
    for (let size = 1; size <= 12; size++) {
      for (let lead = 0; lead <= size; lead++) {
        const sink = new ByteSink(size);
        sink.text("x".repeat(lead));
        sink.text(text);
        sink.text("!");
        const got = decoder.decode(sink.bytes.subarray(0, sink.at));
        assert.equal(got, "x".repeat(lead) + text + "!", `size ${size}, lead ${lead}`);
      }
    }
  }
});
