/** GET /tables answers a link to a table the caller may not read like a missing table. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startTestServer } from "../api/server.ts";

Deno.test("GET /tables through a link to another user's table is a 404, not a hint", async () => {
  await using s = await startTestServer();
  const saved = await s.fetch("bob", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { "Content-Type": "text/vnd.engine.script" },
    body: "VALUES((secret: 'bob only')) | save('/user/t.sxt')",
  });
  assert.equal(saved.status, 200, await saved.text());
  const data = join(s.home, "data");
  await Deno.symlink(join(data, "users", "bob", "t.sxt"), join(data, "users", "alice", "l.sxt"));

  for (const path of ["/API/v1.0/tables/user/l.sxt", "/API/v1.0/tables/user/l.sxt/schema"]) {
    const res = await s.fetch("alice", path);
    const body = await res.json();
    assert.equal(res.status, 404, path);
    assert.equal(body.code, "NOT_FOUND");
    assert.ok(!JSON.stringify(body).includes("bob"), JSON.stringify(body));
  }
  // Bob reads his own table.
  const own = await s.fetch("bob", "/API/v1.0/tables/user/t.sxt");
  assert.deepEqual(await own.json(), [{ secret: "bob only" }]);
});
