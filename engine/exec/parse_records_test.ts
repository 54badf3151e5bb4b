import assert from "node:assert/strict";
import { join } from "node:path";
import { fileRecords, parseRecordsSource, type TextRecord } from "./parse_records.ts";
import { compilePattern } from "../pattern/compile_pattern.ts";
import { hostEntry, testContext } from "../../tests/support/temp_tree.ts";
import type { FileEntry } from "../contracts/datastore.ts";
import type { Warning } from "../contracts/datastore.ts";
import { newQueryStats } from "../plan/context.ts";

async function withFile<T>(content: string, fn: (file: FileEntry) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "trawl-records-" });
  try {
    const path = join(dir, "f.log");
    await Deno.writeTextFile(path, content);
    return await fn(await hostEntry(path));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const startsWithDigit = (line: string) => /^\d/.test(line);

async function records(content: string, maxLines = 1000): Promise<TextRecord[]> {
  return await withFile(content, async (file) => {
    const out: TextRecord[] = [];
    const options = { start: startsWithDigit, maxLines };
    for await (const batch of fileRecords(file, testContext(), options)) out.push(...batch);
    return out;
  });
}

Deno.test("continuation lines belong to the record a start line began", async () => {
  assert.deepEqual(await records("1 a\n  x\n  y\n2 b\n3 c\n  z"), [
    { text: "1 a\n  x\n  y", line: 1 },
    { text: "2 b", line: 4 },
    { text: "3 c\n  z", line: 5 },
  ]);
});

Deno.test("lines before the first start line are records of their own; blank ends are cut", async () => {
  assert.deepEqual(await records("head\nmore\n\n1 a\n\n  x\n\n\n2 b\r\n  y\r\n"), [
    { text: "head", line: 1 },
    { text: "more", line: 2 },
    { text: "1 a\n\n  x", line: 4 },
    { text: "2 b\n  y", line: 9 },
  ]);
});

Deno.test("a record holds at most max_record_lines lines; the next begins a record", async () => {
  assert.deepEqual(await records("1 a\n  x\n  y\n  z\n2 b\n", 2), [
    { text: "1 a\n  x", line: 1 },
    { text: "  y\n  z", line: 3 },
    { text: "2 b", line: 5 },
  ]);
});

Deno.test("parseRecordsSource() matches whole records and shows unmatched ones with line numbers", async () => {
  const compiled = compilePattern("INT:n ' ' WORD:w (EOL DATA:more)?", {
    timeZone: "UTC",
    records: true,
  });
  if (!compiled.ok) throw new Error(compiled.message);
  const warnings: Warning[] = [];
  const rows = await withFile("junk line\n1 a\n  x\n2 ?\n3 c\n", async (file) => {
    const ctx = { ...testContext(), warn: (w: Warning) => warnings.push(w) };
    const out = [];
    const source = parseRecordsSource([file], compiled.pattern, null, ctx, {
      start: startsWithDigit,
      maxLines: 10,
    });
    for await (const batch of source) out.push(...batch);
    return out;
  });
  assert.deepEqual(rows, [{ n: 1, w: "a", more: "  x" }, { n: 3, w: "c", more: null }]);
  assert.equal(warnings.length, 1);
  assert.match(
    warnings[0]!.message,
    /^PARSE skipped 2 records that do not match the pattern \(the first in '.*f\.log'\): line 1 "junk line", line 4 "2 \?"$/,
  );
});

Deno.test("parseRecordsSource() with ignoreUnmatched counts the records it skips and warns of none", async () => {
  const r = compilePattern("INT:n ' ERROR ' DATA:rest", { timeZone: "UTC", records: true });
  if (!r.ok) throw new Error(r.message);
  await withFile("1 INFO a\n  more\n2 ERROR b\n  trace\n3 INFO c\n", async (file) => {
    for (const ignore of [false, true]) {
      const ctx = { ...testContext(), stats: newQueryStats(), ignoreUnmatched: ignore };
      const out: unknown[] = [];
      const source = parseRecordsSource([file], r.pattern, null, ctx, {
        start: startsWithDigit,
        maxLines: 1000,
      });
      for await (const batch of source) out.push(...batch);
      assert.deepEqual(out, [{ n: 2, rest: "b\n  trace" }]);
      assert.equal(ctx.stats.recordsUnmatched, 2);
      assert.equal(ctx.stats.recordsRead, 3);
      assert.equal(ctx.warnings.length, ignore ? 0 : 1);
    }
  });
});
