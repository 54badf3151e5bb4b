import assert from "node:assert/strict";
import fc from "fast-check";
import type { FileEntry } from "../../contracts/datastore.ts";
import { firstLineOf, shareEntry, splitShares } from "./shares.ts";

/** A file in memory read in chunks of `chunk` bytes, from any offset. */
function memoryFile(uri: string, bytes: Uint8Array, chunk: number): FileEntry {
  const streamFrom = (from: number) => {
    let at = from;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(bytes.slice(at, at + chunk));
        at += chunk;
      },
    });
  };
  return {
    uri,
    size: bytes.length,
    modified: 0,
    pathTime: null,
    open: () => Promise.resolve(streamFrom(0)),
    openAt: (_signal, from) => Promise.resolve(streamFrom(from)),
  };
}

async function read(entry: FileEntry): Promise<string> {
  const parts: Uint8Array[] = [];
  for await (const c of await entry.open(new AbortController().signal)) parts.push(c);
  return new TextDecoder().decode(
    parts.reduce((a, b) => {
      const out = new Uint8Array(a.length + b.length);
      out.set(a);
      out.set(b, a.length);
      return out;
    }, new Uint8Array(0)),
  );
}

const text = fc.array(
  fc.oneof(fc.constant(""), fc.string({ maxLength: 12 }).map((s) => s.replace(/\n/g, " "))),
  { maxLength: 30 },
).chain((lines) =>
  fc.boolean().map((endNl) => lines.join("\n") + (endNl && lines.length > 0 ? "\n" : ""))
);

Deno.test("line ranges of a file, read one after the other, give each line exactly once", async () => {
  await fc.assert(
    fc.asyncProperty(
      text,
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 1, max: 9 }),
      async (content, workers, chunk) => {
        const bytes = new TextEncoder().encode(content);
        const file = memoryFile("a.log", bytes, chunk);
        const shares = splitShares([{ uri: "a.log", size: bytes.length, lines: true }], workers, 1);
        assert.ok(shares.length <= workers);
        let joined = "";
        for (const share of shares) {
          for (const part of share) joined += await read(shareEntry(file, part));
        }
        assert.equal(joined, content);
      },
    ),
    { numRuns: 400, seed: 3 },
  );
});

Deno.test("firstLineOf: a share's first line is the number, in the whole file, of the first line it reads", async () => {
  const signal = new AbortController().signal;
  await fc.assert(
    fc.asyncProperty(
      text,
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 1, max: 9 }),
      async (content, workers, chunk) => {
        const bytes = new TextEncoder().encode(content);
        const file = memoryFile("a.log", bytes, chunk);
        const shares = splitShares([{ uri: "a.log", size: bytes.length, lines: true }], workers, 1);
        let linesBefore = 0; // the lines the shares before this one read
        for (const share of shares) {
          for (const part of share) {
            const entry = shareEntry(file, part);
            const got = await read(entry);
            if (got.length === 0) continue; // a range in which no line starts
            assert.equal(await firstLineOf(entry, signal), linesBefore + 1, JSON.stringify(part));
            linesBefore += got.split("\n").length - (got.endsWith("\n") ? 1 : 0);
          }
        }
      },
    ),
    { numRuns: 400, seed: 5 },
  );
});

Deno.test("shares keep the files' order, cut only files of lines, and are about equal", () => {
  const files = [
    { uri: "a", size: 100, lines: true },
    { uri: "b", size: 50, lines: false },
    { uri: "c", size: 250, lines: true },
  ];
  const shares = splitShares(files, 4, 1);
  assert.deepEqual(shares.map((s) => s.map((p) => `${p.uri}:${p.start}-${p.end}`)), [
    ["a:0-100"],
    ["b:0-50", "c:0-50"],
    ["c:50-150"],
    ["c:150-250"],
  ]);
  // Too little to share: one worker reads it all.
  assert.equal(splitShares(files, 4, 1 << 20).length, 1);
  assert.deepEqual(splitShares([], 4, 1), []);
});
