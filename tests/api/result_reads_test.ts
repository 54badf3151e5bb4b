/**
 * A result is never cut short without a sign: a read in progress keeps it past its retention,
 * and a result freed while it is read ends its body broken (the connection is reset), never as
 * a shorter document that looks whole.
 */

import assert from "node:assert/strict";
import { SimulatedClock } from "xstate";
import { startTestServer } from "./server.ts";
import { finished, startQuery, writeBigLog } from "./client.ts";
import { sleep } from "../../engine/util/sleep.ts";

const ROWS = 200_000;
const SCRIPT = "PARSE(pattern: '''INT:n LD:x EOL''', src: '/shared/big.log')";

/**
 * Reads the first chunk of a body, lets `pause` pass (the server's read waits meanwhile: the rest
 * does not fit in the socket's buffers), then the rest; returns the whole text.
 */
async function readSlowly(body: ReadableStream<Uint8Array>, pause: () => void): Promise<string> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let text = (await reader.read()).value ?? "";
  pause();
  for (let next = await reader.read(); !next.done; next = await reader.read()) text += next.value;
  return text;
}

Deno.test("a result read more slowly than its retention is delivered whole", async () => {
  // The retention runs on a simulated clock: 3.5 s of it pass while a read waits.
  const clock = new SimulatedClock();
  const longerThanRetention = () => clock.increment(3500);
  await using s = await startTestServer({
    "query.retention": "2 s",
    "query.resultMemoryBytes": "1 MiB",
  }, { clock });
  await writeBigLog(s, ROWS);
  const id = await startQuery(s, SCRIPT);
  assert.equal((await finished(s, id)).state, "SUCCEEDED");
  // Uncompressed: a compressed body is small enough to sit whole in the socket's buffers, so the
  // server's read would end long before the client's.
  const identity = { "Accept-Encoding": "identity" };
  const whole = await s.fetch("alice", `/API/v1.0/queries/${id}/result`, { headers: identity });
  assert.equal(whole.status, 200);
  const rows = JSON.parse(await readSlowly(whole.body!, longerThanRetention));
  assert.equal(rows.length, ROWS);
  assert.equal(rows.at(-1).n, ROWS - 1);
  // A ranged read too: what the Content-Range claims is what comes.
  const part = await s.fetch("alice", `/API/v1.0/queries/${id}/result`, {
    headers: { ...identity, Range: `items=1000-${ROWS - 2}` },
  });
  assert.equal(part.status, 206);
  assert.equal(part.headers.get("Content-Range"), `items 1000-${ROWS - 2}/${ROWS}`);
  const partRows = JSON.parse(await readSlowly(part.body!, longerThanRetention));
  assert.equal(partRows.length, ROWS - 1001);
  // Once nobody reads it, the retention runs out as before (watched without a request, which
  // would restart it).
  const held = () => s.deps.supervisor!.getSnapshot().context.queries.has(id);
  // (The server's read ends a moment after the client's: until it has, the result is kept.)
  for (const until = Date.now() + 10_000; held() && Date.now() < until;) {
    clock.increment(2000);
    await sleep(10);
  }
  const gone = await s.fetch("alice", `/API/v1.0/queries/${id}`);
  assert.equal(gone.status, 410);
  await gone.body?.cancel();
});

Deno.test("a result freed while it is read ends its body broken, not shorter", async () => {
  const lines: string[] = [];
  await using s = await startTestServer({ "query.resultMemoryBytes": "1 MiB" }, {
    logLine: (line) => lines.push(line),
  });
  await writeBigLog(s, ROWS);
  const id = await startQuery(s, SCRIPT);
  assert.equal((await finished(s, id)).state, "SUCCEEDED");
  // Uncompressed, as above: compressed, the whole body can leave the server before the DELETE.
  const res = await s.fetch("alice", `/API/v1.0/queries/${id}/result`, {
    headers: { "Accept-Encoding": "identity" },
  });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  await reader.read();
  const freed = await s.fetch("alice", `/API/v1.0/queries/${id}`, { method: "DELETE" });
  assert.equal(freed.status, 204);
  await assert.rejects(async () => {
    while (!(await reader.read()).done) { /* the rest, until it breaks */ }
  });
  const health = await fetch(`${s.url}/healthz`);
  assert.equal(health.status, 200);
  await health.body?.cancel();
  assert.ok(
    lines.some((l) => / WARN a response ended broken: the result of query .* was freed/.test(l)),
    lines.join("\n"),
  );
});
