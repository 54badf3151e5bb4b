import assert from "node:assert/strict";
import { ResultDroppedError, ResultStore, type StoredItem } from "./result_store.ts";
import { IpAddr, IpNet, QueryError, RenderedRows, Timestamp } from "../engine/mod.ts";
import { smallDisk } from "../tests/support/small_disk.ts";
import { ResultQuota } from "./result_quota.ts";

async function all(store: ResultStore, first = 0, last = store.count - 1): Promise<StoredItem[]> {
  const out: StoredItem[] = [];
  for await (const batch of store.read(first, last)) out.push(...batch);
  return out;
}

Deno.test("ResultStore keeps a small result in memory", async () => {
  const dir = await Deno.makeTempDir();
  const store = new ResultStore("q1", { memoryBytes: 1 << 20, spillDir: dir });
  await store.append([{ a: 1 }, { a: 2 }]);
  await store.append([{ a: 3 }]);
  assert.equal(store.count, 3);
  assert.deepEqual(await all(store), [{ a: 1 }, { a: 2 }, { a: 3 }]);
  assert.deepEqual(await all(store, 1, 1), [{ a: 2 }]);
  assert.equal(store.spilled, false);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("ResultStore spills past its budget, reads ranges back, and drop removes the file", async () => {
  const dir = await Deno.makeTempDir();
  const store = new ResultStore("q2", { memoryBytes: 4096, spillDir: dir });
  const rows = Array.from({ length: 10_000 }, (_, i) => ({
    i,
    s: `row "${i}"\nline`,
    t: new Timestamp(1_700_000_000_000 + i),
    ip: new IpAddr(4, i),
    net: new IpNet(new IpAddr(6, BigInt(i) << 64n), 64),
    arr: [i, null, "x"],
    tup: { k: i % 2 === 0 },
  }));
  for (let i = 0; i < rows.length; i += 700) await store.append(rows.slice(i, i + 700));
  assert.equal(store.count, 10_000);
  assert.equal(store.spilled, true);
  assert.deepEqual(await all(store), rows);
  assert.deepEqual(await all(store, 4095, 4100), rows.slice(4095, 4101));
  assert.deepEqual(await all(store, 9_998, 20_000), rows.slice(9_998));
  const stat = await Deno.stat(store.path);
  assert.ok(stat.size > 0);
  await store.drop();
  await assert.rejects(() => Deno.stat(store.path), Deno.errors.NotFound);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("ResultStore gives back NaN, -0, infinities and strings starting with ~ through a spill", async () => {
  const dir = await Deno.makeTempDir();
  const store = new ResultStore("q5", { memoryBytes: 100, spillDir: dir });
  const rows = Array.from({ length: 3000 }, (_, i) => ({
    i,
    odd: [NaN, -0, Infinity, -Infinity][i % 4]!,
    s: i % 2 === 0 ? "~T1" : "~",
  }));
  await store.append(rows);
  assert.equal(store.spilled, true);
  const back = await all(store);
  assert.deepEqual(back, rows);
  assert.ok(Object.is((back[1] as { odd: number }).odd, -0));
  await store.drop();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("ResultStore keeps serialised fragments byte for byte through a spill", async () => {
  const dir = await Deno.makeTempDir();
  const store = new ResultStore("q3", { memoryBytes: 100, spillDir: dir });
  const frags = Array.from({ length: 3000 }, (_, i) => `\x1e{"i":${i},"s":"a\\nb"}\n`);
  await store.append(frags);
  assert.deepEqual(await all(store), frags);
  await store.drop();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("ResultStore stores fragments as their own bytes, in memory and spilled, any text", async () => {
  for (const memoryBytes of [1 << 30, 100]) {
    const dir = await Deno.makeTempDir();
    const store = new ResultStore("q5", { memoryBytes, spillDir: dir });
    const frags = Array.from(
      { length: 5000 },
      (_, i) => i % 7 === 0 ? "" : `"é😀${i}\u0000\x00",${"\\".repeat(i % 3)}\r\n`,
    );
    for (let i = 0; i < frags.length; i += 999) await store.append(frags.slice(i, i + 999));
    assert.deepEqual(await all(store), frags);
    assert.deepEqual(await all(store, 1023, 2049), frags.slice(1023, 2050));
    // Rows after fragments (never in one result today) go to a segment of their own.
    await store.append([{ a: 1 }]);
    assert.deepEqual((await all(store)).slice(-2), [frags.at(-1), { a: 1 }]);
    await store.drop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResultStore hands out the first items as they came, but not once past them", async () => {
  const dir = await Deno.makeTempDir();
  const store = new ResultStore("q4", { memoryBytes: 1 << 20, spillDir: dir });
  const first = Array.from({ length: 1000 }, (_, i) => ({ i }));
  await store.append(first);
  assert.equal(store.inMemory(0, 999)?.[999], first[999]); // the very object, not a copy
  assert.deepEqual(store.inMemory(10, 12), [{ i: 10 }, { i: 11 }, { i: 12 }]);
  await store.append(Array.from({ length: 5000 }, (_, i) => ({ i: 1000 + i })));
  await store.seal();
  assert.equal(store.inMemory(0, 1500), undefined);
  assert.equal(store.spilled, false);
  assert.deepEqual(await all(store, 998, 1001), [{ i: 998 }, { i: 999 }, { i: 1000 }, {
    i: 1001,
  }]);
  assert.deepEqual((await all(store)).map((r) => (r as { i: number }).i), [
    ...Array(6000).keys(),
  ]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("ResultStore rejects the append whose spill cannot be written", async () => {
  const dir = await Deno.makeTempDir();
  // The spill folder cannot be made: a file stands where it should be.
  const blocked = `${dir}/results`;
  await Deno.writeTextFile(blocked, "");
  const store = new ResultStore("q5", { memoryBytes: 0, spillDir: blocked });
  await store.append([{ a: 1 }]);
  await assert.rejects(() => store.append(Array.from({ length: 3000 }, (_, i) => ({ a: i }))));
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a full disk while spilling fails with 'no space left on the device'", async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    await using disk = await smallDisk(`${dir}/results`);
    if (disk === null) {
      await t.step({ name: "needs a tmpfs mount", ignore: true, fn: () => {} });
      return;
    }
    const store = new ResultStore("q9", { memoryBytes: 1024, spillDir: disk.dir });
    const rows = Array.from({ length: 500 }, (_, i) => ({ i, s: "x".repeat(200) }));
    await assert.rejects(
      async () => {
        for (let k = 0; k < 10; k++) await store.append(rows);
      },
      (e: unknown) =>
        e instanceof QueryError && e.diagnostic.code === "RUNTIME_ERROR" &&
        /no space left on the device while spilling the result to disk/.test(e.message),
    );
    await store.drop();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResultStore.drop() gives the memory of its segments back at once, not at the next GC", async () => {
  const dir = await Deno.makeTempDir();
  const store = new ResultStore("q-mem", { memoryBytes: 64 << 20, spillDir: dir });
  const text = "x".repeat(100);
  for (let i = 0; i < 100; i++) {
    await store.append(Array.from({ length: 1000 }, (_, j) => ({ n: i * 1000 + j, text })));
  }
  await store.seal();
  assert.ok(store.bytes > 10_000_000, `${store.bytes} bytes`);
  const before = Deno.memoryUsage().external;
  await store.drop();
  const freed = before - Deno.memoryUsage().external;
  assert.ok(freed > 10_000_000, `only ${freed} bytes given back`);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("ResultStore ends a read broken when it is dropped meanwhile", async () => {
  const dir = await Deno.makeTempDir();
  const store = new ResultStore("q-drop", { memoryBytes: 1 << 20, spillDir: dir });
  await store.append(Array.from({ length: 5000 }, (_, i) => ({ i })));
  const reader = store.read(0, store.count - 1);
  assert.equal((await reader.next()).value?.length, 1024);
  assert.equal(store.reading, true);
  await store.drop();
  await assert.rejects(() => reader.next(), ResultDroppedError);
  assert.equal(store.reading, false);
  await Deno.remove(dir, { recursive: true });
});

/** Texts as one rendered batch: their UTF-8 bytes back to back and where each ends. */
function rendered(texts: readonly string[]): [Uint8Array<ArrayBuffer>, Uint32Array] {
  const encoder = new TextEncoder();
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

Deno.test("ResultStore keeps rendered rows as their bytes among other items, in memory and spilled", async () => {
  for (const memoryBytes of [1 << 20, 2048]) {
    const dir = await Deno.makeTempDir();
    const store = new ResultStore("qr", { memoryBytes, spillDir: dir });
    const texts: StoredItem[] = [];
    const odd = ["", "ü", "東京", "😀x", "a\u0000b", '{"k":"\\n"}'];
    let n = 0;
    const next = (k: number) =>
      Array.from({ length: k }, () => `{"i":${n++},"s":"${odd[n % odd.length]}"}`);
    // First items as texts (a small result), then batches of rendered rows, a batch of
    // fragments and one of rows among them.
    for (const k of [3, 700, 1500, 1, 2000]) {
      const batch = next(k);
      await store.appendRendered(...rendered(batch));
      texts.push(...batch);
    }
    const plain = next(10);
    await store.append(plain);
    texts.push(...plain);
    await store.append([{ row: 1 }]);
    texts.push({ row: 1 });
    const last = next(1200);
    await store.appendRendered(...rendered(last));
    texts.push(...last);
    assert.equal(store.count, texts.length);
    assert.equal(store.spilled, memoryBytes === 2048);
    assert.deepEqual(await all(store), texts);
    for (const [a, b] of [[0, 2], [2, 3], [700, 2203], [1000, 1000], [4200, texts.length - 1]]) {
      assert.deepEqual(await all(store, a, b), texts.slice(a, b! + 1), `${a}-${b}`);
      // readParts: the same items, rendered ones as bytes cut at their ends.
      const got: StoredItem[] = [];
      for await (const part of store.readParts(a!, b!)) {
        if (Array.isArray(part)) got.push(...part);
        else {
          const p = part as { bytes: Uint8Array; ends: Uint32Array };
          let start = 0;
          for (const end of p.ends) {
            got.push(new TextDecoder().decode(p.bytes.subarray(start, end)));
            start = end;
          }
        }
      }
      assert.deepEqual(got, texts.slice(a, b! + 1), `parts ${a}-${b}`);
    }
    await store.drop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResultStore keeps rows rendered with their frame: read as bare texts, parts as stored", async () => {
  const frame = { separator: ",", before: "\x1e", after: "\n" };
  const framed = (t: string) => frame.separator + frame.before + t + frame.after;
  for (const memoryBytes of [1 << 20, 2048]) {
    const dir = await Deno.makeTempDir();
    const store = new ResultStore("qf", { memoryBytes, spillDir: dir });
    const odd = ["", "ü", "東京", "😀x", "a\u0000b"];
    const texts: string[] = [];
    let n = 0;
    // The first items (kept as texts), then batches kept as segments, spilled past the budget.
    for (const k of [5, 900, 1500, 3, 2500]) {
      const batch = Array.from({ length: k }, () => `{"i":${n++},"s":"${odd[n % odd.length]}"}`);
      const [bytes, ends] = rendered(batch.map(framed));
      await store.appendRendered(bytes, ends, frame);
      texts.push(...batch);
    }
    assert.equal(store.spilled, memoryBytes === 2048);
    for (const [a, b] of [[0, texts.length - 1], [3, 7], [905, 3000], [2404, texts.length - 1]]) {
      assert.deepEqual(await all(store, a, b), texts.slice(a, b! + 1), `${a}-${b}`);
      // readParts: rendered parts keep their frame, every row with it.
      const got: string[] = [];
      for await (const part of store.readParts(a!, b!)) {
        if (Array.isArray(part)) {
          got.push(...(part as string[]).map(framed));
          continue;
        }
        const p = part as { bytes: Uint8Array; ends: Uint32Array; frame?: unknown };
        assert.deepEqual(p.frame, frame);
        let start = 0;
        for (const end of p.ends) {
          got.push(new TextDecoder().decode(p.bytes.subarray(start, end)));
          start = end;
        }
      }
      assert.deepEqual(got, texts.slice(a, b! + 1).map(framed), `parts ${a}-${b}`);
    }
    await store.drop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResultStore places rendered lanes one after the other, whatever order their batches came in", async () => {
  const frame = { separator: "\n", before: "", after: "" };
  for (const memoryBytes of [1 << 30, 4096]) {
    const dir = await Deno.makeTempDir();
    let charged = 0;
    const account = { charge: (bytes: number) => void (charged += bytes), close: () => {} };
    const store = new ResultStore("ql", { memoryBytes, spillDir: dir, account });
    let given = 0;
    // Three lanes of batches (lane 0's first batch small enough to be kept as texts),
    // interleaved as shares' batches arrive; 3000 rows of ~100 bytes each fill runs of a lane.
    const lanes = [0, 1, 2].map((lane) =>
      Array.from({ length: 4 }, (_, b) =>
        Array.from(
          { length: b === 0 && lane === 0 ? 10 : 3000 },
          (_, i) => `{"lane":${lane},"b":${b},"i":${i},"pad":"${"ü".repeat(i % 40)}"}`,
        ))
    );
    const order: [number, number][] = [[1, 0], [0, 0], [2, 0], [1, 1], [1, 2], [0, 1], [2, 1]];
    order.push([0, 2], [2, 2], [0, 3], [2, 3], [1, 3]);
    for (const [lane, b] of order) {
      const [bytes, ends] = rendered(lanes[lane]![b]!.map((t) => frame.separator + t));
      if (lane !== 0 || b !== 0) given += bytes.length;
      await store.appendRendered(bytes, ends, frame, lane);
      // Every byte is counted as it comes, before its lane's run is kept.
      assert.ok(charged >= given, `${charged} charged, ${given} given`);
    }
    const before = charged;
    const texts = lanes.flat(2);
    assert.equal(store.count, texts.length);
    assert.deepEqual(store.inMemory(0, 9), lanes[0]![0], "lane 0's first batch kept as texts");
    assert.deepEqual(await all(store), texts);
    assert.equal(store.spilled, memoryBytes === 4096);
    assert.equal(charged, before, "nothing counted twice when the runs were kept");
    for (const [a, b] of [[5, 3020], [3009, 3010], [9000, 21_000], [20_000, texts.length - 1]]) {
      assert.deepEqual(await all(store, a, b), texts.slice(a, b! + 1), `${a}-${b}`);
    }
    await store.drop();
    await Deno.remove(dir, { recursive: true });
  }
});

/** What `readPlacedItems` gives now. */
async function placedItems(store: ResultStore, first = 0, last = store.placed - 1) {
  const out: StoredItem[] = [];
  for await (const batch of store.readPlacedItems(first, last)) out.push(...batch);
  return out;
}

Deno.test("ResultStore gives the items placed so far while it is still stored: lane 0's, whole, in their final places", async () => {
  const frame = { separator: "\n", before: "", after: "" };
  for (const memoryBytes of [1 << 30, 4096]) {
    const dir = await Deno.makeTempDir();
    const store = new ResultStore("qp", { memoryBytes, spillDir: dir });
    const lanes = [0, 1].map((lane) =>
      Array.from({ length: 3 }, (_, b) =>
        Array.from(
          { length: b === 0 && lane === 0 ? 10 : 3000 },
          (_, i) => `{"lane":${lane},"b":${b},"i":${i},"pad":"${"ü".repeat(i % 40)}"}`,
        ))
    );
    const laneZero: string[] = [];
    for (const [lane, b] of [[1, 0], [0, 0], [1, 1], [0, 1], [0, 2], [1, 2]] as const) {
      const batch = lanes[lane]![b]!;
      const [bytes, ends] = rendered(batch.map((t) => frame.separator + t));
      await store.appendRendered(bytes, ends, frame, lane);
      if (lane === 0) laneZero.push(...batch);
      // Every row of lane 0 has its place (the first items, its segments, its open run); the
      // other lane's rows wait for the seal.
      assert.equal(store.placed, laneZero.length, `after lane ${lane} batch ${b}`);
      assert.deepEqual(await placedItems(store), laneZero);
    }
    assert.deepEqual(await placedItems(store, 5, 3020), laneZero.slice(5, 3021));
    assert.deepEqual(await placedItems(store, 4000, 9000), laneZero.slice(4000, 9001));
    await store.seal();
    const texts = lanes.flat(2);
    assert.equal(store.placed, texts.length);
    assert.deepEqual(await placedItems(store), texts);
    await store.drop();
    assert.equal(store.placed, 0);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ResultStore places rows a segment at a time past the first items", async () => {
  const dir = await Deno.makeTempDir();
  const store = new ResultStore("qr2", { memoryBytes: 1 << 20, spillDir: dir });
  const rows = Array.from({ length: 2500 }, (_, i) => ({ i, s: `row ${i}` }));
  await store.append(rows.slice(0, 10));
  assert.equal(store.placed, 10);
  await store.append(rows.slice(10));
  // The first 10 as they came, then whole segments of 1024: the 442 after them wait.
  assert.equal(store.placed, 10 + 2 * 1024);
  assert.deepEqual(await placedItems(store), rows.slice(0, 10 + 2 * 1024));
  await store.seal();
  assert.deepEqual(await placedItems(store), rows);
  await store.drop();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("ResultStore spills what the server's pool for results has no room for, under its own budget, and reads it back", async () => {
  const dir = await Deno.makeTempDir();
  const quota = new ResultQuota({ maxResults: 10, maxBytes: 1 << 30, memoryBytes: 256 << 10 });
  const account = () => {
    const opened = quota.open("alice");
    if (!opened.ok) throw new Error(opened.message);
    return opened.account;
  };
  const rows = Array.from({ length: 6000 }, (_, i) => ({ i, s: `row ${i} `.repeat(8) }));
  const fill = async (store: ResultStore) => {
    for (let i = 0; i < rows.length; i += 500) await store.append(rows.slice(i, i + 500));
  };
  const first = new ResultStore("p1", { memoryBytes: 16 << 20, spillDir: dir, account: account() });
  await fill(first);
  assert.equal(first.spilled, true, "past the pool, though under its own 16 MiB");
  assert.ok(quota.inMemory > 0 && quota.inMemory <= 256 << 10, `${quota.inMemory} in memory`);
  const second = new ResultStore("p2", {
    memoryBytes: 16 << 20,
    spillDir: dir,
    account: account(),
  });
  await fill(second);
  assert.equal(second.spilled, true);
  assert.ok(quota.inMemory <= 256 << 10);
  assert.deepEqual(await all(first), rows);
  assert.deepEqual(await all(second, 100, 5999), rows.slice(100));
  await first.drop();
  await second.drop();
  assert.equal(quota.inMemory, 0, "dropped results give their memory back");
  // The pool free again: a small result stays in memory.
  const third = new ResultStore("p3", { memoryBytes: 16 << 20, spillDir: dir, account: account() });
  await third.append(rows.slice(0, 100));
  assert.equal(third.spilled, false);
  await third.drop();
  await Deno.remove(dir, { recursive: true });
});

/** Waits (polling) until `done()` holds; fails naming `what` after 30 s. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (const start = Date.now(); !done();) {
    if (Date.now() - start > 30_000) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

Deno.test("ResultStore's follower goes on lane after lane as each is told ended, before the seal, in the final order", async () => {
  const frame = { separator: "\n", before: "", after: "" };
  for (const memoryBytes of [1 << 30, 4096]) {
    const dir = await Deno.makeTempDir();
    const store = new ResultStore("qf", { memoryBytes, spillDir: dir });
    const lanes = [0, 1, 2].map((lane) =>
      Array.from({ length: 3 }, (_, b) =>
        Array.from(
          { length: b === 0 && lane === 0 ? 10 : 2000 },
          (_, i) => `{"lane":${lane},"b":${b},"i":${i},"pad":"${"ü".repeat(i % 40)}"}`,
        ))
    );
    const add = async (lane: number, b: number) => {
      const [bytes, ends] = rendered(lanes[lane]![b]!.map((t) => frame.separator + t));
      await store.appendRendered(bytes, ends, frame, lane);
    };
    const { promise: ended, resolve: end } = Promise.withResolvers<void>();
    const got: StoredItem[] = [];
    const following = (async () => {
      for await (const part of store.follow(ended)) {
        got.push(...(part instanceof RenderedRows ? decodeParts(part) : part));
      }
    })();
    // Lane 1 whole and told ended first, and a batch of lane 2: neither may come before lane 0.
    for (const b of [0, 1, 2]) await add(1, b);
    await store.endLane(1);
    await add(2, 0);
    for (const b of [0, 1, 2]) await add(0, b);
    const zeroAndOne = [...lanes[0]!.flat(), ...lanes[1]!.flat()];
    await store.endLane(0);
    await until(() => got.length >= zeroAndOne.length, "lanes 0 and 1 followed");
    assert.equal(store.sealed, false);
    assert.deepEqual(got, zeroAndOne);
    // Placed for a GET while it runs: lanes 0 and 1, then lane 2's batch in its open run.
    const placedNow = [...zeroAndOne, ...lanes[2]![0]!];
    assert.equal(store.placed, placedNow.length);
    assert.deepEqual(await placedItems(store), placedNow);
    assert.deepEqual(await placedItems(store, 2000, 5000), placedNow.slice(2000, 5001));
    for (const b of [1, 2]) await add(2, b);
    await store.endLane(2);
    const texts = lanes.flat(2);
    await until(() => got.length >= texts.length, "lane 2 followed");
    assert.equal(store.sealed, false);
    assert.deepEqual(got, texts);
    await store.seal();
    end();
    await following;
    assert.deepEqual(got, texts, "nothing more after the seal");
    await store.drop();
    await Deno.remove(dir, { recursive: true });
  }
});

/** The texts of a part of rendered rows (their frame's separator left out). */
function decodeParts(part: RenderedRows): string[] {
  const decoder = new TextDecoder();
  const out: string[] = [];
  let start = 0;
  for (const end of part.ends) {
    out.push(decoder.decode(part.bytes.subarray(start, end)).replace(/^\n/, ""));
    start = end;
  }
  return out;
}

Deno.test("a result read once (a synchronous answer) stays in memory while its reader keeps up, and is given to no other read", async () => {
  const frame = { separator: "\n", before: "", after: "" };
  const quota = new ResultQuota({ maxResults: 10, maxBytes: 1 << 30, memoryBytes: 3 << 20 });
  const opened = quota.open("alice");
  assert.ok(opened.ok);
  const dir = await Deno.makeTempDir();
  // 12 MiB of rows through a result of 2 MiB in memory (and a pool of 3), in lanes 0 and 1.
  const batches = Array.from(
    { length: 48 },
    (_, b) =>
      Array.from(
        { length: 1000 },
        (_, i) => `{"b":${b},"i":${i},"pad":"${"x".repeat(200 + (i % 50))}"}`,
      ),
  );
  const store = new ResultStore("once", {
    memoryBytes: 2 << 20,
    spillDir: dir,
    account: opened.account,
  });
  const { promise: ended, resolve: end } = Promise.withResolvers<void>();
  const got: StoredItem[] = [];
  let kept = 0;
  const reading = (async () => {
    for await (const part of store.follow(ended, true)) {
      got.push(...(part instanceof RenderedRows ? decodeParts(part) : part));
      kept = Math.max(kept, quota.inMemory);
    }
  })();
  for (const [b, texts] of batches.entries()) {
    const [bytes, ends] = rendered(texts.map((t) => frame.separator + t));
    await store.appendRendered(bytes, ends, frame, b < 24 ? 0 : 1);
    if (b === 23) await store.endLane(0);
    // The reader keeps pace: it has taken all but the open run (a segment is about 1 MiB).
    await until(() => got.length >= (b + 1) * 1000 - 6000, `batch ${b} read`);
  }
  await store.endLane(1);
  await store.seal();
  end();
  await reading;
  assert.deepEqual(got, batches.flat(), "every row once, in order");
  assert.equal(store.spilled, false, "nothing written to the spill file and read back");
  assert.ok(kept <= 3 << 20, `at most the pool in memory (${kept})`);
  // What the reader took is gone: a read of the whole result breaks, never ends short.
  await assert.rejects(
    async () => {
      for await (const _ of store.readParts(0, store.count - 1)) { /* read on */ }
    },
    ResultDroppedError,
  );
  await store.drop();
  assert.equal(quota.inMemory, 0);

  // A result followed without `once` (an asynchronous one) keeps every row: past its budget
  // it spills, and any read gives it whole.
  const kept2 = new ResultStore("kept", { memoryBytes: 2 << 20, spillDir: dir });
  const { promise: ended2, resolve: end2 } = Promise.withResolvers<void>();
  let followed = 0;
  const reading2 = (async () => {
    for await (const part of kept2.follow(ended2)) {
      followed += part instanceof RenderedRows ? part.ends.length : part.length;
    }
  })();
  for (const texts of batches) {
    const [bytes, ends] = rendered(texts.map((t) => frame.separator + t));
    await kept2.appendRendered(bytes, ends, frame, 0);
  }
  await kept2.seal();
  end2();
  await reading2;
  assert.equal(followed, 48_000);
  assert.equal(kept2.spilled, true);
  assert.deepEqual((await all(kept2)).length, 48_000);
  await kept2.drop();
  await Deno.remove(dir, { recursive: true });
});
