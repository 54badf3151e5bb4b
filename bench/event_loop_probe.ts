// deno-lint-ignore-file no-console
/**
 * Which queries hold the server's event loop (issue 10's guarantee): a real server on loopback
 * (tests/api/server.ts, in this process, `query.workers=1` unless `--workers`), one query of each
 * kind over a few hundred thousand to a million rows, and meanwhile another user's `/healthz`
 * (and a small synchronous query) sent one after another, plus a 5 ms timer that records the
 * longest stretch the loop went without turning. Each attack runs until it ends or for at most
 * `--seconds`, then is cancelled with DELETE (the time to CANCELLED is measured). By hand:
 *
 *   deno run -A --unstable-kv bench/event_loop_probe.ts [--rows 1000000] [--only sort,join]
 */

import { parseArgs } from "node:util";
import { startTestServer, type TestServer } from "../tests/api/server.ts";
import { sleep } from "../engine/util/sleep.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rows: { type: "string" },
    only: { type: "string" },
    workers: { type: "string" },
    seconds: { type: "string" },
    gaps: { type: "boolean" },
  },
});
const ROWS = Number(values.rows ?? 1_000_000);
const SECONDS = Number(values.seconds ?? 6);
const ONLY = values.only?.split(",");

const SCRIPT = { "Content-Type": "text/vnd.engine.script" };
const P = `PARSE(pattern: '''INT:i ' ' NSPACE:w ' ' INT:st EOL''', src: '/shared/rows.log')`;
const VALUES_1000 = `VALUES(${
  Array.from({ length: 1000 }, (_, i) => `(k: 1, i: ${i})`).join(", ")
})`;

const ATTACKS: Record<string, string> = {
  plain: P,
  sort: `${P} | sort(w)`,
  sortDesc: `${P} | sort(st desc, i desc)`,
  topBig: `${P} | sort(w) | limit(${Math.floor(ROWS / 2)})`,
  join: `@a = ${P}; @a | join(@a on left.st = right.st) | select(i) | filter(i < 0)`,
  joinValues:
    `@a = ${VALUES_1000}; @a | join(@a on left.k = right.k) | select(k, i) | join(@a on left.k = right.k) | select(k, i)`,
  joinBuild: `@a = ${P}; @a | join(@a on left.i = right.i) | filter(i < 0)`,
  group: `${P} | select(i, count(*) as n) | group(i)`,
  groupMany: `${P} | select(w, count(*) as n, min(i) as m) | group(w)`,
  distinct: `${P} | select(count_distinct(w) as d)`,
  union: `@a = ${P}; @a | union(@a) | filter(i < 0)`,
  unnest: `${P} | select(array_agg(i) as a) | unnest(a) | filter(a < 0)`,
  arrayAgg: `${P} | select(array_agg(w) as a)`,
  regex: `${P} | filter(w ~ '^(a+)+$')`,
  syncBig: `SYNC ${P}`,
  bigScript: `SCRIPT`,
  jsonLine: `READ_JSON(src: '/shared/big.json') | select(n)`,
  jsonLineRead: `READ_JSON(src: '/shared/big.json') | select(n, a) | filter(n > 5)`,
};

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0
    ? NaN
    : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function writeData(s: TestServer): Promise<void> {
  const parts: string[] = [];
  let seed = 12345;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  for (let i = 0; i < ROWS; i++) {
    parts.push(`${i} w${rand().toString(36)} ${200 + (i % 5)}\n`);
  }
  await s.write("/shared/rows.log", parts.join(""));
  // One JSON line of ~60 MB, and a small one after it.
  const big = JSON.stringify({ n: 1, a: Array.from({ length: 3_000_000 }, (_, i) => `x${i}`) });
  await s.write("/shared/big.json", `${big}\n{"n": 2}\n`);
}

function bigScript(): string {
  // ~1 MiB of script: a VALUES of many rows.
  const rows: string[] = [];
  let n = 0;
  for (let i = 0; n < 1_000_000; i++) {
    const r = `(a: ${i}, b: 'x${i}')`;
    rows.push(r);
    n += r.length + 2;
  }
  return `VALUES(${rows.slice(0, rows.length - 10).join(", ")}) | filter(a < 0)`;
}

