/**
 * Faults of the KV backend: a KV that cannot be opened, one that fails under a write, one that is
 * full. Each is a StorageError naming what was being done, and leaves no half-written value.
 */

import { strict as assert } from "node:assert";
import { join } from "node:path";
import { StorageError } from "../../engine/contracts/storage.ts";
import { KvStorage, openKvStorage } from "../../home/storage/kv_storage.ts";
import { sleep } from "../../engine/util/sleep.ts";

/** A tmpfs of `size` on a new folder, or null where this process may not mount (not root). */
async function tmpfs(dir: string, size: string) {
  if (Deno.build.os !== "linux") return null;
  await Deno.mkdir(dir);
  const mount = await new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir],
    stdout: "null",
    stderr: "null",
  }).output().catch(() => null);
  if (!mount?.success) return null;
  return {
    dir,
    async [Symbol.asyncDispose]() {
      await new Deno.Command("umount", { args: [dir] }).output();
    },
  };
}

const text = (s: string) => new TextEncoder().encode(s);

Deno.test("a KV in a folder that does not exist cannot be opened, and the error says which", async () => {
  const dir = await Deno.makeTempDir();
  await assert.rejects(
    () => openKvStorage(join(dir, "no", "such", "state.kv")),
    (e: Error) => e instanceof StorageError && /cannot open the KV '.*state\.kv'/.test(e.message),
  );
});

Deno.test("a remote KV that cannot be opened is named without its query string", async () => {
  await assert.rejects(
    () => openKvStorage("http://127.0.0.1:1/db?access_token=SECRET"),
    (e: Error) =>
      e instanceof StorageError && e.message.includes("'http://127.0.0.1:1/db'") &&
      !e.message.includes("SECRET"),
  );
});

Deno.test("a write to a closed KV is a StorageError naming the key", async () => {
  const dir = await Deno.makeTempDir();
  const kv = await Deno.openKv(join(dir, "state.kv"));
  const storage = new KvStorage(kv, "state.kv");
  kv.close();
  await assert.rejects(
    () => storage.put(["conf", "users.json"], text("{}")),
    (e: Error) =>
      e instanceof StorageError && /failed while writing 'conf\/users.json'/.test(e.message),
  );
});

Deno.test("a KV that fills up refuses the write whole: the old value stays, no chunk is left", async () => {
  const root = await Deno.makeTempDir();
  await using disk = await tmpfs(join(root, "disk"), "1m");
  if (disk === null) {
    // deno-lint-ignore no-console
    console.warn("skipped: this process may not mount a small disk");
    return;
  }
  const kv = await Deno.openKv(join(disk.dir, "state.kv"));
  const storage = new KvStorage(kv, "state.kv");
  try {
    assert.ok((await storage.put(["tables", "t.sxt"], text("old"))).ok);
    const big = new Uint8Array(4 * 1024 * 1024).fill(7);
    await assert.rejects(
      () => storage.put(["tables", "t.sxt"], big),
      (e: Error) => e instanceof StorageError && /writing 'tables\/t.sxt'/.test(e.message),
    );
    assert.equal(new TextDecoder().decode((await storage.get(["tables", "t.sxt"]))?.value), "old");
    const chunks = [];
    for await (const entry of kv.list({ prefix: ["trawl", "c"] })) chunks.push(entry.key);
    assert.deepEqual(chunks, []);
  } finally {
    storage.close();
  }
});

