/**
 * The readers on the SIMD scanner (TRAWL_SCANNER=wasm) against their JavaScript paths, which
 * are the reference: READ_JSON and PARSE over random and adversarial files streamed in reads of
 * random sizes (UTF-8 characters and CRLF cut between reads, empty lines, long lines, deep
 * nesting) must give the same rows, warnings and counts.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { setScannerPath } from "../engine/simd/scanner.ts";
import { readJsonSource } from "../engine/exec/read_json_source.ts";
import { parseSource } from "../engine/exec/parse_source.ts";
import { compilePattern } from "../engine/pattern/compile_pattern.ts";
import { testContext } from "./support/temp_tree.ts";
import { newQueryStats } from "../engine/plan/context.ts";
import type { FileEntry } from "../engine/contracts/datastore.ts";
import type { BatchStream, ExecContext } from "../engine/plan/context.ts";
import type { Row } from "../engine/values/values.ts";

const encoder = new TextEncoder();

/** A file of `bytes` read in pieces of the sizes given (cycled). */
function memoryFile(bytes: Uint8Array, sizes: readonly number[]): FileEntry {
  return {
    uri: "memory://f.log",
    size: bytes.length,
    modified: 0,
    pathTime: null,
    open: () => {
      let at = 0;
      let k = 0;
      return Promise.resolve(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            if (at >= bytes.length) return controller.close();
            const n = Math.max(1, sizes[k++ % sizes.length]!);
            // A copy: each read its own buffer, as a file's reads are.
            controller.enqueue(bytes.slice(at, at + n));
            at += n;
          },
        }),
      );
    },
  };
}

/** Rows, warnings and record counts of a source, under the scanner path given. */
async function run(path: "js" | "wasm", make: (ctx: ExecContext) => BatchStream) {
  setScannerPath(path);
  try {
    const ctx = { ...testContext(), stats: newQueryStats() } as unknown as ExecContext & {
      warnings: unknown[];
    };
    const rows: Row[] = [];
    for await (const batch of make(ctx)) rows.push(...batch);
    const stats = ctx.stats!;
    return {
      rows,
      warnings: ctx.warnings,
      read: stats.recordsRead,
      unmatched: stats.recordsUnmatched,
    };
  } finally {
    setScannerPath(undefined);
  }
}

const space = fc.constantFrom("", "", " ", "\t", "\r");
const str = fc.string({
  unit: fc.oneof(
    fc.constantFrom("é", "😀", '"', "\\", "\u0001", "€", "\u2028"),
    fc.string({ maxLength: 1 }),
  ),
  maxLength: 90,
});
const value = fc.oneof(
  str.map((s) => JSON.stringify(s)),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  fc.constantFrom("true", "false", "null", "[]", "{}", '"\\u00e9\\""', "1.", "tru", '"a'),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.nat(110).map((n) => `${"[".repeat(n)}${"]".repeat(n)}`),
);
const KEYS = ["status", "location", "city", "a", "x\\y", "é"];
const record = fc.array(
  fc.tuple(fc.constantFrom(...KEYS), space, value, space),
  { maxLength: 7 },
).map((members) =>
  `{${members.map(([k, a, v, b]) => `${a}${JSON.stringify(k)}${b}:${a}${v}${b}`).join(",")}}`
);
const jsonFile = fc.array(
  fc.oneof(
    { weight: 8, arbitrary: record },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(...KEYS), record).map(([k, r]) =>
        `{"${k}":${r},"location":{"city":${r}}}`
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom("", " ", "[1]", "not json", '{"a":"\u00e9\\', "{") },
  ),
  { minLength: 1, maxLength: 60 },
).chain((lines) =>
  fc.constantFrom("\n", "\r\n").map((nl) => lines.map((l) => l.replace(/\n/g, "")).join(nl) + nl)
);
const reads = fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 8 });

Deno.test("READ_JSON on the SIMD scanner gives the rows, warnings and counts of the JavaScript path", async () => {
  const fields: [string[], Map<string, string[][]> | undefined][] = [
    [["status"], undefined],
    [["status", "a"], undefined],
    [["location", "status"], new Map([["location", [["city"], ["a", "status"]]]])],
    [["x\\y", "é"], undefined],
  ];
  await fc.assert(
    fc.asyncProperty(jsonFile, reads, fc.nat(fields.length - 1), async (text, sizes, f) => {
      const file = memoryFile(encoder.encode(text), sizes);
      const [needed, paths] = fields[f]!;
      const make = (ctx: ExecContext) => readJsonSource([file], needed, ctx, undefined, paths);
      assert.deepEqual(await run("wasm", make), await run("js", make));
    }),
    { numRuns: 400 },
  );
});

const PATTERNS = [
  `IPADDR:client ' ' NSPACE:ident ' ' NSPACE:user ' [' HTTPDATE:time '] "' NSPACE:method ' ' ` +
  `NSPACE:path ' ' NSPACE:protocol '" ' INT:status ' ' LONG:bytes? ' ' DQS:referrer ' ' DQS:agent`,
  // A prefix of the line: the rest is stepped over (to the line end the search found).
  `IPADDR:client ' ' NSPACE:ident`,
  `INT:n ' ' NSPACE:word`,
];
const accessLine = fc.tuple(
  fc.constantFrom("10.0.0.1", "192.168.1.20", "::1", "300.1.2.3", "x"),
  fc.constantFrom("-", "frank", "jos\u00e9", "a\tb"),
  fc.constantFrom("/", "/caf\u00e9", "/x y", "/😀"),
  fc.constantFrom("200", "404", "-1", "99999999999"),
  fc.constantFrom("17", "-", "x", "00042"),
  fc.constantFrom(`"-"`, `"say \\"hi\\""`, `"back\\\\slash"`, `"open`, `"caf\u00e9"`),
  fc.string({ maxLength: 120 }).map((s) => JSON.stringify(s.replace(/[\n\r]/g, ""))),
).map(([ip, user, path, status, bytes, ref, agent]) =>
  `${ip} - ${user} [01/May/2024:00:00:01 +0000] "GET ${path} HTTP/1.1" ${status} ${bytes} ${ref} ${agent}`
);
const logFile = fc.array(
  fc.oneof(
    { weight: 8, arbitrary: accessLine },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.nat(), str).map(([n, s]) => `${n} ${s.replace(/[\n\r]/g, "")}`),
    },
    { weight: 1, arbitrary: fc.constantFrom("", "garbage", " ", "12", "\u00e9\u00e9") },
  ),
  { minLength: 1, maxLength: 60 },
).chain((lines) =>
  fc.tuple(fc.constantFrom("\n", "\r\n"), fc.boolean()).map(([nl, last]) =>
    lines.join(nl) + (last ? nl : "")
  )
);

Deno.test("PARSE with the SIMD line search gives the rows, warnings and counts of the JavaScript path", async () => {
  const compiled = PATTERNS.map((p) => {
    const r = compilePattern(p, { timeZone: "UTC" });
    if (!r.ok) throw new Error(r.message);
    return r.pattern;
  });
  await fc.assert(
    fc.asyncProperty(logFile, reads, fc.nat(PATTERNS.length - 1), async (text, sizes, k) => {
      const file = memoryFile(encoder.encode(text), sizes);
      const make = (ctx: ExecContext) => parseSource([file], compiled[k]!, null, ctx);
      assert.deepEqual(await run("wasm", make), await run("js", make));
    }),
    { numRuns: 400 },
  );
});
