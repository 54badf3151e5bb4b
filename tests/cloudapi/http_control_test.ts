/**
 * What a user of the HTTP API sees of a cloudapi:// query while it fetches: cancelling it
 * stops its cloud requests, its progress moves, and a server clock that is off is a warning.
 */

import assert from "node:assert/strict";
import { pollUntil, startQuery, type Status, status } from "../api/client.ts";
import {
  cloudServer,
  duplicatesOf,
  FAMILIES,
  readScript,
  storeDefinition,
} from "./http_harness.ts";
import { HOUR, NOW } from "./harness.ts";
import { sleep } from "../../engine/util/sleep.ts";

const AUDITS = FAMILIES[0]!;

Deno.test("cancelling a query aborts its cloud request in flight and sends no further ones", async () => {
  await using c = await cloudServer();
  const store = await c.addStore(
    { faults: [{ kind: "slow", match: "/auditLogs/", times: 1_000, delayMs: 20_000 }] },
    storeDefinition({ readTimeout: "60 s" }),
  );
  const id = await startQuery(c.s, readScript(store.name, AUDITS, NOW - 6 * HOUR, NOW));
  const inFlight = () =>
    store.emulator.requests.find((r) => r.api === "graph" && r.status === 0 && !r.aborted);
  const until = Date.now() + 5_000;
  while (!inFlight()) {
    assert.ok(Date.now() < until, "a Graph request is under way");
    await sleep(10);
  }
  const pending = inFlight()!;
  const requestsBefore = store.emulator.requests.length;

  const res = await c.s.fetch("alice", `/API/v1.0/queries/${id}`, { method: "DELETE" });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  // Within pollUntil's 2 s (not the 200 ms of the latency step: beside the whole parallel suite
  // a cancel took 210 ms).
  const st = await pollUntil(c.s, id, (s) => s.state === "CANCELLED", 2_000);
  assert.equal(st.stateChanges.at(-1)?.to, "CANCELLED");

  // The emulator saw the client go away (not the 20 s answer), and nothing came after it.
  const seenBy = Date.now() + 2_000;
  while (!pending.aborted && Date.now() < seenBy) await sleep(10);
  assert.equal(pending.aborted, true, "the request in flight was aborted");
  await sleep(300);
  assert.equal(store.emulator.requests.length, requestsBefore, "no request after the cancel");
});

Deno.test("the progress of a query moves between 0 and 1 while hours are fetched, and ends at 1", async () => {
  await using c = await cloudServer();
  // Every Graph page takes 60 ms: 6 hours of one or two pages each take half a second.
  const store = await c.addStore({
    faults: [{ kind: "slow", match: "/auditLogs/", times: 1_000, delayMs: 60 }],
  });
  const from = NOW - 6 * HOUR - 30 * 60_000;
  const to = from + 6 * HOUR;
  const id = await startQuery(c.s, readScript(store.name, AUDITS, from, to));
  const seen: Status[] = [];
  const last = await pollUntil(c.s, id, (s) => {
    seen.push(s);
    return ["SUCCEEDED", "FAILED", "CANCELLED"].includes(s.state);
  });
  assert.equal(last.state, "SUCCEEDED", JSON.stringify(last));
  assert.equal(last.progress, 1);
  const progress = seen.map((s) => s.progress);
  for (let i = 1; i < progress.length; i++) {
    assert.ok(progress[i]! >= progress[i - 1]!, `progress never goes back: ${progress}`);
  }
  const between = [...new Set(progress.filter((p) => p > 0 && p < 1))];
  assert.ok(between.length >= 2, `progress increased in steps between 0 and 1: ${between}`);
  const graph = store.emulator.requests.filter((r) => r.api === "graph").length;
  assert.ok(graph >= 6, `each of the 6 hours was fetched (${graph} requests)`);
});

Deno.test("a cloud API whose Date header is 10 minutes off gives the query a WARN warning that says so", async () => {
  await using c = await cloudServer();
  const store = await c.addStore({ dateSkewMs: 10 * 60_000 });
  const from = NOW - 2 * HOUR - 30 * 60_000;
  const to = from + HOUR;
  const id = await startQuery(c.s, readScript(store.name, AUDITS, from, to));
  const st = await pollUntil(c.s, id, (s) => s.state === "SUCCEEDED" || s.state === "FAILED");
  assert.equal(st.state, "SUCCEEDED");
  assert.equal(st.warnings.length, 1, JSON.stringify(st.warnings));
  assert.equal(st.warnings[0]!.level, "WARN");
  assert.match(
    st.warnings[0]!.message,
    new RegExp(
      `^datastore '${store.name}': the cloud API's clock differs from ours by 600 s; ` +
        `time windows may be off, check the server's clock$`,
    ),
  );
  // The warning is given, the records still come.
  const res = await c.s.fetch("alice", `/API/v1.0/queries/${id}/result`);
  const ids = (await res.json() as { id: string }[]).map((r) => r.id);
  assert.deepEqual(duplicatesOf(ids), []);
  assert.deepEqual(ids.sort(), AUDITS.expected(store.emulator, from, to, store.clock.now));
  assert.deepEqual((await status(c.s, id)).warnings, st.warnings);
});

Deno.test("a cloud API whose clock is right gives no clock warning", async () => {
  await using c = await cloudServer();
  const store = await c.addStore({ dateSkewMs: 2 * 60_000 });
  const from = NOW - 2 * HOUR - 30 * 60_000;
  const out = await c.asyncQuery(readScript(store.name, AUDITS, from, from + HOUR));
  assert.equal(out.status, 200);
  assert.deepEqual(out.last?.warnings, []);
});
