import assert from "node:assert/strict";
import { decodePage, encodePage, READ_BATCH, ResultPages } from "./result_pages.ts";
import type { StoredItem } from "../result_store.ts";
import { memoryStorage } from "../test_support.ts";
import { Interval, IpAddr, Timestamp } from "../../engine/mod.ts";

Deno.test("a page of a shared result gives back every value, absent field and fragment as stored", () => {
  const items: StoredItem[] = [
    {
      n: 1,
      s: "~U",
      t: new Timestamp(1714561200000),
      i: new Interval(90_000),
      ip: new IpAddr(4, 3232235777),
      z: null,
      nan: NaN,
      list: [1, "two"],
    },
    // A field of the schema missing, and one the schema does not name.
    { n: 2, extra: "x" },
    "a,serialised,fragment\n",
    { s: "~~tilde", n: -0 },
  ];
  const decoded = decodePage(encodePage(items, ["n", "s", "t"]));
  assert.deepEqual(decoded, items);
  assert.ok(Object.is((decoded[3] as { n: number }).n, -0));
  assert.equal("s" in (decoded[1] as object), false);
  assert.equal("t" in (decoded[1] as object), false);
});

/** `count` rows `{n}` as a result store reads them, in batches of 7. */
function rows(count: number) {
  const all = Array.from({ length: count }, (_, n) => ({ n }));
  return {
    count,
    async *read(first: number, last: number) {
      for (let i = first; i <= last; i += 7) yield all.slice(i, Math.min(last + 1, i + 7));
    },
  };
}

async function read(
  pages: ResultPages,
  id: string,
  result: Parameters<ResultPages["read"]>[1],
  first: number,
  last: number,
) {
  const out: number[] = [];
  for await (const batch of pages.read(id, result, first, last)) {
    out.push(...batch.map((r) => (r as { n: number }).n));
  }
  return out;
}

Deno.test("a result written in pages reads back any range: within a page, across pages, to the end and past it", async () => {
  await using storage = await memoryStorage();
  const pages = new ResultPages(storage, 10);
  const result = await pages.write("q1", rows(25), ["n"], 60_000);
  assert.deepEqual(result, { count: 25, pages: 3, pageItems: 10 });
  const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
  assert.deepEqual(await read(pages, "q1", result, 0, 24), range(0, 24));
  assert.deepEqual(await read(pages, "q1", result, 3, 4), [3, 4]);
  assert.deepEqual(await read(pages, "q1", result, 9, 10), [9, 10]);
  assert.deepEqual(await read(pages, "q1", result, 8, 21), range(8, 21));
  assert.deepEqual(await read(pages, "q1", result, 20, 20), [20]);
  // A range past the end ends with the last item.
  assert.deepEqual(await read(pages, "q1", result, 22, 1000), [22, 23, 24]);
  assert.deepEqual(await read(pages, "q1", result, 30, 40), []);
});

Deno.test("an empty result has no page; a page of exactly pageItems makes no empty page after it", async () => {
  await using storage = await memoryStorage();
  const pages = new ResultPages(storage, 10);
  assert.deepEqual(await pages.write("e", rows(0), ["n"], 60_000), {
    count: 0,
    pages: 0,
    pageItems: 10,
  });
  const exact = await pages.write("x", rows(20), ["n"], 60_000);
  assert.equal(exact.pages, 2);
  assert.equal((await read(pages, "x", exact, 0, 19)).length, 20);
});

Deno.test("a shared result is read in batches of READ_BATCH items, none longer, none lost", async () => {
  await using storage = await memoryStorage();
  const pages = new ResultPages(storage);
  const count = 2 * READ_BATCH + 5;
  const result = await pages.write("b", rows(count), ["n"], 60_000);
  const sizes: number[] = [];
  let next = 1;
  for await (const batch of pages.read("b", result, 1, count - 1)) {
    sizes.push(batch.length);
    for (const row of batch) assert.equal((row as { n: number }).n, next++);
  }
  assert.deepEqual(sizes, [READ_BATCH, READ_BATCH, 4]);
});

Deno.test("a dropped result's pages are gone: reading it says so", async () => {
  await using storage = await memoryStorage();
  const pages = new ResultPages(storage, 10);
  const result = await pages.write("d", rows(15), ["n"], 60_000);
  await pages.drop("d", result);
  await assert.rejects(read(pages, "d", result, 0, 14), /the stored result of query d is gone/);
  const left = [];
  for await (const key of storage.list(["queries", "r"])) left.push(key);
  assert.deepEqual(left, []);
});
