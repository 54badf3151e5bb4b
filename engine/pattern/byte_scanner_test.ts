import assert from "node:assert/strict";
import fc from "fast-check";
import { compilePattern } from "./compile_pattern.ts";
import { parsePattern } from "./parse_pattern.ts";
import { IpAddr, type Row, Timestamp, type Value } from "../values/values.ts";
import { ColumnSink, sinkVectors } from "./byte_scanner.ts";
import { decodeBlock, encodeColumns, UNCACHED } from "../fs/column_block.ts";
import type { ColumnVectors } from "../render/render_bytes.ts";
import { bytesText } from "../values/short_strings.ts";
import type { PatternElement } from "./pattern_ast.ts";

const ACCESS =
  `IPADDR:client ' ' NSPACE:ident ' ' NSPACE:user ' [' HTTPDATE:time '] "' NSPACE:method ' ' ` +
  `NSPACE:path ' ' NSPACE:protocol '" ' INT:status ' ' LONG:bytes? ' ' DQS:referrer ' ' DQS:agent`;

/** Patterns the scanner covers, each with generators of the pieces its lines are made of. */
const PATTERNS: readonly string[] = [
  ACCESS,
  `IPV4:ip ' ' INT:n? ' ' WORD:w? ' ' DQS:q? ' ' HTTPDATE:t? '|' NSPACE:rest`,
  `NSPACE:a '"' NSPACE:b ']]' LONG:c`,
  `WORD:k '=' INT:v ' ' IPADDR:ip? ';' NSPACE ' ' DQS`,
];

const encoder = new TextEncoder();

function scanLine(pattern: string, needed: readonly string[], line: string) {
  const compiled = compilePattern(pattern, { timeZone: "UTC" });
  assert.ok(compiled.ok);
  const scanner = compiled.pattern.makeByteScanner(needed);
  assert.ok(scanner, "the scanner covers the pattern");
  const extractor = compiled.pattern.makeExtractor(needed);
  const bytes = encoder.encode(`${line}\n`);
  return { scanned: scanner.scan(bytes, 0), next: scanner.next, length: bytes.length, extractor };
}

const TRICKY = [
  "a",
  "Z",
  "0",
  "7",
  ".",
  ":",
  "-",
  "+",
  '"',
  "\\",
  " ",
  "\t",
  "\r",
  "\u0001",
  "\u000b",
  "\u007f",
  "é",
  "\u00a0",
  "\u2028",
  "]",
  "_",
  "/",
];
const tricky = fc.string({ unit: fc.constantFrom(...TRICKY), maxLength: 6 });

/** Field texts the scanner models: lines made of these alone are taken (most of them). */
const CLEAN: Record<string, readonly string[]> = {
  INT: ["0", "42", "-7", "+12", "2147483647", "-2147483648", "2147483648", "-2147483649"],
  LONG: ["0", "512", "-3", "9007199254740993", "123456789012345678"],
  WORD: ["w", "word_1", "A9"],
  NSPACE: ["x", "/a?b=c", 'q"x', "HTTP/1.1"],
  DQS: ['"a b"', '"x\\"y"', '"\\\\"', '""'],
  IPV4: ["1.2.3.4", "255.255.255.255", "256.1.1.1", "01.002.3.4"],
  IPADDR: ["10.0.0.1", "1.2.3.400"],
  HTTPDATE: ["01/May/2024:00:00:00 +0000", "31/Dec/1999:23:59:59 -0130"],
};

/** The clean texts and odd ones: texts the expression decides, or that match nothing. */
const SAMPLES: Record<string, readonly string[]> = {
  INT: [...CLEAN.INT!, "12345678901234567890", "2147483646", "-2147483647"],
  LONG: CLEAN.LONG!,
  WORD: CLEAN.WORD!,
  NSPACE: [...CLEAN.NSPACE!, "é"],
  DQS: [...CLEAN.DQS!, '"é"', '"a\\\rb"', '"a\\\u2028"'],
  IPV4: [...CLEAN.IPV4!, "1.2.3.4567"],
  IPADDR: [...CLEAN.IPADDR!, "::1", "fe80::1", "a.b.c.d"],
  HTTPDATE: [...CLEAN.HTTPDATE!, "1/May/2024:00:00"],
};

/**
 * One seed for the property tests of this file, so that a run is repeatable: set
 * TRAWL_TEST_SEED to replay another (a failure names the seed it ran with).
 */
