import assert from "node:assert/strict";
import { ExpiredIds } from "./expired_ids.ts";

Deno.test("an expired id answers its owner for the memory time, then is forgotten", () => {
  const ids = new ExpiredIds(1_000);
  ids.remember("q1", "alice", 5_000);
  assert.equal(ids.ownerOf("q1", 5_000), "alice");
  assert.equal(ids.ownerOf("q1", 6_000), "alice");
  assert.equal(ids.ownerOf("q1", 6_001), undefined);
  assert.equal(ids.ownerOf("never", 5_000), undefined);
});

Deno.test("remembering an id forgets those past their memory, so the registry stays bounded", () => {
  const ids = new ExpiredIds(100);
  for (let t = 0; t < 10_000; t++) ids.remember(`q${t}`, "alice", t);
  // Only the ids of the last 100 ms (and the one just added) are kept.
  assert.equal(ids.size, 101);
  assert.equal(ids.ownerOf("q9899", 9_999), "alice");
  assert.equal(ids.ownerOf("q0", 9_999), undefined);
});

Deno.test("at most maxIds are remembered, the newest: a day of synchronous queries cannot fill the heap", () => {
  const ids = new ExpiredIds(24 * 3_600_000, 1_000);
  for (let t = 0; t < 5_000; t++) ids.remember(`q${t}`, "alice", t);
  assert.equal(ids.size, 1_000);
  assert.equal(ids.ownerOf("q4999", 5_000), "alice");
  assert.equal(ids.ownerOf("q4000", 5_000), "alice");
  assert.equal(ids.ownerOf("q3999", 5_000), undefined);
});

Deno.test("an id remembered again moves to the young end and keeps its new owner", () => {
  const ids = new ExpiredIds(100);
  ids.remember("q1", "alice", 0);
  ids.remember("q2", "bob", 50);
  ids.remember("q1", "carol", 60);
  ids.remember("q3", "bob", 155);
  assert.equal(ids.ownerOf("q2", 155), undefined);
  assert.equal(ids.ownerOf("q1", 155), "carol");
  assert.equal(ids.size, 2);
});
