/**
 * The error corpus: every `tests/errors/*.sx` is a script that check() must refuse.
 *
 * Format: the file starts with one header comment per expected diagnostic, in the order check()
 * reports them (by position):
 *
 *   // expect: line 3, column 14: SYNTAX_ERROR: expected ')' after the arguments of filter
 *
 * Line and column count the header lines too (they are part of the script, as comments). The
 * text after the code is a substring the message must contain. The number of diagnostics must
 * equal the number of `// expect:` lines; a mismatch prints expected and actual side by side.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { check } from "../engine/front/front.ts";
import type { Diagnostic } from "../engine/front/diagnostics.ts";

const DIR = fileURLToPath(new URL("./errors/", import.meta.url));
const EXPECT = /^\/\/ expect: line (\d+), column (\d+): ([A-Z_]+): (.+)$/;

interface Expectation {
  readonly line: number;
  readonly column: number;
  readonly code: string;
  readonly message: string;
}

function expectations(text: string, file: string): Expectation[] {
  const out: Expectation[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("// expect:")) break;
    const m = EXPECT.exec(line);
    if (!m) throw new Error(`${file}: malformed header '${line}'`);
    out.push({ line: Number(m[1]), column: Number(m[2]), code: m[3]!, message: m[4]! });
  }
  if (out.length === 0) throw new Error(`${file}: no '// expect:' header on the first line`);
  return out;
}

function matches(e: Expectation, d: Diagnostic): boolean {
  return e.line === d.line && e.column === d.column && e.code === d.code &&
    d.message.includes(e.message);
}

function diff(expected: readonly Expectation[], actual: readonly Diagnostic[]): string {
  const rows: string[] = [];
  for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
    const e = expected[i];
    const d = actual[i];
    const ok = e && d && matches(e, d);
    rows.push(
      `${ok ? "  " : "✗ "}expected: ${
        e ? `${e.line}:${e.column} ${e.code}: ${e.message}` : "(none)"
      }`,
    );
    if (!ok) {
      rows.push(`  actual:   ${d ? `${d.line}:${d.column} ${d.code}: ${d.message}` : "(none)"}`);
    }
  }
  return rows.join("\n");
}

const files = [...Deno.readDirSync(DIR)]
  .filter((e) => e.isFile && e.name.endsWith(".sx"))
  .map((e) => e.name)
  .sort();

Deno.test("the error corpus has at least 45 scripts", () => {
  assert.ok(files.length >= 45, `only ${files.length} scripts in tests/errors/`);
});

for (const file of files) {
  Deno.test(`check() refuses tests/errors/${file} as expected`, () => {
    const text = Deno.readTextFileSync(DIR + file);
    const expected = expectations(text, file);
    const result = check(text);
    assert.equal(result.script, undefined, `${file}: a refused script must come without a tree`);
    const same = expected.length === result.diagnostics.length &&
      expected.every((e, i) => matches(e, result.diagnostics[i]!));
    if (!same) assert.fail(`${file}: diagnostics differ\n${diff(expected, result.diagnostics)}`);
  });
}
