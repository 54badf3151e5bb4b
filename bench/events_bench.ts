// deno-lint-ignore-file no-console
/**
 * Events stream latency (issue 13's benchmark): how long after a query's state changes its
 * `GET /queries/<id>/events` client hears of it. A real server on loopback (tests/api/server.ts);
 * for each of N queries the stream is opened at once after the POST, and for every `state` event
 * the client's receive time minus the event's `millis` (the server's time of the change, on the
 * same machine's clock) is one sample. By hand, never in CI:
 *
 *   deno run -A --unstable-kv bench/events_bench.ts [--queries 200]
 */

import { parseArgs } from "node:util";
import { startTestServer } from "../tests/api/server.ts";
import { writeBigLog } from "../tests/api/client.ts";

const { values } = parseArgs({ args: Deno.args, options: { queries: { type: "string" } } });
const QUERIES = Math.min(1000, Number(values.queries ?? 200));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

await using s = await startTestServer({ "query.retention": "30 s" });
// A query that runs ~100 ms, so that its stream is open before it finishes.
await writeBigLog(s, 200_000);
const auth = { Authorization: `Bearer ${s.tokens.alice}` };
const stateLatency: number[] = [];
const toSucceeded: number[] = [];
const deadline = Date.now() + 120_000;
for (let i = 0; i < QUERIES && Date.now() < deadline; i++) {
  const posted = performance.timeOrigin + performance.now();
  const res = await fetch(`${s.url}/API/v1.0/queries?scriptPath=/user`, {
    method: "POST",
    headers: { ...auth, "Content-Type": "text/plain" },
    body: `PARSE(pattern: '''INT:n LD EOL''', src: '/shared/big.log') | filter(n = ${i})`,
  });
  const { queryId } = await res.json();
  const events = await fetch(`${s.url}/API/v1.0/queries/${queryId}/events`, { headers: auth });
  // Changes before the stream opened come in its first `status` event, not as live events.
  const opened = performance.timeOrigin + performance.now();
  const reader = events.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let done = false;
  while (!done) {
    const chunk = await reader.read();
    if (chunk.done) break;
    const now = performance.timeOrigin + performance.now();
    buffer += chunk.value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event === "status" && data && /"state":"SUCCEEDED"/.test(data)) done = true;
      if (event !== "state" || !data) continue;
      const change = JSON.parse(data) as { to: string; millis: number };
      if (change.millis >= opened - 5) stateLatency.push(now - change.millis);
      if (change.to === "SUCCEEDED") {
        toSucceeded.push(now - posted);
        done = true;
      }
    }
  }
  await reader.cancel().catch(() => {});
}
stateLatency.sort((a, b) => a - b);
toSucceeded.sort((a, b) => a - b);
const fmt = (n: number) => n.toFixed(2).padStart(8);
console.log(`load: ${Deno.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log(`queries: ${toSucceeded.length}, state events: ${stateLatency.length}`);
console.log("| measure                              |   p50 ms |   p99 ms |");
console.log("| ------------------------------------ | -------- | -------- |");
console.log(
  `| state change → event at the client   | ${fmt(percentile(stateLatency, 0.5))} | ${
    fmt(percentile(stateLatency, 0.99))
  } |`,
);
console.log(
  `| POST → SUCCEEDED event at the client  | ${fmt(percentile(toSucceeded, 0.5))} | ${
    fmt(percentile(toSucceeded, 0.99))
  } |`,
);
console.log("(no target is set for these; issue 13 asks for the figures)");
