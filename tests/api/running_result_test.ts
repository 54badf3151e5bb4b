/**
 * Rows while the query runs (issue 27, item 5; docs/api.md, "Rows while it runs"): a page
 * (`Range: items=`) of a RUNNING query's result answers at once with the rows stored so far,
 * whole rows in their final order, marked partial (`Trawl-Query-State`, `Trawl-Rows-So-Far`,
 * a `Content-Range` total of `*`); the status and the events carry the bytes and records read,
 * and an estimate of the time left while the input's size is known.
 *
 * A real server and a real, large log (six names of a 1.5 M-line file under the test's home):
 * the query filters it slowly enough that the test sees it RUNNING. No timing: each assertion
 * is about what an answer says, and a page read is checked against the state the same answer
 * reports.
 */

import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "./server.ts";
import { finished, pollUntil, SLOW_SCRIPT, startQuery, status, writeBigLog } from "./client.ts";

/** The slow script over six names of the big log: 9 M lines, a row every 500. */
const SLOW_ALL = SLOW_SCRIPT.replace("big.log", "big*.log");

async function bigServer(overrides: Record<string, string> = {}): Promise<TestServer> {
  const s = await startTestServer(overrides);
  const big = await writeBigLog(s, 1_500_000);
  for (const n of [2, 3, 4, 5, 6]) await Deno.link(big, big.replace("big.log", `big${n}.log`));
  return s;
}

/** The first page read while the answer says RUNNING with rows; fails if the query ends first. */
async function pageWhileRunning(
  s: TestServer,
  id: string,
  range: string,
  accept = "application/json",
): Promise<{ res: Response; text: string }> {
  for (;;) {
    const res = await s.fetch("alice", `/API/v1.0/queries/${id}/result`, {
      headers: { Range: range, Accept: accept },
    });
    const text = await res.text();
    const state = res.headers.get("Trawl-Query-State");
    if (res.status === 206) {
      assert.equal(state, "RUNNING", "a partial page says the query runs");
      return { res, text };
    }
    if (res.status === 200) {
      // Nothing of the page yet: an empty answer, saying how many rows there are so far.
      assert.equal(state, "RUNNING");
      assert.equal(res.headers.get("Trawl-Rows-So-Far"), "0");
      assert.equal(res.headers.get("Content-Range"), null);
      if (accept === "application/json") assert.equal(text, "[]");
    } else {
      // Before it runs (QUEUED, SCHEDULED) a page is refused as before; never once it ended.
      assert.equal(res.status, 409, text);
      assert.equal(JSON.parse(text).code, "QUERY_NOT_FINISHED", text);
    }
    const st = await status(s, id);
    assert.ok(!["SUCCEEDED", "FAILED", "CANCELLED"].includes(st.state), "ended before a page");
    await new Promise((r) => setTimeout(r, 20));
  }
}

Deno.test("a page of a RUNNING query's result answers at once with whole rows so far, in order, marked partial", async () => {
  await using s = await bigServer();
  const id = await startQuery(s, SLOW_ALL);
  const { res, text } = await pageWhileRunning(s, id, "items=0-9");
  const rows = JSON.parse(text) as { n: number; x: string }[];
  assert.ok(rows.length >= 1 && rows.length <= 10);
  // The first rows of the result as it will be: the lines n = 0, 500, 1000, ... in file order.
  assert.deepEqual(rows.map((r) => r.n), rows.map((_, i) => 500 * i));
  for (const r of rows) assert.equal(r.x, " host-17 GET /index.html 200 5120");
  assert.equal(res.headers.get("Content-Range"), `items 0-${rows.length - 1}/*`);
  assert.equal(res.headers.get("Accept-Ranges"), "items");
  assert.ok(Number(res.headers.get("Trawl-Rows-So-Far")) >= rows.length);

  // A later page, once there are rows for it: its rows are those of the same places.
  const later = await pageWhileRunning(s, id, "items=5-7");
  const again = JSON.parse(later.text) as { n: number }[];
  assert.deepEqual(again.map((r) => r.n), again.map((_, i) => 500 * (5 + i)));

  // CSV: a header and whole lines, nothing cut.
  const csv = await pageWhileRunning(s, id, "items=0-2", "application/csv");
  const lines = csv.text.split("\n");
  assert.equal(lines.at(-1), "", "ends with a whole line");
  assert.deepEqual(lines[0], '"n";"x"');
  assert.deepEqual(lines.slice(1, -1).map((l) => l.split(";")[0]), ["0", "500", "1000"]);

  // The status while it runs: what it has read, and the time left once its progress is known.
  const st = await pollUntil(
    s,
    id,
    (x) => x.state !== "RUNNING" || (x.progress > 0.01 && hasEta(x)),
  ) as unknown as { state: string; stats: Record<string, number> };
  assert.equal(st.state, "RUNNING", "the query ended before its progress was seen");
  assert.ok(st.stats.bytesRead! > 0 && st.stats.recordsRead! > 0, JSON.stringify(st.stats));
  assert.ok(st.stats.etaMillis! >= 0 && Number.isInteger(st.stats.etaMillis));

  const del = await s.fetch("alice", `/API/v1.0/queries/${id}`, { method: "DELETE" });
  await del.body?.cancel();
  const end = await finished(s, id) as unknown as { state: string; stats: Record<string, number> };
  assert.equal(end.state, "CANCELLED");
  assert.equal(end.stats.etaMillis, undefined, "no estimate once it has ended");
  // Ended without succeeding: a page is refused as before.
  const gone = await s.fetch("alice", `/API/v1.0/queries/${id}/result`, {
    headers: { Range: "items=0-9" },
  });
  assert.equal(gone.status, 409);
  assert.equal((await gone.json()).code, "QUERY_CANCELLED");
});

