import assert from "node:assert/strict";
import { join } from "node:path";
import { DECODE_BYTES, scanLines } from "./scan_lines.ts";
import { READ_CHUNK_BYTES } from "../fs/open_file.ts";
import type { FileEntry } from "../contracts/datastore.ts";
import { openHostFile, testContext } from "../../tests/support/temp_tree.ts";
import { openFilesUnder } from "../../tests/support/open_files.ts";

function entry(path: string, size: number): FileEntry {
  return {
    uri: path,
    size,
    modified: 0,
    pathTime: null,
    open: (signal) => openHostFile(path, signal),
  };
}

async function withFile(content: Uint8Array | string, fn: (path: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "trawl-scan-" });
  const path = join(dir, "f.log");
  try {
    if (typeof content === "string") await Deno.writeTextFile(path, content);
    else await Deno.writeFile(path, content);
    await fn(path);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** All lines of the scan, split by the test from the ranges scanLines hands out. */
async function lines(path: string, size: number) {
  const out: string[] = [];
  for await (const { text, start, end } of scanLines(entry(path, size), testContext())) {
    for (const l of text.slice(start, end).split("\n")) out.push(l);
    if (text.slice(start, end).endsWith("\n")) out.pop();
  }
  return out;
}

/** Descriptors open on `path` (other test modules run in the same process: count only ours). */
const openFds = (path: string) => Promise.resolve(openFilesUnder(Deno.realPathSync(path)).length);

Deno.test("scanLines() hands out whole lines and the last line without a newline", async () => {
  await withFile("a\nbb\r\n\nccc", async (path) => {
    assert.deepEqual(await lines(path, 10), ["a", "bb\r", "", "ccc"]);
  });
});

Deno.test("scanLines() carries lines and characters cut by a chunk boundary", async () => {
  // A line straddles the 1 MiB boundary and a 3-byte character sits across it.
  const head = "x".repeat(READ_CHUNK_BYTES - 10) + "\n";
  const cut = "abcdefgh€€€€tail";
  const text = head + cut + "\nlast\n";
  const bytes = new TextEncoder().encode(text);
  await withFile(bytes, async (path) => {
    const got = await lines(path, bytes.length);
    assert.deepEqual(got.slice(1), [cut, "last"]);
    assert.equal(got[0]!.length, READ_CHUNK_BYTES - 10);
  });
});

Deno.test("scanLines() streams a 20 MB file a chunk at a time and reports progress", async () => {
  const line = "0123456789".repeat(9) + "abcdefghi\n"; // 100 bytes
  const count = 200_000;
  const content = line.repeat(count);
  await withFile(content, async (path) => {
    const ctx = testContext();
    ctx.progress.expect(content.length);
    let seen = 0;
    let largest = 0;
    let chunks = 0;
    for await (const { text, start, end } of scanLines(entry(path, content.length), ctx)) {
      chunks++;
      largest = Math.max(largest, text.length);
      for (let i = start; i < end; i = text.indexOf("\n", i) + 1) seen++;
    }
    const reads = Math.ceil(content.length / READ_CHUNK_BYTES);
    assert.equal(seen, count);
    // Each read is handed out in pieces of at most DECODE_BYTES.
    assert.ok(chunks >= Math.ceil(content.length / DECODE_BYTES));
    assert.ok(chunks <= reads * Math.ceil(READ_CHUNK_BYTES / DECODE_BYTES));
    assert.ok(largest <= DECODE_BYTES + line.length, `a chunk held ${largest} characters`);
    assert.ok(ctx.progress.fraction > 0.99);
    assert.ok(ctx.reports.length >= reads - 1, "progress reported per read");
  });
});

Deno.test("scanLines() stops between chunks when cancelled and closes the file", async () => {
  const content = "y".repeat(99) + "\n";
  await withFile(content.repeat(50_000), async (path) => {
    const before = await openFds(path);
    const ac = new AbortController();
    const ctx = testContext(ac.signal);
    let chunks = 0;
    await assert.rejects(
      (async () => {
        for await (const _ of scanLines(entry(path, 5_000_000), ctx)) {
          chunks++;
          ac.abort();
        }
      })(),
      (e: Error) => e.name === "AbortError",
    );
    assert.equal(chunks, 1);
    assert.equal(await openFds(path), before);
  });
});

Deno.test("scanLines() closes the file when the consumer stops early", async () => {
  await withFile("z\n".repeat(1_000_000), async (path) => {
    const before = await openFds(path);
    for await (const _ of scanLines(entry(path, 2_000_000), testContext())) break;
    assert.equal(await openFds(path), before);
  });
});

Deno.test("scanLines() warns about a file that is gone and yields nothing", async () => {
  const ctx = testContext();
  const chunks = await Array.fromAsync(scanLines(entry("/nonexistent/trawl/x.log", 5), ctx));
  assert.deepEqual(chunks, []);
  assert.equal(ctx.warnings.length, 1);
  assert.match(
    ctx.warnings[0]!.message,
    /cannot read '\/nonexistent\/trawl\/x\.log' \(it does not exist\)/,
  );
});