const SEED = Number(Deno.env.get("TRAWL_TEST_SEED") ?? 16_2026);

/** Runs `check` with the seed, naming it in any failure. */
function seeded(check: (seed: number) => void): void {
  try {
    check(SEED);
  } catch (e) {
    throw new Error(`failed with seed ${SEED} (TRAWL_TEST_SEED=${SEED} replays it)`, { cause: e });
  }
}

/** Lines in the shape of `pattern`: half clean, half with odd fields and a few edits. */
function linesOf(pattern: string): fc.Arbitrary<string> {
  const parsed = parsePattern(pattern);
  assert.ok(parsed.ok);
  const matchers = parsed.elements.map((el) => {
    if (el.kind === "choice") throw new Error("no choices here");
    return el;
  });
  const clean = fc.tuple(
    ...matchers.map((el) =>
      el.kind === "literal" ? fc.constant(el.text) : fc.constantFrom(...CLEAN[el.matcher]!)
    ),
  ).map((texts) => texts.join(""));
  return fc.oneof(clean, noisyLinesOf(matchers));
}

/** Lines with each field a sample or tricky text, then a few edits: most do not match. */
function noisyLinesOf(
  elements: readonly Exclude<PatternElement, { kind: "choice" }>[],
): fc.Arbitrary<string> {
  const parts = elements.map((el) => {
    if (el.kind === "literal") return fc.constant(el.text);
    const samples = fc.constantFrom(...SAMPLES[el.matcher]!);
    return fc.oneof(
      { weight: 30, arbitrary: samples },
      { weight: 1, arbitrary: tricky },
      { weight: 1, arbitrary: fc.tuple(samples, tricky).map(([a, b]) => a + b) },
      { weight: 1, arbitrary: fc.constant("-") },
    );
  });
  const edits = fc.array(fc.tuple(fc.nat(), fc.constantFrom("", ...TRICKY)), { maxLength: 2 });
  return fc.tuple(fc.tuple(...parts), edits).map(([texts, changes]) => {
    let text = texts.join("");
    for (const [at, c] of changes) {
      const k = text.length === 0 ? 0 : at % text.length;
      text = text.slice(0, k) + c + text.slice(k + 1);
    }
    return text.replace(/\n/g, "");
  });
}

/** Lines built field by field in each pattern's own shape (most of them match). */
const accessLine = fc.tuple(
  fc.constantFrom("10.0.0.1", "192.168.1.255", "1.2.3.400", "::1"),
  fc.constantFrom("-", "ann", "é"),
  fc.constantFrom("01/May/2024:10:00:01 +0000", "01/May/2024:10:00:01"),
  fc.constantFrom("GET", "POST"),
  fc.constantFrom("/", "/a b", '/q"x', "/é"),
  fc.constantFrom("HTTP/1.1", 'HTTP/1.1"'),
  fc.constantFrom("200", "404", "-1", "99999999999"),
  fc.constantFrom("512", "-", "", "12345678901234567"),
  fc.constantFrom('"-"', '"http://x/"', '"a\\"b"', '"\\\\"', '"\\'),
  fc.constantFrom('"curl/8"', '"Mozilla (X11; é)"', '"x" trailing', '"open'),
).map(([c, u, t, m, p, pr, s, b, r, a]) =>
  `${c} - ${u} [${t}] "${m} ${p} ${pr}" ${s} ${b} ${r} ${a}`
);

function same(pattern: string, needed: readonly string[], text: string): boolean {
  const { scanned, next, length, extractor } = scanLine(pattern, needed, text);
  if (scanned === undefined) return false;
  const expected: Row | null = extractor(text);
  assert.notEqual(expected, null, `the scanner took a line the expression rejects: ${text}`);
  assert.deepEqual(scanned, expected, `rows differ for ${JSON.stringify(text)}`);
  assert.equal(next, length, "the next line starts after this one");
  return true;
}

Deno.test("the byte scanner gives the expression's row for every line it takes", () => {
  for (const pattern of PATTERNS) {
    const compiled = compilePattern(pattern, { timeZone: "UTC" });
    assert.ok(compiled.ok);
    const all = compiled.pattern.fields.map((f) => f.name);
    let taken = 0;
    seeded((seed) => {
      fc.assert(
        fc.property(linesOf(pattern), fc.subarray(all), (text, needed) => {
          if (same(pattern, needed, text)) taken++;
        }),
        { numRuns: 3000, seed },
      );
      // Half the lines are clean: the scanner must take most of those, not leave them.
      assert.ok(taken > 1000, `the scanner took ${taken} lines of 3000 of ${pattern}`);
    });
  }
});