async function probe(s: TestServer, name: string, script: string) {
  let gap = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    if (values.gaps && now - last > 50) {
      console.log(`  gap ${(now - last).toFixed(0)} ms ending at ${now.toFixed(0)}`);
    }
    last = now;
  }, 5);
  const health: number[] = [];
  const syncTimes: number[] = [];
  let state = "?";
  let cancelMs = NaN;
  const started = performance.now();
  let done = false;
  let running: Promise<unknown>;
  let id: string | null = null;
  if (script.startsWith("SYNC ")) {
    running = (async () => {
      const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
        method: "POST",
        headers: SCRIPT,
        body: script.slice(5),
      });
      // Read slowly: 64 KiB every 20 ms.
      const reader = res.body!.getReader();
      let bytes = 0;
      while (performance.now() - started < SECONDS * 1000) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.length;
        await sleep(2);
      }
      await reader.cancel();
      state = `sync ${res.status} read ${(bytes / 1e6).toFixed(1)} MB`;
    })().finally(() => done = true);
  } else {
    const res = await s.fetch("alice", "/API/v1.0/queries?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT,
      body: script === "SCRIPT" ? bigScript() : script,
    });
    const body = await res.json();
    if (res.status !== 201) {
      console.log(name, "refused", res.status, JSON.stringify(body).slice(0, 200));
      clearInterval(timer);
      return;
    }
    id = body.queryId;
    running = (async () => {
      for (;;) {
        const st = await (await s.fetch("alice", `/API/v1.0/queries/${id}`)).json();
        state = st.state;
        if (["SUCCEEDED", "FAILED", "CANCELLED"].includes(st.state)) {
          if (st.state === "FAILED") state += ` ${JSON.stringify(st.error ?? st).slice(0, 160)}`;
          return;
        }
        if (performance.now() - started > SECONDS * 1000) {
          const sent = performance.now();
          const del = await s.fetch("alice", `/API/v1.0/queries/${id}`, { method: "DELETE" });
          await del.body?.cancel();
          for (;;) {
            const st2 = await (await s.fetch("alice", `/API/v1.0/queries/${id}`)).json();
            if (["SUCCEEDED", "FAILED", "CANCELLED"].includes(st2.state)) {
              state = st2.state;
              break;
            }
            await sleep(5);
          }
          cancelMs = performance.now() - sent;
          return;
        }
        await sleep(50);
      }
    })().finally(() => done = true);
  }
  const others = (async () => {
    let k = 0;
    while (!done) {
      const t0 = performance.now();
      if (k++ % 2 === 0) {
        const r = await fetch(`${s.url}/healthz`);
        await r.body?.cancel();
        if (!done) health.push(performance.now() - t0);
      } else {
        const r = await s.fetch("bob", "/API/v1.0/?scriptPath=/user", {
          method: "POST",
          headers: SCRIPT,
          body: "VALUES((a: 1))",
        });
        await r.body?.cancel();
        if (!done) syncTimes.push(performance.now() - t0);
      }
      await sleep(10);
    }
  })();
  await running!;
  await others;
  clearInterval(timer);
  gap = Math.max(gap, performance.now() - last);
  const ms = performance.now() - started;
  health.sort((a, b) => a - b);
  syncTimes.sort((a, b) => a - b);
  const f = (x: number) => x.toFixed(0).padStart(5);
  console.log(
    `${name.padEnd(10)} ${f(ms)} ms ${state.slice(0, 40).padEnd(40)} loop gap ${
      f(gap)
    } | healthz n=${String(health.length).padStart(4)} p50 ${f(percentile(health, 0.5))} p99 ${
      f(percentile(health, 0.99))
    } max ${f(health.at(-1) ?? NaN)} | sync n=${String(syncTimes.length).padStart(4)} p99 ${
      f(percentile(syncTimes, 0.99))
    } max ${f(syncTimes.at(-1) ?? NaN)} | cancel ${f(cancelMs)} ms`,
  );
}

await using s = await startTestServer({
  "query.workers": values.workers ?? "1",
  "query.retention": "5 s",
  "query.memoryLimit": "4 GiB",
});
await writeData(s);
console.log(`rows ${ROWS}, workers ${values.workers ?? 1}; load ${Deno.loadavg().join(" ")}`);
for (const [name, script] of Object.entries(ATTACKS)) {
  if (ONLY && !ONLY.includes(name)) continue;
  await probe(s, name, script);
}
