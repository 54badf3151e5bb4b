import assert from "node:assert/strict";
import { join } from "node:path";
import { parseSource } from "./parse_source.ts";
import { compilePattern } from "../pattern/compile_pattern.ts";
import { hostEntry, testContext } from "../../tests/support/temp_tree.ts";
import type { FileEntry } from "../datastore.ts";
import { IpAddr, type Row } from "../values.ts";

function pattern(text: string) {
  const r = compilePattern(text, { timeZone: "UTC" });
  if (!r.ok) throw new Error(r.message);
  return r.pattern;
}

async function withFiles(contents: string[], fn: (files: FileEntry[]) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "trawl-parse-" });
  try {
    const files: FileEntry[] = [];
    for (const [i, c] of contents.entries()) {
      const path = join(dir, `f${i}.log`);
      await Deno.writeTextFile(path, c);
      files.push(await hostEntry(path));
    }
    await fn(files);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function rows(source: AsyncIterable<readonly Row[]>): Promise<Row[]> {
  const out: Row[] = [];
  for await (const batch of source) out.push(...batch);
  return out;
}

Deno.test("parseSource() turns matching lines of every file into rows", async () => {
  const p = pattern("IPV4:ip ' ' INT:status ' ' WORD:word");
  await withFiles(["1.2.3.4 200 a\n5.6.7.8 404 b\n", "9.9.9.9 500 c"], async (files) => {
    const ctx = testContext();
    const got = await rows(parseSource(files, p, null, ctx));
    assert.deepEqual(got.map((r) => [(r.ip as IpAddr).bits, r.status, r.word]), [
      [0x01020304, 200, "a"],
      [0x05060708, 404, "b"],
      [0x09090909, 500, "c"],
    ]);
    assert.deepEqual(ctx.warnings, []);
  });
});

Deno.test("parseSource() builds only the needed fields", async () => {
  const p = pattern("IPV4:ip ' ' INT:status ' ' WORD:word");
  await withFiles(["1.2.3.4 200 a\n"], async (files) => {
    assert.deepEqual(await rows(parseSource(files, p, ["status"], testContext())), [
      { status: 200 },
    ]);
  });
});

Deno.test("parseSource() counts records that do not match in one warning per source", async () => {
  const p = pattern("INT:n");
  await withFiles(["1\nx\n2\n\n", "y\nz\n3\n"], async (files) => {
    const ctx = testContext();
    assert.deepEqual(await rows(parseSource(files, p, null, ctx)), [{ n: 1 }, { n: 2 }, { n: 3 }]);
    assert.equal(ctx.warnings.length, 1);
    assert.match(ctx.warnings[0].message, /PARSE skipped 3 records .*f0\.log/);
  });
});

Deno.test("parseSource() reads lines across chunk boundaries of a large file", async () => {
  const p = pattern("INT:n ' ' NSPACE:pad");
  const lines = Array.from({ length: 40_000 }, (_, i) => `${i} ${"p".repeat((i % 97) + 1)}`);
  await withFiles([lines.join("\n") + "\n"], async (files) => {
    assert.ok(files[0].size > 2 * (1 << 20));
    const ctx = testContext();
    const got = await rows(parseSource(files, p, ["n"], ctx));
    assert.equal(got.length, 40_000);
    assert.ok(got.every((r, i) => r.n === i));
    assert.deepEqual(ctx.warnings, []);
    assert.ok(ctx.progress.fraction > 0.99);
  });
});

Deno.test("parseSource() stops when the query is cancelled", async () => {
  const p = pattern("INT:n");
  await withFiles(["1\n".repeat(1_500_000)], async (files) => {
    const ac = new AbortController();
    let batches = 0;
    await assert.rejects(
      (async () => {
        for await (const _ of parseSource(files, p, null, testContext(ac.signal))) {
          batches++;
          ac.abort();
        }
      })(),
      (e: Error) => e.name === "AbortError",
    );
    assert.equal(batches, 1);
  });
});

Deno.test("parseSource() keeps a multi-line record that a read chunk boundary cuts in two", async () => {
  const p = pattern("'A:' INT:a EOL 'B:' INT:b");
  // Records of 18 bytes ("A:000001\nB:000001\n") after 13 blank lines: the first 1 MiB read
  // ends just after an "A:" line, so that its "B:" line comes with the next read.
  const count = 60_000;
  const pad = (n: number) => String(n).padStart(6, "0");
  let text = "\n".repeat(13);
  for (let i = 0; i < count; i++) text += `A:${pad(i)}\nB:${pad(i)}\n`;
  assert.equal(((1 << 20) - 13) % 18, 9);
  await withFiles([text], async (files) => {
    const ctx = testContext();
    const got = await rows(parseSource(files, p, null, ctx));
    assert.equal(got.length, count);
    assert.ok(got.every((r, i) => r.a === i && r.b === i));
    assert.deepEqual(ctx.warnings, []);
  });
});
