/**
 * Wide results rendered by the scan workers (engine/render/rendered.ts) and stored as bytes
 * (ResultStore.appendRendered): through the API, every text format gives the same body on two
 * workers as on one thread, whole or by item ranges, kept in memory or spilled to disk, and cut
 * into many lanes (`query.laneBytes`).
 */

import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "./server.ts";
import { finished, startQuery } from "./client.ts";

const PATTERN = `IPADDR:ip ' ' INT:status ' ' LONG:bytes? ' [' HTTPDATE:time '] ' NSPACE:path ` +
  `' ' DQS:agent`;
const SCRIPT = `PARSE(pattern: '''${PATTERN}''', src: '/shared/wide.log')
| select(time, ip, status, bytes, path, agent)`;
const LINES = 90_000;

/** About 12 MB of log (past the 8 MB a share must have), nulls and non-ASCII text in it. */
function log(): string {
  const out: string[] = [];
  for (let i = 0; i < LINES; i++) {
    const bytes = i % 13 === 0 ? "-" : String(i * 7919);
    const path = i % 5 === 0 ? `/zürich/${i}?q=東京😀` : `/p/${i}/index.html`;
    out.push(
      `10.${i % 3}.${i % 256}.${i % 200} ${200 + (i % 4)} ${bytes} ` +
        `[01/May/2024:13:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${
          String(i % 60).padStart(2, "0")
        } +0200] ${path} "agent \\"${i}\\" \\\\ Mozilla/5.0 (X11; Linux x86_64)"\n`,
    );
  }
  return out.join("");
}

const MEDIA_TYPES = [
  "application/json",
  "application/json-seq",
  "application/x-ndjson",
  "application/csv",
  "text/tab-separated-values",
];
const identity = { "Accept-Encoding": "identity" };

async function bodies(s: TestServer): Promise<string[]> {
  const out: string[] = [];
  for (const accept of MEDIA_TYPES) {
    const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user&opt.timezone=Asia/Kolkata", {
      method: "POST",
      headers: { "Content-Type": "text/plain", Accept: accept, ...identity },
      body: SCRIPT,
    });
    assert.equal(res.status, 200, accept);
    out.push(await res.text());
  }
  // An asynchronous query with its format fixed at POST, read whole and by ranges.
  const id = await startQuery(s, SCRIPT, { headers: { Accept: "application/x-ndjson" } });
  assert.equal((await finished(s, id)).state, "SUCCEEDED");
  for (const range of [undefined, "items=0-0", "items=1000-1001", `items=1500-${LINES - 7}`]) {
    const res = await s.fetch("alice", `/API/v1.0/queries/${id}/result`, {
      headers: { ...identity, ...(range ? { Range: range } : {}) },
    });
    assert.equal(res.status, range ? 206 : 200);
    out.push(`${res.headers.get("Content-Range")}\n${await res.text()}`);
  }
  // The schema too: `bytes` held nulls, which the workers tell.
  const schema = await s.fetch("alice", `/API/v1.0/queries/${id}/result/schema`);
  out.push(await schema.text());
  return out;
}

Deno.test("a wide result rendered by two workers is one thread's, in every text format", async () => {
  const text = log();
  const results: string[][] = [];
  const runs: Record<string, string>[] = [];
  for (const workers of ["1", "2"]) {
    for (const memory of ["64 MiB", "256 KiB"]) {
      runs.push({ "query.workers": workers, "query.resultMemoryBytes": memory });
    }
  }
  // Cut into a dozen lanes, two at a time: the answers follow lane after lane as each ends.
  runs.push({
    "query.workers": "2",
    "query.resultMemoryBytes": "256 KiB",
    "query.laneBytes": "1 MiB",
  });
  for (const settings of runs) {
    await using s = await startTestServer(settings);
    await s.write("/shared/wide.log", text);
    results.push(await bodies(s));
  }
  const [one] = results;
  // Sanity: every row is there, nulls and non-ASCII text included.
  const ndjson = one![2]!.trimEnd().split("\n");
  assert.equal(ndjson.length, LINES);
  assert.equal(JSON.parse(ndjson[0]!).bytes, null);
  assert.equal(JSON.parse(ndjson[5]!).path, "/zürich/5?q=東京😀");
  assert.equal(JSON.parse(one![0]!).length, LINES);
  assert.ok(one!.at(-1)!.includes(`"bytes":"?LONG"`), one!.at(-1));
  assert.ok(one![3]!.startsWith('"time";"ip";"status";"bytes";"path";"agent"\n'));
  for (const [k, other] of results.entries()) {
    other.forEach((body, i) =>
      assert.ok(
        body === one![i],
        `run ${k}, body ${i} differs (${body.length} vs ${one![i]!.length})`,
      )
    );
  }
});
