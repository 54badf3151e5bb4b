import assert from "node:assert/strict";
import { startTestServer } from "./server.ts";
import { finished, SCRIPT_TYPE, startQuery } from "./client.ts";

const SCRIPT = "VALUES((t: T('2024-05-01 13:00:00'))) | select(t, hour(t) as h)";

Deno.test("a user without a zone computes and renders in server.timeZone, so hour(t) and t agree", async () => {
  await using s = await startTestServer({ "server.timeZone": "Asia/Kolkata" });
  const expected = [{ t: "2024-05-01T13:00:00.000+05:30", h: 13 }];
  const sync = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: SCRIPT,
  });
  assert.deepEqual(await sync.json(), expected);
  // Not fixed at POST: the rows are rendered when fetched, in the same zone.
  const id = await startQuery(s, SCRIPT);
  assert.equal((await finished(s, id)).state, "SUCCEEDED");
  assert.deepEqual(
    await (await s.fetch("alice", `/API/v1.0/queries/${id}/result`)).json(),
    expected,
  );
  // opt.timezone changes only the rendering.
  const utc = await s.fetch("alice", `/API/v1.0/queries/${id}/result?opt.timezone=UTC`);
  assert.deepEqual(await utc.json(), [{ t: "2024-05-01T07:30:00.000+00:00", h: 13 }]);
});

Deno.test("a user's own zone wins over server.timeZone for computing and rendering", async () => {
  await using s = await startTestServer({ "server.timeZone": "Asia/Kolkata" });
  const token = await s.deps.users.add("carol", { timeZone: "America/New_York" });
  const res = await s.fetch("carol", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { ...SCRIPT_TYPE, Authorization: `Bearer ${token}` },
    body: SCRIPT,
  });
  assert.deepEqual(await res.json(), [{ t: "2024-05-01T13:00:00.000-04:00", h: 13 }]);
});