for (const workers of ["1", "2"]) {
  Deno.test(`a format fixed at POST pages while running too, whole rows in order (${workers} scan workers)`, async () => {
    await using s = await bigServer({ "query.workers": workers });
    await fixedFormatPages(s);
  });
}

/** With two workers the shares of the scan come as lanes: only the first lane's rows are placed. */
async function fixedFormatPages(s: TestServer): Promise<void> {
  const id = await startQuery(s, SLOW_ALL, { headers: { Accept: "application/x-ndjson" } });
  const { res, text } = await pageWhileRunning(s, id, "items=0-3", "application/x-ndjson");
  assert.equal(res.headers.get("Content-Type"), "application/x-ndjson; charset=UTF-8");
  const lines = text.split("\n");
  assert.equal(lines.at(-1), "");
  const rows = lines.slice(0, -1).map((l) => JSON.parse(l) as { n: number });
  assert.deepEqual(rows.map((r) => r.n), rows.map((_, i) => 500 * i));
  const del = await s.fetch("alice", `/API/v1.0/queries/${id}`, { method: "DELETE" });
  await del.body?.cancel();
  assert.equal((await finished(s, id)).state, "CANCELLED");
}

Deno.test("the events carry bytes and records read and an estimate of the time left while the query runs", async () => {
  await using s = await bigServer();
  const id = await startQuery(s, SLOW_ALL);
  const res = await s.fetch("alice", `/API/v1.0/queries/${id}/events`);
  assert.equal(res.status, 200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let seen: Record<string, number> | undefined;
  let state = "";
  let statsEvents = 0;
  while (!seen) {
    const { value, done } = await reader.read();
    assert.ok(!done, "the stream ended before a stats event with what was read");
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "null");
      if (event === "status") state = data.state;
      if (event === "state") state = data.to;
      if (event !== "stats") continue;
      statsEvents++;
      for (const k of ["rowsOut", "elapsedMillis", "filesRead", "bytesRead", "recordsRead"]) {
        assert.equal(typeof data[k], "number", `${k} in ${JSON.stringify(data)}`);
      }
      assert.ok(state !== "SUCCEEDED", "the query ended before its progress was seen");
      if (state === "RUNNING" && data.bytesRead > 0 && data.etaMillis !== undefined) seen = data;
    }
  }
  await reader.cancel();
  assert.ok(seen.recordsRead! > 0 && seen.elapsedMillis! > 0);
  assert.ok(seen.etaMillis! >= 0);
  assert.ok(statsEvents >= 1);
  const del = await s.fetch("alice", `/API/v1.0/queries/${id}`, { method: "DELETE" });
  await del.body?.cancel();
  assert.equal((await finished(s, id)).state, "CANCELLED");
});

function hasEta(st: unknown): boolean {
  const stats = (st as { stats?: { etaMillis?: number } }).stats;
  return typeof stats?.etaMillis === "number";
}