Deno.test("the byte scanner takes well-formed access lines and matches the expression", () => {
  const compiled = compilePattern(ACCESS, { timeZone: "UTC" });
  assert.ok(compiled.ok);
  const all = compiled.pattern.fields.map((f) => f.name);
  let taken = 0;
  let matching = 0;
  seeded((seed) => {
    fc.assert(
      fc.property(accessLine, fc.subarray(all), (text, needed) => {
        if (same(ACCESS, needed, text)) taken++;
        // Lines it may leave to the expression: an IPv6 client, non-ASCII outside quotes.
        if (compiled.pattern.makeExtractor(needed)(text) !== null && !/::1|é/.test(text)) {
          matching++;
        }
      }),
      { numRuns: 3000, seed },
    );
    // The scanner does the work for the lines it models, it does not leave them to the
    // expression.
    assert.ok(matching > 50, `matching lines: ${matching}`);
    assert.ok(taken >= matching, `taken ${taken} of ${matching}`);
  });
});

Deno.test("the byte scanner reads INT bounds and their neighbours as the expression does", () => {
  const pattern = `WORD:k '=' INT:v ' ' LONG:l`;
  for (
    const [text, value] of [
      ["2147483647", 2147483647],
      ["+2147483647", 2147483647],
      ["2147483646", 2147483646],
      ["2147483648", null],
      ["-2147483648", -2147483648],
      ["-2147483647", -2147483647],
      ["-2147483649", null],
      ["02147483647", 2147483647],
      ["4294967296", null],
    ] as const
  ) {
    const line = `k=${text} ${text}`;
    const { scanned, extractor } = scanLine(pattern, ["v", "l"], line);
    assert.ok(scanned, line);
    assert.equal(scanned.v, value, line);
    assert.deepEqual(scanned, extractor(line), line);
  }
});

Deno.test("the byte scanner reads numbers, addresses and absent fields like the converters", () => {
  const line = '10.1.2.3 - - [01/May/2024:10:00:01 +0000] "GET / HTTP/1.1" 200 - "-" "c"';
  const { scanned } = scanLine(ACCESS, ["client", "status", "bytes", "time", "agent"], line);
  assert.ok(scanned);
  assert.equal(scanned.status, 200);
  assert.equal(scanned.bytes, null);
  assert.equal(scanned.agent, "c");
  assert.deepEqual(
    scanned,
    scanLine(ACCESS, ["client", "status", "bytes", "time", "agent"], line)
      .extractor(line),
  );
  const big = line.replace(" 200 -", " 2147483648 9007199254740993");
  assert.equal(scanLine(ACCESS, ["status", "bytes"], big).scanned?.status, null);
  assert.equal(scanLine(ACCESS, ["status", "bytes"], big).scanned?.bytes, null);
});

Deno.test("patterns the scanner does not cover get no scanner", () => {
  for (const p of [`LD:x ' ' INT:n`, `INT:a INT:b`, `(INT:a | '-') ' '`, `INT:a '1'`, `JSON:j`]) {
    const compiled = compilePattern(p, { timeZone: "UTC" });
    assert.ok(compiled.ok, p);
    assert.equal(
      compiled.pattern.makeByteScanner(compiled.pattern.fields.map((f) => f.name)),
      null,
    );
  }
});

Deno.test("a filter pushed into the byte scanner drops records before their row is built", () => {
  const compiled = compilePattern(ACCESS, { timeZone: "UTC" });
  assert.ok(compiled.ok);
  const seen: Row[] = [];
  const scanner = compiled.pattern.makeByteScanner(["client", "status"], {
    reads: new Set(["status"]),
    keep: (row) => {
      seen.push(row);
      return row.status === 200;
    },
  });
  assert.ok(scanner);
  const line = (status: number) =>
    encoder.encode(
      `10.1.2.3 - - [01/May/2024:10:00:01 +0000] "GET / HTTP/1.1" ${status} 5 "-" "c"\n`,
    );
  assert.equal(scanner.scan(line(404), 0), null);
  assert.equal(scanner.next, line(404).length);
  const kept = scanner.scan(line(200), 0);
  assert.ok(kept);
  assert.equal(kept.status, 200);
  assert.equal((kept.client as { bits: number }).bits, 0x0a010203);
  // The filter saw only the field it reads.
  assert.deepEqual(seen, [{ status: 404 }, { status: 200 }]);
});

