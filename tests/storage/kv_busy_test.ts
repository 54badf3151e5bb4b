/**
 * Several processes on one local KV file: SQLite refuses calls with "database is locked" while
 * another process writes (hundreds of refusals in a few hundred writes). KvStorage repeats such
 * a call, so three processes counting on one key by compare-and-swap all succeed and the count
 * is exact.
 */

import assert from "node:assert/strict";

const WRITER = new URL("../../home/storage/kv_storage.ts", import.meta.url).href;
const INCREMENTS = 150;

Deno.test("three processes counting on one KV key by compare-and-swap lose no write and see no 'database is locked'", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/state.kv`;
    const child = `${dir}/child.ts`;
    await Deno.writeTextFile(
      child,
      `import { openKvStorage } from "${WRITER}";
const storage = await openKvStorage(${JSON.stringify(path)});
const key = ["counter"];
for (let i = 0; i < ${INCREMENTS}; i++) {
  for (;;) {
    const now = await storage.get(key);
    const n = now ? Number(new TextDecoder().decode(now.value)) : 0;
    const done = await storage.put(key, new TextEncoder().encode(String(n + 1)), {
      expectedVersion: now?.version ?? null,
    });
    if (done.ok) break;
  }
}
storage.close();
`,
    );
    const runs = await Promise.all([0, 1, 2].map(() =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "--unstable-kv", "-A", child],
        stdout: "piped",
        stderr: "piped",
      }).output()
    ));
    for (const run of runs) {
      assert.equal(new TextDecoder().decode(run.stderr).match(/error.*/i)?.[0] ?? "", "");
      assert.equal(run.code, 0);
    }
    const kv = await Deno.openKv(path);
    try {
      const head = await kv.get<{ data: Uint8Array }>(["trawl", "h", "counter"]);
      assert.equal(new TextDecoder().decode(head.value!.data), String(3 * INCREMENTS));
    } finally {
      kv.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
