/**
 * Edges of the result store (actors/result_store.ts) that its main tests pass by: the last
 * item kept as it came and the first one past it, lanes that come in reverse, and spilled
 * rendered segments read in one go up to a range's last item and no further.
 */

import assert from "node:assert/strict";
import { ResultStore, type StoredItem } from "./result_store.ts";
import { RenderedRows } from "../engine/mod.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function rendered(texts: readonly string[]): [Uint8Array<ArrayBuffer>, Uint32Array] {
  const parts = texts.map((t) => encoder.encode(t));
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  const ends = new Uint32Array(parts.length);
  let at = 0;
  parts.forEach((p, i) => {
    bytes.set(p, at);
    at += p.length;
    ends[i] = at;
  });
  return [bytes, ends];
}

async function all(store: ResultStore, first = 0, last = store.count - 1): Promise<StoredItem[]> {
  const out: StoredItem[] = [];
  for await (const batch of store.read(first, last)) out.push(...batch);
  return out;
}

/** The items of readParts(first, last), rendered parts cut at their ends; and the parts. */
async function parts(store: ResultStore, first: number, last: number) {
  const items: StoredItem[] = [];
  let count = 0;
  for await (const part of store.readParts(first, last)) {
    count++;
    if (!(part instanceof RenderedRows)) {
      items.push(...part);
      continue;
    }
    let start = 0;
    for (const end of part.ends) {
      items.push(decoder.decode(part.bytes.subarray(start, end)));
      start = end;
    }
  }
  return { items, count };
}

async function withStore(
  memoryBytes: number,
  fn: (store: ResultStore) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "trawl-results-" });
  const store = new ResultStore("qp", { memoryBytes, spillDir: dir });
  try {
    await fn(store);
  } finally {
    await store.drop();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("inMemory() answers a range within the items kept as they came, never one reaching past them", async () => {
  await withStore(1 << 30, async (store) => {
    const rows = Array.from({ length: 1030 }, (_, i) => ({ i }));
    await store.append(rows.slice(0, 1024));
    assert.equal(store.inMemory(0, 1023)?.length, 1024);
    // Past the items there are: none to answer with.
    assert.equal(store.inMemory(0, 1024), undefined);
    await store.append(rows.slice(1024));
    await store.seal();
    assert.deepEqual(store.inMemory(1020, 1023), rows.slice(1020, 1024));
    assert.equal(store.inMemory(0, 1024), undefined, "item 1024 is not among the first");
    assert.equal(store.inMemory(1023, 1024), undefined);
    assert.equal(store.inMemory(1024, 1024), undefined);
    assert.deepEqual(await all(store, 1023, 1024), rows.slice(1023, 1025));
  });
  await withStore(1 << 30, async (store) => {
    await store.append([{ i: 0 }, { i: 1 }, { i: 2 }]);
    assert.deepEqual(store.inMemory(0, 2), [{ i: 0 }, { i: 1 }, { i: 2 }]);
    assert.equal(store.inMemory(0, 3), undefined);
    assert.equal(store.inMemory(2, 3), undefined);
  });
});

Deno.test("lanes that come in reverse (the last share first) are placed in their order when sealed", async () => {
  for (const memoryBytes of [1 << 30, 4096]) {
    await withStore(memoryBytes, async (store) => {
      const lanes = [0, 1, 2].map((lane) =>
        Array.from({ length: 1500 }, (_, i) => `{"lane":${lane},"i":${i}}`)
      );
      for (const lane of [2, 1, 0]) {
        await store.appendRendered(...rendered(lanes[lane]!), undefined, lane);
      }
      assert.deepEqual(await all(store), lanes.flat());
      assert.deepEqual(await all(store, 1499, 1500), [lanes[0]![1499], lanes[1]![0]]);
    });
  }
  // Two lanes only, the second first.
  await withStore(1 << 30, async (store) => {
    const a = Array.from({ length: 2000 }, (_, i) => `a${i}`);
    const b = Array.from({ length: 2000 }, (_, i) => `b${i}`);
    await store.appendRendered(...rendered(b), undefined, 1);
    await store.appendRendered(...rendered(a), undefined, 0);
    assert.deepEqual(await all(store), [...a, ...b]);
  });
});

Deno.test("spilled rendered segments next to each other are read in one go, up to the range's last item only", async () => {
  await withStore(100, async (store) => {
    // Lanes 1 to 4 in order: each one segment when sealed, one after the other in the file.
    const lanes = [1, 2, 3, 4].map((lane) =>
      Array.from({ length: 700 + lane }, (_, i) => `{"lane":${lane},"i":${i},"s":"ü東"}`)
    );
    for (const [k, texts] of lanes.entries()) {
      await store.appendRendered(...rendered(texts), undefined, k + 1);
    }
    const texts = lanes.flat();
    assert.equal(store.count, texts.length);
    await store.seal();
    assert.equal(store.spilled, true);
    const whole = await parts(store, 0, texts.length - 1);
    assert.deepEqual(whole.items, texts);
    assert.equal(whole.count, 1, "the four segments in one read");
    for (
      const [a, b] of [
        [0, 701],
        [0, 702],
        [0, 703],
        [0, 1500],
        [0, texts.length - 2],
        [701, 1404],
        [702, texts.length - 1],
        [5, 2000],
      ]
    ) {
      assert.deepEqual(
        (await parts(store, a!, b!)).items,
        texts.slice(a, b! + 1),
        `parts ${a}-${b}`,
      );
      assert.deepEqual(await all(store, a, b), texts.slice(a, b! + 1), `${a}-${b}`);
    }
  });
});

Deno.test("spilled rendered segments next in range but not next in the file are read apart", async () => {
  await withStore(100, async (store) => {
    // In the file: lane 1, lane 0, lane 2; in the result: 0, 1, 2.
    const lanes = [0, 1, 2].map((lane) =>
      Array.from({ length: 1200 + lane }, (_, i) => `{"lane":${lane},"i":${i}}`)
    );
    for (const lane of [1, 0, 2]) {
      await store.appendRendered(...rendered(lanes[lane]!), undefined, lane);
    }
    const texts = lanes.flat();
    assert.deepEqual((await parts(store, 0, texts.length - 1)).items, texts);
    assert.deepEqual((await parts(store, 1200, texts.length - 1)).items, texts.slice(1200));
    assert.deepEqual(await all(store, 1199, 2402), texts.slice(1199, 2403));
  });
});
