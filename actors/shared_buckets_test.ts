import assert from "node:assert/strict";
import { join } from "node:path";
import { SharedBuckets } from "./shared_buckets.ts";
import { openKvStorage } from "../home/storage/kv_storage.ts";
import { sleep } from "../engine/mod.ts";

const KEY = "tenant|contoso|graph";

async function withKv(
  work: (open: () => Promise<Awaited<ReturnType<typeof openKvStorage>>>) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "trawl-buckets-" });
  const opened: { close(): void }[] = [];
  try {
    await work(async () => {
      const kv = await openKvStorage(join(dir, "state.kv"));
      opened.push(kv);
      return kv;
    });
  } finally {
    opened.forEach((kv) => kv.close());
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("two servers' shared buckets on one KV grant no more than the limit in any window, in batches", async () => {
  await withKv(async (open) => {
    const a = new SharedBuckets(await open());
    const b = new SharedBuckets(await open());
    const limit = { limit: 5, unitMs: 400 };
    const signal = new AbortController().signal;
    const grants: number[] = [];
    const take = (buckets: SharedBuckets) =>
      buckets.take(KEY, limit, signal).then((completed) => {
        grants.push(Date.now());
        completed();
      });
    const started = Date.now();
    await Promise.all([
      ...Array.from({ length: 12 }, () => take(a)),
      ...Array.from({ length: 12 }, () => take(b)),
    ]);
    grants.sort((x, y) => x - y);
    for (let i = limit.limit; i < grants.length; i++) {
      assert.ok(grants[i]! - grants[i - limit.limit]! >= limit.unitMs, `window ${i}: ${grants}`);
    }
    // 24 tokens at 5 per 400 ms (and a margin): at least four full windows. (No upper bound:
    // how soon tokens come back depends on the machine's load.)
    const took = Date.now() - started;
    assert.ok(took >= 4 * limit.unitMs, `${took} ms`);
    // Requests waiting together share a write: each server's first grant serves 5 of its 12
    // waiters, so fewer grant writes than tokens. (Not a count of round trips: how many reads a
    // wait takes depends on when the machine wakes the process.)
    const writes = a.grantWrites + b.grantWrites;
    assert.ok(writes < 24 && writes >= 24 / limit.limit, `${writes} grant writes for 24 tokens`);
  });
});

Deno.test("a throttling answer to one server pauses the tenant on the other", async () => {
  await withKv(async (open) => {
    const a = new SharedBuckets(await open());
    const b = new SharedBuckets(await open());
    const limit = { limit: 100, unitMs: 1_000 };
    // The pause runs from when it is asked for, not from when its write is done (a busy KV
    // may take tens of ms to commit it).
    const asked = Date.now();
    await a.pause(KEY, 600);
    (await b.take(KEY, limit, new AbortController().signal))();
    assert.ok(Date.now() - asked >= 550, `${Date.now() - asked} ms`);
  });
});

Deno.test("a take waiting for a token ends when its signal aborts, and leaves the others' tokens", async () => {
  await withKv(async (open) => {
    const a = new SharedBuckets(await open());
    const limit = { limit: 1, unitMs: 5_000 };
    (await a.take(KEY, limit, new AbortController().signal))();
    const stop = new AbortController();
    const waiting = a.take(KEY, limit, stop.signal);
    setTimeout(() => stop.abort(new Error("cancelled")), 100);
    await assert.rejects(waiting, /cancelled/);
    a.stop();
  });
});

Deno.test("a request that completes late keeps its token from the other server until a unit after it completed", async () => {
  await withKv(async (open) => {
    const kv = await open();
    const a = new SharedBuckets(await open());
    const b = new SharedBuckets(await open());
    const limit = { limit: 1, unitMs: 300 };
    const signal = new AbortController().signal;
    const completed = await a.take(KEY, limit, signal);
    /** The end of the one grant in the KV, as the other server reads it. */
    const stored = async () => {
      const entry = await kv.get(["cloud_api", "buckets", KEY]);
      const value = JSON.parse(new TextDecoder().decode(entry!.value));
      return value.grants[0].until as number;
    };
    const granted = await stored();
    // The request is under way for 400 ms: longer than the grant's own end.
    await sleep(400);
    // Read before the completion, which stamps its own time: read after it, a busy machine's
    // millisecond between the two came off the unit (a busy run saw 299 ms).
    const doneAt = Date.now();
    completed();
    // The extension reaches the KV (a write under way: its time depends on the machine's load).
    for (const end = Date.now() + 10_000; await stored() === granted; await sleep(10)) {
      assert.ok(Date.now() < end, "the completion never moved the grant's end in the KV");
    }
    (await b.take(KEY, limit, signal))();
    assert.ok(Date.now() - doneAt >= limit.unitMs, `${Date.now() - doneAt} ms`);
  });
});
