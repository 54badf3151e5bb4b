import assert from "node:assert/strict";
import { join } from "node:path";
import { parseSource } from "./parse_source.ts";
import { shownText, UnmatchedRecords } from "./unmatched.ts";
import { compilePattern } from "../pattern/compile_pattern.ts";
import { hostEntry, testContext } from "../../tests/support/temp_tree.ts";
import type { FileEntry } from "../contracts/datastore.ts";

async function warningsOf(pattern: string, contents: string[]): Promise<string[]> {
  const compiled = compilePattern(pattern, { timeZone: "UTC" });
  if (!compiled.ok) throw new Error(compiled.message);
  const dir = await Deno.makeTempDir({ prefix: "trawl-unmatched-" });
  try {
    const files: FileEntry[] = [];
    for (const [i, c] of contents.entries()) {
      const path = join(dir, `f${i}.log`);
      await Deno.writeTextFile(path, c);
      files.push(await hostEntry(path));
    }
    const ctx = testContext();
    for await (const _ of parseSource(files, compiled.pattern, null, ctx)) { /* drain */ }
    return ctx.warnings.map((w) => w.message);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("the unmatched warning names line numbers deep in a file read in many pieces", async () => {
  const lines = Array.from({ length: 12000 }, (_, i) => `10.0.0.${i % 250} ${200 + (i % 3)} ok`);
  lines[4320] = "broken line 4321";
  lines[5998] = "broken line 5999";
  // The byte scanner covers this pattern: the lines it cannot read are found by a second look.
  const [w] = await warningsOf("IPV4:ip ' ' INT:status ' ' WORD:w EOL", [lines.join("\n") + "\n"]);
  assert.match(
    w!,
    /^PARSE skipped 2 records .*f0\.log'\): line 4321 "broken line 4321", line 5999 "broken line 5999"$/,
  );
});

Deno.test("the unmatched warning shows three records, then an ellipsis, across files", async () => {
  const [w] = await warningsOf("INT:n EOL", ["1\nx\n2\n", "y\nz\nw\n"]);
  assert.match(
    w!,
    /^PARSE skipped 4 records .*f0\.log'\): line 2 "x", '.*f1\.log' line 1 "y", line 2 "z", …$/,
  );
});

Deno.test("a long unmatched record is cut, with its line breaks and quotes escaped", () => {
  assert.equal(shownText('a "b"\nc'), '"a \\"b\\"\\nc"');
  const long = shownText("x".repeat(500));
  assert.equal(JSON.parse(long).length, 120);
  assert.ok(JSON.parse(long).endsWith("…"));
  const u = new UnmatchedRecords();
  assert.equal(u.warning("PARSE"), null);
  u.add("/a.log", 3, "q");
  assert.equal(
    u.warning("PARSE")?.message,
    `PARSE skipped 1 record that does not match the pattern (the first in '/a.log'): line 3 "q"`,
  );
});
