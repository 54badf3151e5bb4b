import assert from "node:assert/strict";
import { decodePage, encodePage } from "./shared_queries.ts";
import { Interval, IpAddr, Timestamp } from "../engine/mod.ts";
import type { StoredItem } from "./result_store.ts";

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
