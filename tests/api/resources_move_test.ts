/**
 * Moves through the API (routes/resources.ts): a folder never into itself or below itself, a
 * move up or beside it allowed, and a name that only begins like the folder's is not inside it.
 */

import assert from "node:assert/strict";
import { startTestServer } from "./server.ts";

const R = "/API/v1.0/resources";

Deno.test("POST moveTo refuses a folder moved into itself or below, and moves one up or beside it", async () => {
  await using s = await startTestServer();
  await s.write("/users/alice/a/b/x.sx", "VALUES((a: 1))");
  await s.write("/users/alice/a/y.sx", "VALUES((a: 2))");
  const move = (from: string, to: string) =>
    s.fetch("alice", `${R}${from}?moveTo=${to}`, { method: "POST" });
  for (const to of ["/user/a/inside", "/user/a/b/deeper"]) {
    const res = await move("/user/a", to);
    assert.equal(res.status, 400, to);
    const body = await res.json();
    assert.equal(body.code, "BAD_PARAMETER");
    assert.match(body.message, /a folder cannot be moved into itself/);
  }
  // Nothing moved.
  assert.equal(await (await s.fetch("alice", `${R}/user/a/b/x.sx`)).text(), "VALUES((a: 1))");
  // Up: the inner folder out of its parent, beside it.
  const up = await move("/user/a/b", "/user/b");
  assert.equal(up.status, 201);
  await up.body?.cancel();
  assert.equal(await (await s.fetch("alice", `${R}/user/b/x.sx`)).text(), "VALUES((a: 1))");
  // A sibling whose name begins with the folder's is not inside it.
  const beside = await move("/user/a", "/user/ab");
  assert.equal(beside.status, 201);
  await beside.body?.cancel();
  assert.equal(await (await s.fetch("alice", `${R}/user/ab/y.sx`)).text(), "VALUES((a: 2))");
  // A file moved up a level.
  const file = await move("/user/ab/y.sx", "/user/y.sx");
  assert.equal(file.status, 201);
  await file.body?.cancel();
  const gone = await s.fetch("alice", `${R}/user/ab/y.sx`);
  assert.equal(gone.status, 404);
  await gone.body?.cancel();
});
