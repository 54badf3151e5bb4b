import assert from "node:assert/strict";
import { AnsweredQueries } from "./answered_queries.ts";

Deno.test("answered statuses are kept for the retention, then forgotten", () => {
  const answered = new AnsweredQueries(1000);
  answered.remember("q1", "alice", { state: "SUCCEEDED" }, 0);
  assert.deepEqual(answered.get("q1", 1000)?.status, { state: "SUCCEEDED" });
  assert.equal(answered.get("q1", 1001), undefined);
  // Remembering later forgets what is past its retention.
  answered.remember("q2", "alice", {}, 5000);
  assert.equal(answered.size, 1);
  assert.ok(answered.forget("q2"));
  assert.equal(answered.get("q2", 5000), undefined);
});

Deno.test("at most `capacity` answered statuses are kept, the oldest forgotten first", () => {
  const answered = new AnsweredQueries(60_000, 3);
  for (let i = 0; i < 5; i++) answered.remember(`q${i}`, "alice", i, i);
  assert.equal(answered.size, 3);
  assert.equal(answered.get("q1", 10), undefined);
  assert.equal(answered.get("q4", 10)?.status, 4);
});
