/**
 * Optional pattern parts in every position (docs/language.md section 7, issue 28 item 1),
 * checked against a reference matcher written here: a plain backtracking matcher that follows
 * the documented order of choices, with the one documented exception spelled out:
 *
 * - literals match themselves; INT, WORD, NSPACE and SPACE runs are as long as possible first;
 *   LD is as short as possible first; a choice tries its alternatives in order; an optional
 *   part is present before absent (an optional INT or WORD takes a lone `-` as absent);
 *   the first way that matches the whole pattern wins;
 * - except a lazy LD right before an optional part: the part is present with the shortest LD
 *   that lets it and the rest of the pattern match, and absent only when no length does; then
 *   the next optional part after it is tried the same way; an LD with only absent parts after
 *   it at the pattern's end runs to the line's end;
 * - an EOL that nothing follows is the line's end.
 *
 * Random patterns and lines run on V8's engine, on the linear one (re2js), on the byte scanner
 * (for the patterns it covers: it may defer, never disagree), and end to end through PARSE on
 * one thread and on scan workers.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { compilePattern } from "../engine/pattern/compile_pattern.ts";
import { engineHome } from "./support/engine_home.ts";
import { createScanWorkers, type ScanWorkerPool } from "../actors/scan_workers.ts";
import type { Row } from "../engine/values/values.ts";

// ---- Patterns ----

type El =
  | { kind: "lit"; text: string; optional: boolean }
  | {
    kind: "m";
    m: "INT" | "WORD" | "NSPACE" | "SPACE" | "LD";
    name: string | null;
    optional: boolean;
    /** Reference only: an LD with only absent parts after it, at the pattern's end. */
    toEnd?: boolean;
  }
  | { kind: "eol" }
  | { kind: "group"; alts: El[][]; optional: boolean };

function print(seq: readonly El[]): string {
  return seq.map((el) => {
    switch (el.kind) {
      case "lit":
        return `'${el.text}'${el.optional ? "?" : ""}`;
      case "m":
        return `${el.m}${el.optional ? "?" : ""}${el.name === null ? "" : `:${el.name}`}`;
      case "eol":
        return "EOL";
      case "group":
        return `(${el.alts.map(print).join(" | ")})${el.optional ? "?" : ""}`;
    }
  }).join(" ");
}

const LITERALS = ["a", "b", " ", "ab", "1", "x ", "-"];
const LINE_CHARS = ["a", "b", " ", "1", "2", "x", "-", "ab", " x"];

/** A pattern without names; names are given in order afterwards so that none repeats. */
const leaf: fc.Arbitrary<El> = fc.oneof(
  fc.record({
    kind: fc.constant("lit" as const),
    text: fc.constantFrom(...LITERALS),
    optional: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("m" as const),
    m: fc.constantFrom(
      "INT" as const,
      "WORD" as const,
      "NSPACE" as const,
      "SPACE" as const,
      "LD" as const,
      "LD" as const,
    ),
    name: fc.constant(null),
    optional: fc.boolean(),
  }).map((el) => el.m === "LD" ? { ...el, optional: false } : el), // `LD?` would add nothing
);
const group: fc.Arbitrary<El> = fc.record({
  kind: fc.constant("group" as const),
  alts: fc.array(fc.array(leaf, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 2 }),
  optional: fc.boolean(),
});
const patternArb: fc.Arbitrary<El[]> = fc.tuple(
  fc.array(fc.oneof({ weight: 3, arbitrary: leaf }, { weight: 1, arbitrary: group }), {
    minLength: 1,
    maxLength: 6,
  }),
  fc.constantFrom("none", "eol", "group-eol"),
).map(([seq, end]) => {
  const out = [...seq];
  if (end === "eol") out.push({ kind: "eol" });
  // An optional part that ends the pattern with EOL: `(... EOL)?`.
  const last = out[out.length - 1];
  if (end === "group-eol" && last !== undefined && last.kind === "group") {
    out[out.length - 1] = { ...last, alts: last.alts.map((alt) => [...alt, { kind: "eol" }]) };
  }
  return name(out);
});

function name(seq: El[]): El[] {
  let n = 0;
  const walk = (s: El[]): El[] =>
    s.map((el) => {
      if (el.kind === "m" && el.m !== "SPACE") return { ...el, name: `f${n++}` };
      if (el.kind === "group") return { ...el, alts: el.alts.map(walk) };
      return el;
    });
  // The same name in two alternatives would be one field; numbering them apart keeps it simple.
  return walk(seq);
}

const lineArb = fc.array(fc.constantFrom(...LINE_CHARS), { minLength: 1, maxLength: 8 })
  .map((parts) => parts.join(""));

// ---- The reference matcher ----