Deno.test("chunks a killed writer left are swept; a write in progress and live values keep theirs", async () => {
  const dir = await Deno.makeTempDir();
  const kv = await Deno.openKv(join(dir, "state.kv"));
  const storage = new KvStorage(kv, "state.kv");
  try {
    const live = new Uint8Array(200_000).fill(3);
    assert.ok((await storage.put(["tables", "live.sxt"], live)).ok);
    // A writer killed after its chunks (its pending mark expired), and one still writing.
    await kv.set(["trawl", "c", "dead-writer", 0], new Uint8Array(10));
    await kv.set(["trawl", "c", "dead-writer", 1], new Uint8Array(10));
    await kv.set(["trawl", "p", "busy-writer"], Date.now());
    await kv.set(["trawl", "c", "busy-writer", 0], new Uint8Array(10));
    // A value replaced just now (a reader may be streaming it) and one replaced long ago.
    await kv.set(["trawl", "r", "replaced-now"], { chunks: 1, at: Date.now() });
    await kv.set(["trawl", "c", "replaced-now", 0], new Uint8Array(10));
    await kv.set(["trawl", "r", "replaced-long-ago"], { chunks: 1, at: 0 });
    await kv.set(["trawl", "c", "replaced-long-ago", 0], new Uint8Array(10));

    assert.equal(await storage.sweepOrphanChunks(), 1);
    const ids = new Set<unknown>();
    for await (const { key } of kv.list({ prefix: ["trawl", "c"] })) ids.add(key[2]);
    assert.ok(!ids.has("dead-writer"));
    assert.ok(ids.has("busy-writer"));
    assert.ok(ids.has("replaced-now"));
    assert.ok(!ids.has("replaced-long-ago"));
    assert.equal((await kv.get(["trawl", "r", "replaced-long-ago"])).versionstamp, null);
    assert.deepEqual((await storage.get(["tables", "live.sxt"]))?.value, live);
    // A finished write leaves no pending mark behind.
    assert.deepEqual(
      await Array.fromAsync(kv.list({ prefix: ["trawl", "p"] })).then((l) => l.length),
      1,
    );
  } finally {
    storage.close();
  }
});

/** The ids of the values that have chunks in the KV. */
async function chunkIds(kv: Deno.Kv): Promise<Set<unknown>> {
  const ids = new Set<unknown>();
  for await (const { key } of kv.list({ prefix: ["trawl", "c"] })) ids.add(key[2]);
  return ids;
}

Deno.test("a KV value streamed while another writer replaces it is read whole, the old version; its chunks go once retired long enough", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-kv-" });
  const kv = await Deno.openKv(join(dir, "state.kv"));
  const storage = new KvStorage(kv, "test KV", { retireMs: 400 });
  try {
    const size = 40 * 60_000 + 1; // 41 chunks: more than one list batch
    await storage.put(["log"], new Uint8Array(size).fill(1));
    const stream = (await storage.stream(["log"]))!;
    let read = 0;
    let replaced = false;
    for await (const piece of stream.pieces) {
      assert.ok(piece.every((b) => b === 1), "a byte of the new value");
      read += piece.length;
      if (!replaced) {
        // A table saved again while another server reads it.
        await storage.put(["log"], new Uint8Array(size).fill(2));
        replaced = true;
      }
    }
    assert.equal(read, size);
    assert.equal((await chunkIds(kv)).size, 2, "the old chunks stay while retired");
    assert.ok((await storage.get(["log"]))!.value.every((b) => b === 2));
    await sleep(450);
    // The next write drops them.
    await storage.put(["other"], new Uint8Array(10));
    assert.equal((await chunkIds(kv)).size, 1);
    assert.deepEqual(await Array.fromAsync(kv.list({ prefix: ["trawl", "r"] })), []);
  } finally {
    storage.close();
  }
});

Deno.test("a KV value streamed past the retirement of its chunks fails saying so, never ends short", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-kv-" });
  const storage = new KvStorage(await Deno.openKv(join(dir, "state.kv")), "test KV", {
    retireMs: 0,
  });
  try {
    const size = 40 * 60_000 + 1; // 41 chunks: more than one list batch
    await storage.put(["log"], new Uint8Array(size).fill(1));
    const stream = (await storage.stream(["log"]))!;
    const pieces = stream.pieces[Symbol.asyncIterator]();
    let read = (await pieces.next()).value!.length;
    // The writer switches the head and (retired for 0 ms) deletes the old chunks the reader has
    // not listed yet.
    await storage.put(["log"], new Uint8Array(size).fill(2));
    await assert.rejects(
      async () => {
        for (let n = await pieces.next(); !n.done; n = await pieces.next()) {
          assert.ok(n.value.every((b) => b === 1), "a byte of the new value");
          read += n.value.length;
        }
      },
      (e: Error) => e instanceof StorageError && /'log'.*replaced while being read/.test(e.message),
    );
    assert.ok(read < size, `${read} bytes read`);
  } finally {
    storage.close();
  }
});