Deno.test("one byte scanner over many lines gives the expression's rows, texts recurring or not", () => {
  const compiled = compilePattern(ACCESS, { timeZone: "UTC" });
  assert.ok(compiled.ok);
  const all = compiled.pattern.fields.map((f) => f.name);
  const scanner = compiled.pattern.makeByteScanner(all);
  assert.ok(scanner);
  const extractor = compiled.pattern.makeExtractor(all);
  // Times and methods recur line after line (the text table's hits), paths never do (past the
  // trial the field goes on without the table); some lines repeat a path of 32 bytes or more.
  const lines = Array.from({ length: 5000 }, (_, i) => {
    const path = i % 7 === 0 ? `/p/${"x".repeat(40)}` : `/item/${i}?q=${(i * 7919) % 10007}`;
    const second = String(Math.floor(i / 100) % 60).padStart(2, "0");
    return `10.0.${i % 250}.${i % 200} - - [01/May/2024:10:11:${second} +0000] ` +
      `"${i % 3 ? "GET" : "POST"} ${path} HTTP/1.1" ${200 + (i % 5)} ${i} "-" "agent ${i % 4}"`;
  });
  const bytes = encoder.encode(lines.join("\n") + "\n");
  let at = 0;
  for (const line of lines) {
    const row = scanner.scan(bytes, at);
    assert.deepEqual(row, extractor(line), line);
    at = scanner.next;
  }
  assert.equal(at, bytes.length);
});

/** Record `i`'s value of a sink's column as a writer reads it (span: its text). */
function columnValue(c: ColumnVectors, i: number): unknown {
  switch (c.kind) {
    case "span": {
      const s = c.vec[2 * i]!;
      return s < 0 ? null : bytesText(c.bytes, s, c.vec[2 * i + 1]!);
    }
    case "values":
      return c.list[i];
    case "ts":
      return c.tags![i] === 0 ? new Timestamp(c.vec[i]!) : c.tags![i] === 1 ? null : undefined;
    case "ip4":
      return c.tags![i] === 0 ? new IpAddr(4, c.vec[i]!) : c.tags![i] === 1 ? null : undefined;
    case "num":
      return c.tags![i] === 0 ? c.vec[i] : c.tags![i] === 1 ? null : undefined;
    default:
      throw new Error(`a sink gives no ${c.kind} column`);
  }
}