type Caps = ReadonlyMap<string, string | null>;
type K = (pos: number, caps: Caps) => Caps | null;

function fieldsOf(seq: readonly El[], out: string[] = []): string[] {
  for (const el of seq) {
    if (el.kind === "m" && el.name !== null) out.push(el.name);
    if (el.kind === "group") { for (const alt of el.alts) fieldsOf(alt, out); }
  }
  return out;
}

/** The fields of the line's match (text; null absent), or null when the pattern does not match. */
function reference(pattern: readonly El[], line: string): Caps | null {
  const set = (caps: Caps, name: string | null, value: string | null): Caps =>
    name === null ? caps : new Map(caps).set(name, value);
  const runLengths = (m: string, pos: number): number[] => {
    const ok = m === "WORD"
      ? (c: string) => /\w/.test(c)
      : m === "NSPACE"
      ? (c: string) => /\S/.test(c)
      : (c: string) => c === " " || c === "\t";
    let end = pos;
    while (end < line.length && ok(line[end]!)) end++;
    const lengths: number[] = [];
    for (let n = end - pos; n >= 1; n--) lengths.push(n);
    return lengths;
  };
  /** `el` present at `pos` (a dash for an optional INT or WORD after its real forms). */
  const present = (el: El, pos: number, caps: Caps, atEnd: boolean, k: K): Caps | null => {
    switch (el.kind) {
      case "lit":
        return line.startsWith(el.text, pos) ? k(pos + el.text.length, caps) : null;
      case "eol":
        if (atEnd) return pos === line.length ? k(pos, caps) : null;
        return null; // no line break inside these one-line records
      case "group": {
        for (const alt of el.alts) {
          const r = seq(alt, 0, pos, caps, atEnd, k);
          if (r !== null) return r;
        }
        return null;
      }
      case "m": {
        if (el.m === "LD") {
          for (let end = el.toEnd === true ? line.length : pos; end <= line.length; end++) {
            const r = k(end, set(caps, el.name, line.slice(pos, end)));
            if (r !== null) return r;
          }
          return null;
        }
        if (el.m === "INT") {
          const m = /^[-+]?\d+/.exec(line.slice(pos));
          if (m !== null) {
            // [-+]? then \d+, greedy: the sign, the longest digits first.
            const sign = /^[-+]/.test(m[0]) ? 1 : 0;
            for (let n = m[0].length; n > sign; n--) {
              const r = k(pos + n, set(caps, el.name, m[0].slice(0, n)));
              if (r !== null) return r;
            }
          }
        } else {
          for (const n of runLengths(el.m, pos)) {
            const r = k(pos + n, set(caps, el.name, line.slice(pos, pos + n)));
            if (r !== null) return r;
          }
        }
        if (el.optional && (el.m === "INT" || el.m === "WORD") && line[pos] === "-") {
          return k(pos + 1, set(caps, el.name, null));
        }
        return null;
      }
    }
  };
  const absent = (el: El, caps: Caps): Caps => {
    let out = caps;
    for (const n of fieldsOf([el])) out = set(out, n, null);
    return out;
  };
  const one = (el: El, pos: number, caps: Caps, atEnd: boolean, k: K): Caps | null => {
    const r = present(el, pos, caps, atEnd, k);
    if (r !== null || !("optional" in el) || !el.optional) return r;
    return k(pos, absent(el, caps));
  };
  const seq = (
    s: readonly El[],
    i: number,
    pos: number,
    caps: Caps,
    atEnd: boolean,
    k: K,
  ): Caps | null => {
    if (i === s.length) return k(pos, caps);
    const el = s[i]!;
    const elAtEnd = atEnd && i === s.length - 1;
    const next = s[i + 1];
    if (
      el.kind === "m" && el.m === "LD" && !el.optional && next !== undefined &&
      "optional" in next && next.optional
    ) {
      // The exception: the optional part present with the shortest LD that lets it be...
      const nextAtEnd = atEnd && i + 1 === s.length - 1;
      for (let end = pos; end <= line.length; end++) {
        const r = present(
          next,
          end,
          set(caps, el.name, line.slice(pos, end)),
          nextAtEnd,
          (p, c) => seq(s, i + 2, p, c, atEnd, k),
        );
        if (r !== null) return r;
      }
      // ... else absent, and the LD meets what follows the same way; with nothing after it at
      // the pattern's end, it runs to the line's end.
      const rest = s.slice(i + 2);
      const ld: El = atEnd && rest.length === 0 ? { ...el, toEnd: true } : el;
      return seq([ld, ...rest], 0, pos, absent(next, caps), atEnd, k);
    }
    return one(el, pos, caps, elAtEnd, (p, c) => seq(s, i + 1, p, c, atEnd, k));
  };
  return seq(pattern, 0, 0, new Map(), true, (_pos, caps) => caps);
}

