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
