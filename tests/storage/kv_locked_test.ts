/**
 * Several writers on one local KV file: SQLite answers "database is locked" at once when another
 * connection holds the write lock, and the KV backend runs such a call again (it did nothing)
 * rather than failing it: what several servers on one KV file do all the time.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { openKvStorage } from "../../home/storage/kv_storage.ts";

Deno.test("two connections writing one KV file at once: every write succeeds, none is lost", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-kv-locked-" });
  const file = join(dir, "state.kv");
  const one = await openKvStorage(file);
  const two = await openKvStorage(file);
  try {
    const writes = 300;
    const write = (storage: typeof one, name: string) =>
      Promise.all(
        Array.from({ length: writes }, async (_, i) => {
          const key = ["locked", `${name}-${i}`];
          // A large value too: its chunks and its head are separate commits.
          const value = new Uint8Array(i % 50 === 0 ? 200_000 : 100).fill(i % 256);
          const result = await storage.put(key, value);
          assert.equal(result.ok, true);
        }),
      );
    await Promise.all([write(one, "a"), write(two, "b")]);
    const keys = await Array.fromAsync(one.list(["locked"]));
    assert.equal(keys.length, 2 * writes);
    const big = await two.get(["locked", "a-50"]);
    assert.equal(big?.value.length, 200_000);
    assert.ok(big!.value.every((b) => b === 50));
  } finally {
    one.close();
    two.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a KV file another process keeps locked past SQLite's busy wait opens once it is released", async () => {
  // Three servers starting on one new KV file: while one sets the file up or commits, another's
  // open waits SQLite's busy timeout (5 s, blocking its thread) and then answers "database is
  // locked" having done nothing. Another process holds the lock here for longer than that wait.
  const dir = await Deno.makeTempDir({ prefix: "trawl-kv-open-locked-" });
  const file = join(dir, "state.kv");
  const holder = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `
      import { DatabaseSync } from "node:sqlite";
      const db = new DatabaseSync(${JSON.stringify(file)});
      db.exec("BEGIN EXCLUSIVE");
      db.exec("CREATE TABLE other_setup (a)");
      console.log("locked");
      setTimeout(() => { db.exec("COMMIT"); db.close(); }, 6_500);
    `,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const lines = holder.stdout.pipeThrough(new TextDecoderStream()).getReader();
    assert.match((await lines.read()).value ?? "", /locked/);
    const storage = await openKvStorage(file);
    try {
      assert.equal((await storage.put(["opened"], new Uint8Array([7]))).ok, true);
      assert.deepEqual((await storage.get(["opened"]))?.value, new Uint8Array([7]));
    } finally {
      storage.close();
    }
    lines.releaseLock();
  } finally {
    await holder.status;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an open that keeps failing for another reason fails at once, naming the KV", async () => {
  let calls = 0;
  const broken = (_where: string): Promise<Deno.Kv> => {
    calls++;
    return Promise.reject(new Error("unable to open database file"));
  };
  await assert.rejects(
    openKvStorage("/nowhere/state.kv", broken),
    /cannot open the KV '\/nowhere\/state.kv': unable to open database file/,
  );
  assert.equal(calls, 1);
});
