import assert from "node:assert/strict";
import { startTestServer } from "./server.ts";
import { expectError, finished, startQuery } from "./client.ts";

Deno.test("a saved table is read back with its schema, in formats and by Range; others get 404", async () => {
  await using s = await startTestServer();
  const id = await startQuery(
    s,
    "VALUES((a: 1, s: 'x'), (a: 2, s: 'y'), (a: 3, s: 'z')) | save('/user/t.sxt')",
  );
  assert.equal((await finished(s, id)).state, "SUCCEEDED");
  const rows = await s.fetch("alice", "/API/v1.0/tables/user/t.sxt");
  assert.equal(rows.status, 200);
  assert.equal(rows.headers.get("Accept-Ranges"), "items");
  assert.equal(await rows.text(), '[{"a":1,"s":"x"},{"a":2,"s":"y"},{"a":3,"s":"z"}]');
  const csv = await s.fetch("alice", "/API/v1.0/tables/users/alice/t.sxt", {
    headers: { Accept: "application/csv", Range: "items=1-" },
  });
  assert.equal(csv.status, 206);
  assert.equal(csv.headers.get("Content-Range"), "items 1-2/3");
  assert.equal(await csv.text(), '"a";"s"\n2;"y"\n3;"z"\n');
  const schema = await s.fetch("alice", "/API/v1.0/tables/user/t.sxt/schema");
  assert.deepEqual(await schema.json(), { a: "INTEGER", s: "STRING" });
  await expectError(await s.fetch("bob", "/API/v1.0/tables/users/alice/t.sxt"), 404, "NOT_FOUND");
  await expectError(
    await s.fetch("alice", "/API/v1.0/tables/user/t.sxt", { headers: { Range: "items=3-" } }),
    416,
    "RANGE_NOT_SATISFIABLE",
  );
});

Deno.test("a table whose name holds ']' is read and described like any other", async () => {
  await using s = await startTestServer();
  const id = await startQuery(s, "VALUES((a: 1), (a: 2)) | save('/user/a]b.sxt')");
  assert.equal((await finished(s, id)).state, "SUCCEEDED");
  const rows = await s.fetch("alice", "/API/v1.0/tables/user/a%5Db.sxt");
  assert.equal(rows.status, 200);
  assert.equal(await rows.text(), '[{"a":1},{"a":2}]');
  const schema = await s.fetch("alice", "/API/v1.0/tables/users/alice/a%5Db.sxt/schema");
  assert.deepEqual(await schema.json(), { a: "INTEGER" });
  await expectError(await s.fetch("alice", "/API/v1.0/tables/user/a%5Dc.sxt"), 404, "NOT_FOUND");
});
