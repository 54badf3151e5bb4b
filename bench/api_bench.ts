/**
 * API benchmarks (not CI): `deno run --allow-all bench/api_bench.ts`
 *
 * 1. A trivial synchronous query (VALUES of one row) under load from a second process (`wrk`
 *    when installed — `apt-get install wrk` — else a Deno fetch loop in a subprocess), against a
 *    bare Deno.serve hello-world on the same machine. Target: at least 0.5x its throughput.
 * 2. Async round trip POST -> poll -> result, p50 (target < 5 ms).
 * 3. A 2-million-row result fetched as JSON and as CSV: rows/s (target >= 700 000/s) and the
 *    peak RSS of this process, which holds the server (target < 300 MB).
 */

import { startTestServer } from "../tests/api/server.ts";

const DENO = Deno.execPath();
const SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? "5");

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function hasWrk(): Promise<boolean> {
  try {
    return (await new Deno.Command("wrk", { args: ["--version"] }).output()).code >= 0;
  } catch {
    return false;
  }
}

/** Load from a second process; returns requests/s and latency percentiles in ms. */
async function load(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
): Promise<{ rps: number; p50: number; p99: number; tool: string }> {
  const script = `
    const [url, init, seconds] = JSON.parse(Deno.args[0]);
    const lat = []; let n = 0; const end = performance.now() + seconds * 1000;
    async function worker() {
      while (performance.now() < end) {
        const t = performance.now();
        const r = await fetch(url, init); await r.arrayBuffer();
        if (r.status !== 200) throw new Error("status " + r.status);
        lat.push(performance.now() - t); n++;
      }
    }
    await Promise.all(Array.from({ length: 32 }, worker));
    lat.sort((a, b) => a - b);
    console.log(JSON.stringify({ rps: n / seconds, p50: lat[Math.floor(lat.length / 2)],
      p99: lat[Math.floor(lat.length * 0.99)] }));`;
  const out = await new Deno.Command(DENO, {
    args: ["eval", script, JSON.stringify([url, init, SECONDS])],
    stdout: "piped",
  }).output();
  return { ...JSON.parse(new TextDecoder().decode(out.stdout)), tool: "deno fetch loop" };
}

async function benchSync(): Promise<void> {
  const hello = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("hello"),
  );
  const bare = await load(`http://127.0.0.1:${hello.addr.port}/`, { method: "GET", headers: {} });
  await hello.shutdown();
  await using s = await startTestServer({ "query.maxQueued": "10000" });
  const trawl = await load(`${s.url}/API/v1.0/?scriptPath=/user`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${s.tokens.alice}`,
      "Content-Type": "text/vnd.engine.script",
    },
    body: "VALUES((a: 1))",
  });
  console.log(`1. sync VALUES (load: ${trawl.tool}${(await hasWrk()) ? "; wrk found" : ""})`);
  console.log(
    `   bare Deno.serve: ${bare.rps.toFixed(0)} req/s p50 ${bare.p50.toFixed(2)} ms p99 ${
      bare.p99.toFixed(2)
    } ms`,
  );
  console.log(
    `   trawl sync:      ${trawl.rps.toFixed(0)} req/s p50 ${trawl.p50.toFixed(2)} ms p99 ${
      trawl.p99.toFixed(2)
    } ms`,
  );
  console.log(`   ratio ${(trawl.rps / bare.rps).toFixed(2)} (target >= 0.5)`);
}

async function benchAsync(): Promise<void> {
  await using s = await startTestServer();
  const auth = { Authorization: `Bearer ${s.tokens.alice}` };
  const times: number[] = [];
  for (let i = 0; i < 300; i++) {
    const t = performance.now();
    const post = await fetch(`${s.url}/API/v1.0/queries?scriptPath=/user`, {
      method: "POST",
      headers: { ...auth, "Content-Type": "text/vnd.engine.script" },
      body: "VALUES((a: 1))",
    });
    const { queryId } = await post.json();
    for (;;) {
      const st = await (await fetch(`${s.url}/API/v1.0/queries/${queryId}`, { headers: auth }))
        .json();
      if (st.state === "SUCCEEDED") break;
    }
    await (await fetch(`${s.url}/API/v1.0/queries/${queryId}/result`, { headers: auth })).text();
    times.push(performance.now() - t);
    await fetch(`${s.url}/API/v1.0/queries/${queryId}`, { method: "DELETE", headers: auth });
  }
  times.sort((a, b) => a - b);
  console.log(
    `2. async round trip: p50 ${percentile(times, 0.5).toFixed(2)} ms, p99 ${
      percentile(times, 0.99).toFixed(2)
    } ms (target p50 < 5 ms)`,
  );
}

async function benchLarge(): Promise<void> {
  await using s = await startTestServer();
  const rows = 2_000_000;
  const parts: string[] = [];
  for (let i = 0; i < rows; i++) parts.push(`${i} host-${i % 97} GET /p/${i % 1000}\n`);
  await s.write("/shared/rows.log", parts.join(""));
  parts.length = 0;
  let peak = 0;
  const sampler = setInterval(() => peak = Math.max(peak, Deno.memoryUsage().rss), 20);
  const auth = { Authorization: `Bearer ${s.tokens.alice}` };
  const post = await fetch(`${s.url}/API/v1.0/queries?scriptPath=/user`, {
    method: "POST",
    headers: { ...auth, "Content-Type": "text/vnd.engine.script" },
    body: "PARSE(pattern: '''INT:n ' ' NSPACE:host ' ' WORD:method ' ' NSPACE:path EOL''', " +
      "src: '/shared/rows.log')",
  });
  const { queryId } = await post.json();
  const t0 = performance.now();
  for (;;) {
    const st = await (await fetch(`${s.url}/API/v1.0/queries/${queryId}`, { headers: auth }))
      .json();
    if (st.state !== "QUEUED" && st.state !== "RUNNING" && st.state !== "SCHEDULED") break;
    await new Promise((r) => setTimeout(r, 20));
  }
  console.log(`3. 2M rows: query ran in ${(performance.now() - t0).toFixed(0)} ms`);
  for (const type of ["application/json", "application/csv"]) {
    const t = performance.now();
    const res = await fetch(`${s.url}/API/v1.0/queries/${queryId}/result`, {
      headers: { ...auth, Accept: type },
    });
    let bytes = 0;
    for await (const chunk of res.body!) bytes += chunk.length;
    const secs = (performance.now() - t) / 1000;
    console.log(
      `   ${type}: ${(rows / secs).toFixed(0)} rows/s, ${
        (bytes / 1e6).toFixed(0)
      } MB (target >= 700000 rows/s)`,
    );
  }
  clearInterval(sampler);
  console.log(`   peak RSS ${(peak / 1e6).toFixed(0)} MB (target < 300 MB; includes the client)`);
}

if (import.meta.main) {
  await benchSync();
  await benchAsync();
  await benchLarge();
}
