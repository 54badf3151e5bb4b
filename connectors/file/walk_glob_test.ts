import assert from "node:assert/strict";
import { join } from "node:path";
import { compileGlob } from "../glob.ts";
import { type WalkEntry, type WalkFs, walkGlob } from "./walk_glob.ts";
import { collect } from "../../tests/support/temp_tree.ts";

/** The real folders under `root`, recording every folder listed and path probed. */
function recordingFs(root: string) {
  const listed: string[] = [];
  const probed: string[] = [];
  const fs: WalkFs = {
    async list(path) {
      listed.push(path);
      const out: WalkEntry[] = [];
      for await (const e of Deno.readDir(join(root, path))) {
        out.push({ name: e.name, kind: e.isDirectory ? "dir" : "file" });
      }
      return out;
    },
    async probe(path) {
      probed.push(path);
      try {
        return (await Deno.stat(join(root, path))).isDirectory ? "dir" : "file";
      } catch {
        return null;
      }
    },
  };
  return { fs, listed, probed };
}

async function withFiles(paths: string[], fn: (root: string) => Promise<void>) {
  const root = await Deno.makeTempDir({ prefix: "trawl-walk-" });
  try {
    for (const p of paths) {
      await Deno.mkdir(join(root, p, ".."), { recursive: true });
      await Deno.writeTextFile(join(root, p), "x\n");
    }
    await fn(root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

const options = { timeZone: "UTC", signal: new AbortController().signal };
const utc = (s: string) => Date.parse(s);

Deno.test("walkGlob() never descends into folders outside from/to", async () => {
  await withFiles([
    "logs/2024/03/30/a.log",
    "logs/2024/04/30/a.log",
    "logs/2024/05/01/a.log",
    "logs/2024/05/02/a.log",
    "logs/2024/06/01/a.log",
    "logs/2023/12/31/a.log",
  ], async (root) => {
    const { fs, listed } = recordingFs(root);
    const glob = compileGlob("logs/$yyyy$/$MM$/$dd$/*.log");
    const found = await collect(walkGlob(glob, fs, {
      ...options,
      from: utc("2024-05-01T12:00:00Z"),
      to: utc("2024-05-31T00:00:00Z"),
    }));
    assert.deepEqual(found, [
      { path: "logs/2024/05/01/a.log", pathTime: utc("2024-05-01T00:00:00Z") },
      { path: "logs/2024/05/02/a.log", pathTime: utc("2024-05-02T00:00:00Z") },
    ]);
    assert.deepEqual(listed, [
      "logs",
      "logs/2024",
      "logs/2024/05",
      "logs/2024/05/01",
      "logs/2024/05/02",
    ]);
  });
});

Deno.test("walkGlob() probes literal segments instead of listing their folder", async () => {
  await withFiles(["a/x/access.log", "a/y/other.log", "a/z/access.log"], async (root) => {
    const { fs, listed, probed } = recordingFs(root);
    const found = await collect(walkGlob(compileGlob("a/*/access.log"), fs, options));
    assert.deepEqual(found.map((f) => f.path), ["a/x/access.log", "a/z/access.log"]);
    assert.deepEqual(listed, ["a"]);
    assert.deepEqual(probed, ["a/x/access.log", "a/y/access.log", "a/z/access.log"]);
  });
});

Deno.test("walkGlob() matches `**` at any depth, in name order", async () => {
  await withFiles(["r/b.log", "r/a/c.log", "r/a/d/e.log", "r/a/d/e.txt"], async (root) => {
    const { fs } = recordingFs(root);
    const found = await collect(walkGlob(compileGlob("r/**/*.log"), fs, options));
    assert.deepEqual(found.map((f) => f.path), ["r/a/c.log", "r/a/d/e.log", "r/b.log"]);
    const all = await collect(walkGlob(compileGlob("r/**"), fs, options));
    assert.equal(all.length, 4);
  });
});

Deno.test("walkGlob() stops when the signal aborts mid-walk, listing no folder after it", async () => {
  await withFiles(["r/d1/a.log", "r/d2/a.log", "r/d3/a.log", "r/d4/a.log"], async (root) => {
    const { fs, listed } = recordingFs(root);
    const ac = new AbortController();
    const walk = walkGlob(compileGlob("r/*/*.log"), fs, { ...options, signal: ac.signal });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const m of walk) {
        seen.push(m.path);
        if (seen.length === 2) ac.abort(new DOMException("stopped by the test", "AbortError"));
      }
    })().then(() => undefined, (e) => e);
    assert.ok(error instanceof Error && error.name === "AbortError", String(error));
    assert.deepEqual(seen, ["r/d1/a.log", "r/d2/a.log"]);
    // The walk went no further: the folders after the abort were never listed.
    assert.deepEqual(listed.filter((p) => p.startsWith("r/d")), ["r/d1", "r/d2"]);
  });
});

Deno.test("walkGlob() does not start when the signal has already aborted", async () => {
  await withFiles(["r/a.log", "r/b/c.log"], async (root) => {
    const { fs, listed } = recordingFs(root);
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(
      collect(walkGlob(compileGlob("r/**"), fs, { ...options, signal: ac.signal })),
      (e: Error) => e.name === "AbortError",
    );
    assert.deepEqual(listed, []);
  });
});