Deno.test("a sink keeps a scanner's plain texts as their bytes: the expression's values, and the block their strings make", () => {
  for (const pattern of PATTERNS) {
    const compiled = compilePattern(pattern, { timeZone: "UTC" });
    assert.ok(compiled.ok);
    const all = compiled.pattern.fields.map((f) => f.name);
    seeded((seed) => {
      fc.assert(
        fc.property(
          fc.array(pattern === ACCESS ? fc.oneof(accessLine, linesOf(pattern)) : linesOf(pattern), {
            minLength: 1,
            maxLength: 40,
          }),
          fc.subarray(all, { minLength: 1 }),
          fc.nat(),
          (lines, needed, cut) => {
            const sink = new ColumnSink(needed.length);
            const scanner = compiled.pattern.makeByteScanner(needed, undefined, undefined, sink);
            assert.ok(scanner);
            const extractor = compiled.pattern.makeExtractor(needed);
            // Two pieces, as a reader hands them (the bytes of the first gone when the second
            // is read), then the block; a line left to the expression goes in as its row.
            const want: Row[] = [];
            const at = cut % (lines.length + 1);
            for (const piece of [lines.slice(0, at), lines.slice(at)]) {
              const bytes = encoder.encode(piece.map((l) => `${l}\n`).join(""));
              let i = 0;
              for (const line of piece) {
                const row = extractor(line);
                if (row !== null) want.push(row);
                if (scanner.scan(bytes, i) === undefined && row !== null) {
                  sink.putRow(needed, row);
                }
                i += encoder.encode(line).length + 1;
              }
              bytes.fill(0);
            }
            assert.equal(sink.n, want.length);
            const columns = sinkVectors(sink, needed, needed);
            const values = needed.map((_, k) =>
              want.map((_, r) => columnValue(columns[k]!, r) as Value | undefined)
            );
            want.forEach((row, r) =>
              needed.forEach((name, k) => assert.deepEqual(values[k]![r], row[name] ?? null, name))
            );
            // The cache's block of the sink: the bytes of the block of those values as strings.
            assert.deepEqual(
              encodeColumns(UNCACHED, needed, sink),
              encodeColumns(UNCACHED, needed, { cols: values, ipv4: needed.map(() => false) }),
            );
          },
        ),
        { numRuns: 300, seed },
      );
    });
  }
  // The access log's path: bytes while the scanner takes every line; texts from the line the
  // expression read (an IPv6 client) on; a dictionary or texts in the block, as strings make.
  const compiled = compilePattern(ACCESS, { timeZone: "UTC" });
  assert.ok(compiled.ok);
  const line = (client: string, path: string) =>
    `${client} - - [01/May/2024:10:00:01 +0000] "GET ${path} HTTP/1.1" 200 5 "-" "curl"\n`;
  const sinkOf = (lines: string[]) => {
    const sink = new ColumnSink(2);
    const scanner = compiled.pattern.makeByteScanner(
      ["path", "status"],
      undefined,
      undefined,
      sink,
    );
    assert.ok(scanner);
    const bytes = encoder.encode(lines.join(""));
    for (let at = 0; at < bytes.length; at = bytes.indexOf(0x0a, at) + 1) {
      if (scanner.scan(bytes, at) === undefined) {
        sink.putRow(["path", "status"], { path: "/v6é", status: 200 });
      }
    }
    const [path] = sinkVectors(sink, ["path", "status"], ["path"]);
    return {
      kind: path!.kind,
      values: [...Array(sink.n).keys()].map((i) => columnValue(path!, i)),
      block: decodeBlock(encodeColumns(UNCACHED, ["path", "status"], sink), false).meta.columns[0]!
        .kind,
    };
  };
  const paths = Array.from({ length: 12 }, (_, i) => `/p/${i % 2}`);
  assert.deepEqual(sinkOf(paths.map((p) => line("10.0.0.1", p))), {
    kind: "span",
    values: paths,
    block: "dict",
  });
  assert.deepEqual(sinkOf([line("10.0.0.1", "/a"), line("10.0.0.2", "/b?x=1")]), {
    kind: "span",
    values: ["/a", "/b?x=1"],
    block: "str",
  });
  assert.deepEqual(
    sinkOf([line("10.0.0.2", "/b?x=1"), line("::1", "/v6é"), line("1.2.3.4", "/c")]),
    {
      kind: "span",
      values: ["/b?x=1", "/v6é", "/c"],
      block: "str",
    },
  );
});

Deno.test("a sink's field of bytes takes any text put as a value, and encodes as the strings would", () => {
  // Texts that are prefixes of each other (the dictionary's table compares whole texts),
  // non-ASCII bytes, a null and an absent value, a lone surrogate (kept as a string).
  const texts: (string | null | undefined)[] = [];
  for (let i = 0; i < 200; i++) {
    texts.push("/abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH".slice(0, 2 + (i % 40)));
  }
  const cases: (string | null | undefined)[][] = [
    texts,
    [...texts.slice(0, 20), null, undefined, "Zürich", "x"],
    ["a", "東京"],
    ["plain", "a\ud800b", "after"],
  ];
  for (const values of cases) {
    const sink = new ColumnSink(1);
    sink.span(0);
    const bytes = encoder.encode(values.map((v) => v ?? "").join("|"));
    let at = 0;
    for (const v of values) {
      if (sink.n === sink.cap) sink.grow();
      const length = encoder.encode(v ?? "").length;
      // Half of them as a scanner gives them (their bytes, while the field has spans), half
      // as rows of the expression.
      if (
        sink.n % 2 === 0 && sink.spans[0] !== null && v !== undefined && (v ?? "").isWellFormed()
      ) {
        sink.putSpan(0, bytes, v === null ? -1 : at, at + length);
        sink.n++;
      } else sink.putRow(["t"], v === undefined ? {} : { t: v });
      at += length + 1;
    }
    const [column] = sinkVectors(sink, ["t"], ["t"]);
    assert.deepEqual(values.map((_, i) => columnValue(column!, i)), values.map((v) => v ?? null));
    assert.deepEqual(
      encodeColumns(UNCACHED, ["t"], sink),
      encodeColumns(UNCACHED, ["t"], { cols: [values], ipv4: [false] }),
    );
  }
});
