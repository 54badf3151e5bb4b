/**
 * An admin may do everything (README), and `GET /queries` shows admins everyone's queries: the
 * same admin reads the status, result, schema and events of any user's query and cancels or
 * frees it. Another user who is not an admin still gets the 404 of an id that does not exist.
 */

import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "./server.ts";
import { expectError, FINISHED, SLOW_SCRIPT, startQuery, status, writeBigLog } from "./client.ts";
import { sleep } from "../../engine/util/sleep.ts";

const API = "/API/v1.0";

async function asAdmin(
  s: TestServer,
): Promise<(path: string, init?: RequestInit) => Promise<Response>> {
  const token = await s.deps.users.add("root", { admin: true });
  return (path, init = {}) =>
    s.fetch("root", path, { ...init, headers: { Authorization: `Bearer ${token}` } });
}

/** Bob's query's state once `done` holds (polled as bob every 10 ms, for at most 10 s). */
async function bobsQueryWhen(
  s: TestServer,
  id: string,
  done: (state: string) => boolean,
): Promise<string> {
  const until = Date.now() + 10_000;
  for (;;) {
    const { state } = await status(s, id, "bob");
    if (done(state) || Date.now() > until) return state;
    await sleep(10);
  }
}

Deno.test("an admin reads another user's query, its result, schema and events, and frees it; a non-admin gets 404", async () => {
  await using s = await startTestServer();
  const root = await asAdmin(s);
  const id = await startQuery(s, "VALUES((a: 1, b: 'x'), (a: 2, b: 'y'))", { user: "bob" });
  assert.equal(await bobsQueryWhen(s, id, (st) => FINISHED.includes(st)), "SUCCEEDED");

  const st = await root(`${API}/queries/${id}`);
  assert.equal(st.status, 200);
  assert.equal(st.headers.get("Location"), `${API}/queries/${id}/result`);
  const body = await st.json();
  assert.equal(body.queryId, id);
  assert.equal(body.state, "SUCCEEDED");
  const rows = await root(`${API}/queries/${id}/result`);
  assert.equal(rows.status, 200);
  assert.deepEqual(await rows.json(), [{ a: 1, b: "x" }, { a: 2, b: "y" }]);
  const schema = await root(`${API}/queries/${id}/result/schema`);
  assert.equal(schema.status, 200);
  assert.deepEqual(Object.keys(await schema.json()), ["a", "b"]);
  const events = await root(`${API}/queries/${id}/events`);
  assert.equal(events.status, 200);
  assert.match(await events.text(), /^id: \S+\nevent: status\ndata: \{"queryId":"[^"]+"/);

  // alice is no admin: bob's query is what an id that does not exist is to her.
  for (const path of ["", "/result", "/result/schema", "/events"]) {
    await expectError(await s.fetch("alice", `${API}/queries/${id}${path}`), 404, "NOT_FOUND");
  }
  await expectError(
    await s.fetch("alice", `${API}/queries/${id}`, { method: "DELETE" }),
    404,
    "NOT_FOUND",
  );
  assert.equal((await status(s, id, "bob")).state, "SUCCEEDED");

  // The admin frees it: gone for bob (410) and for the admin.
  const freed = await root(`${API}/queries/${id}`, { method: "DELETE" });
  assert.equal(freed.status, 204);
  await expectError(await s.fetch("bob", `${API}/queries/${id}`), 410, "QUERY_EXPIRED");
  await expectError(await root(`${API}/queries/${id}/result`), 410, "QUERY_EXPIRED");
  await expectError(await s.fetch("alice", `${API}/queries/${id}`), 404, "NOT_FOUND");
});

Deno.test("an admin cancels another user's runaway query; a non-admin's DELETE leaves it running", async () => {
  const lines: string[] = [];
  await using s = await startTestServer({}, { logLine: (line) => lines.push(line) });
  const root = await asAdmin(s);
  await writeBigLog(s);
  const id = await startQuery(s, SLOW_SCRIPT, { user: "bob" });
  const running = async () => {
    const res = await root(`${API}/queries/${id}`);
    assert.equal(res.status, 200);
    return (await res.json()).state as string;
  };
  for (let i = 0; i < 1000 && !["RUNNING", "SUCCEEDED"].includes(await running()); i++) {
    await sleep(10);
  }
  await expectError(
    await s.fetch("alice", `${API}/queries/${id}`, { method: "DELETE" }),
    404,
    "NOT_FOUND",
  );
  assert.equal(await running(), "RUNNING", "the query must still run when it is cancelled");
  const res = await root(`${API}/queries/${id}`, { method: "DELETE" });
  assert.equal(res.status, 200);
  assert.equal((await res.json()).queryId, id);
  assert.equal(await bobsQueryWhen(s, id, (st) => FINISHED.includes(st)), "CANCELLED");
  // Said in the log, as an owner's own cancel is not.
  const said = lines.filter((l) => l.includes(` INFO admin 'root' cancelled query ${id}`));
  assert.equal(said.length, 1, lines.join("\n"));
  assert.match(said[0]!, /of user 'bob'$/);
});