// ---- The engines ----

type Expected = Record<string, string | number | null> | null;

function expected(pattern: readonly El[], line: string): Expected {
  const caps = reference(pattern, line);
  if (caps === null) return null;
  const ints = new Set<string>();
  const walk = (seq: readonly El[]) => {
    for (const el of seq) {
      if (el.kind === "m" && el.m === "INT" && el.name !== null) ints.add(el.name);
      if (el.kind === "group") el.alts.forEach(walk);
    }
  };
  walk(pattern);
  const out: Record<string, string | number | null> = {};
  for (const name of fieldsOf(pattern)) {
    const text = caps.get(name) ?? null;
    out[name] = text === null ? null : ints.has(name) ? Number(text) : text;
  }
  return out;
}

function plain(row: Row, names: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of names) out[name] = row[name] ?? null;
  return out;
}

/** The rows of one line on V8's engine or the linear one. */
function onEngine(text: string, line: string, linear: boolean): Record<string, unknown> | null {
  const compiled = compilePattern(text, linear ? { timeZone: "UTC", linear } : { timeZone: "UTC" });
  if (!compiled.ok) throw new Error(`${text}: ${compiled.message}`);
  const names = compiled.pattern.fields.map((f) => f.name);
  const rows: Row[] = [];
  compiled.pattern.extractAll(`${line}\n`, 0, line.length + 1, (row) => rows.push(row));
  const row = rows[0];
  return row === undefined ? null : plain(row, names);
}

Deno.test("optional parts in every position: V8's engine and the linear one agree with the reference", () => {
  fc.assert(
    fc.property(patternArb, fc.array(lineArb, { minLength: 1, maxLength: 6 }), (pattern, lines) => {
      const text = print(pattern);
      for (const line of lines) {
        const want = expected(pattern, line);
        assert.deepEqual(
          onEngine(text, line, false),
          want,
          `V8: ${text} over ${JSON.stringify(line)}`,
        );
        assert.deepEqual(
          onEngine(text, line, true),
          want,
          `linear: ${text} over ${JSON.stringify(line)}`,
        );
      }
    }),
    { numRuns: 1500 },
  );
});

/** Patterns of the byte scanner's shape: literals and INT, WORD, NSPACE, any of them optional. */
const scannerPatternArb: fc.Arbitrary<El[]> = fc.array(
  fc.oneof(
    fc.record({
      kind: fc.constant("lit" as const),
      text: fc.constantFrom(...LITERALS),
      optional: fc.constant(false),
    }),
    fc.record({
      kind: fc.constant("m" as const),
      m: fc.constantFrom("INT" as const, "WORD" as const, "NSPACE" as const),
      name: fc.constant(null),
      optional: fc.boolean(),
    }),
  ),
  { minLength: 1, maxLength: 6 },
).map(name);

Deno.test("optional parts on the byte scanner: a row it gives is the reference's", () => {
  let scanned = 0;
  fc.assert(
    fc.property(
      scannerPatternArb,
      fc.array(lineArb, { minLength: 1, maxLength: 6 }),
      (pattern, lines) => {
        const text = print(pattern);
        const compiled = compilePattern(text, { timeZone: "UTC" });
        if (!compiled.ok) throw new Error(`${text}: ${compiled.message}`);
        const names = compiled.pattern.fields.map((f) => f.name);
        const scanner = compiled.pattern.makeByteScanner(names);
        if (scanner === null) return;
        for (const line of lines) {
          const row = scanner.scan(new TextEncoder().encode(`${line}\n`), 0);
          if (row === undefined) continue; // the expression decides
          scanned++;
          assert.deepEqual(
            row === null ? null : plain(row, names),
            expected(pattern, line),
            `byte scanner: ${text} over ${JSON.stringify(line)}`,
          );
        }
      },
    ),
    { numRuns: 1500 },
  );
  assert.ok(scanned > 200, `the byte scanner answered ${scanned} lines`);
});

