/**
 * A long query never holds the event loop: while it scans a big input through a filter that
 * passes no row (so no batch ever reaches the consumer), timers and a local HTTP server keep
 * being served. The input is streamed from memory, as a connector whose data arrives in large
 * buffered chunks gives it: no file read hands the event loop a turn between chunks.
 */

import assert from "node:assert/strict";
import type { FileEntry } from "../engine/contracts/datastore.ts";
import { compilePattern } from "../engine/pattern/compile_pattern.ts";
import { watchLoopGaps } from "./support/loop_gaps.ts";
import { parseSource } from "../engine/exec/parse_source.ts";
import { filterRows } from "../engine/exec/filter.ts";
import { MemoryBudget, ProgressMeter } from "../engine/plan/context.ts";

const LINE = '10.0.0.5 - ann [01/May/2024:10:00:01 +0000] "GET /index.html HTTP/1.1" 200 5120\n';
const PATTERN =
  `IPV4:client ' - ' NSPACE:user ' [' HTTPDATE:time '] "' LD '" ' INT:status ' ' INT:bytes EOL`;

/** A file of `chunks` MiB-sized chunks of log lines, served from memory. */
function memoryFile(chunks: number): FileEntry {
  const chunk = new TextEncoder().encode(LINE.repeat(Math.floor((1 << 20) / LINE.length)));
  return {
    uri: "memory://big.log",
    size: chunk.length * chunks,
    modified: 0,
    pathTime: null,
    open: () => {
      let left = chunks;
      return Promise.resolve(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            if (left-- > 0) controller.enqueue(chunk);
            else controller.close();
          },
        }),
      );
    },
  };
}

Deno.test("a scan whose filter drops every row still lets timers and requests run", async () => {
  const compiled = compilePattern(PATTERN, { timeZone: "UTC" });
  assert.ok(compiled.ok);
  const ctx = {
    signal: new AbortController().signal,
    timeZone: "UTC",
    now: 0,
    warn: () => {},
    progress: new ProgressMeter(),
    memory: new MemoryBudget(1 << 30),
  };
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("pong"),
  );
  const gaps = watchLoopGaps(10);
  const answered: number[] = [];
  let rows = 0;
  const started = performance.now();
  try {
    const query = (async () => {
      const parsed = parseSource([memoryFile(320)], compiled.pattern, ["status"], ctx);
      const kept = filterRows(parsed, (row) => row.status === 999, { negated: false, ctx });
      for await (const batch of kept) rows += batch.length;
    })();
    let done = false;
    query.finally(() => done = true).catch(() => {});
    // Requests sent while the query runs are answered while it runs.
    while (!done) {
      const sent = performance.now();
      const res = await fetch(`http://127.0.0.1:${server.addr.port}/`);
      assert.equal(await res.text(), "pong");
      if (!done) answered.push(performance.now() - sent);
    }
    await query;
  } finally {
    gaps.stop();
  }
  const ms = performance.now() - started;
  const gap = gaps.longestCpu;
  assert.equal(rows, 0);
  // Without yielding, the timer waits for the whole scan; with it, ~100 ms. The bound is
  // relative to the scan so that a loaded CI machine (slower scan, later timers) does not flake.
  const bound = Math.max(250, ms / 3);
  assert.ok(
    gap < bound,
    `the loop was held ${gap.toFixed(0)} ms of CPU (scan ${ms.toFixed(0)} ms)`,
  );
  assert.ok(ms > 300, `the scan took long enough to matter (${ms.toFixed(0)} ms)`);
  assert.ok(answered.length >= 2, `requests answered during the scan: ${answered.length}`);
  // A request takes several turns of the loop (accept, read, write, read the answer).
  const slowest = Math.max(...answered);
  assert.ok(slowest < Math.max(400, ms / 2), `slowest answer ${slowest.toFixed(0)} ms`);
});