Deno.test("optional parts through PARSE, on one thread and on 3 scan workers", async () => {
  await using home = await engineHome();
  const real = createScanWorkers({
    count: 3,
    dataDir: home.tree.root,
    grants: () => [],
    minShareBytes: 1,
  });
  let shares = 0;
  const pool: ScanWorkerPool = {
    close: () => real.close(),
    count: 3,
    minShareBytes: 1,
    start(task, listen) {
      shares++;
      return real.start(task, listen);
    },
  };
  try {
    const samples = fc.sample(
      fc.tuple(patternArb, fc.array(lineArb, { minLength: 20, maxLength: 60 })),
      { numRuns: 12, seed: 28 },
    );
    // The shapes of issue 28 too, over lines with and without their optional parts.
    samples.push(
      [parse(`WORD:f0 ' ' LD:f1 ('ORDER BY ' LD:f2 EOL)?`), ["x ORDER BY 1", "y nothing", "z a b"]],
      [parse(`WORD:f0 ' ' LD:f1 ('ORDER BY ' INT:f2)? LD:f3 EOL`), [
        "x abc ORDER BY 1 tail",
        "z def tail2",
        "w ORDER BY x ORDER BY 7",
      ]],
    );
    for (const [pattern, lines] of samples) {
      const text = print(pattern);
      await home.write("/shared/opt/a.log", lines.join("\n") + "\n");
      // Workers take a pipeline that folds or drops rows (one that keeps every row is read
      // here): every field's combinations, counted.
      const fields = fieldsOf(pattern);
      const keys = fields.join(", ");
      const script = `PARSE(pattern: '''${text} ''', src: '/shared/opt/a.log')
        | select(${fields.map((f) => `${f}, `).join("")}count(*) as n)
        ${fields.length === 0 ? "" : `| group(${keys})`}`;
      const counts = new Map<string, number>();
      for (const line of lines) {
        const row = expected(pattern, line);
        if (row === null) continue;
        const key = JSON.stringify(fields.map((f) => row[f]));
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      const want = [...counts].map(([key, n]) => `${key} ${n}`).sort();
      if (fields.length === 0 && want.length === 0) want.push("[] 0");
      for (const scanWorkers of [undefined, pool]) {
        const { rows } = await home.run(script, scanWorkers ? { scanWorkers } : {});
        const got = rows.map((row) =>
          `${JSON.stringify(fields.map((f) => row[f] ?? null))} ${row["n"]}`
        ).sort();
        assert.deepEqual(
          got,
          want,
          `${scanWorkers ? "3 workers" : "1 thread"}: ${text} over ${JSON.stringify(lines)}`,
        );
      }
    }
    assert.ok(shares >= samples.length * 2, `${shares} shares on workers`);
  } finally {
    await pool.close();
  }
});

/** The test's El form of a pattern written with the generator's elements. */
function parse(text: string): El[] {
  const tokens = text.match(/'[^']*'|\(|\)\??|\||[A-Z]+\??(?::\w+)?/g) ?? [];
  let at = 0;
  const sequence = (): El[] => {
    const out: El[] = [];
    while (at < tokens.length && tokens[at] !== "|" && !tokens[at]!.startsWith(")")) {
      const t = tokens[at++]!;
      if (t.startsWith("'")) out.push({ kind: "lit", text: t.slice(1, -1), optional: false });
      else if (t === "(") {
        const alts = [sequence()];
        while (tokens[at] === "|") {
          at++;
          alts.push(sequence());
        }
        const close = tokens[at++]!;
        out.push({ kind: "group", alts, optional: close === ")?" });
      } else if (t === "EOL") out.push({ kind: "eol" });
      else {
        const [m, n] = t.split(":");
        const optional = m!.endsWith("?");
        out.push({
          kind: "m",
          m: m!.replace("?", "") as "INT",
          name: n ?? null,
          optional,
        });
      }
    }
    return out;
  };
  return sequence();
}

Deno.test("in a record of several lines, an LD with absent parts after it ends with its line, a DATA with the record, on both engines", () => {
  const record = "09:00:01 INFO started\r\n  more";
  const cases: [string, Record<string, unknown>][] = [
    [`WORD ':' WORD ':' WORD ' ' WORD:level ' ' LD:text ('ORDER BY ' INT:ob)?`, {
      level: "INFO",
      text: "started",
      ob: null,
    }],
    [`WORD ':' WORD ':' WORD ' ' WORD:level ' ' DATA:text ('ORDER BY ' INT:ob)?`, {
      level: "INFO",
      text: "started\r\n  more",
      ob: null,
    }],
    [`WORD ':' WORD ':' WORD ' ' WORD:level ' ' DATA:text ('ORDER BY ' INT:ob EOL)?`, {
      level: "INFO",
      text: "started\r\n  more",
      ob: null,
    }],
  ];
  for (const [text, want] of cases) {
    for (const linear of [false, true]) {
      const compiled = compilePattern(text, { timeZone: "UTC", records: true, linear });
      if (!compiled.ok) throw new Error(compiled.message);
      const rows: Row[] = [];
      compiled.pattern.extractAll(record, 0, record.length, (row) => rows.push(row));
      const names = compiled.pattern.fields.map((f) => f.name);
      assert.deepEqual(
        rows[0] && plain(rows[0], names),
        want,
        `${linear ? "linear" : "V8"}: ${text}`,
      );
    }
  }
});
