// deno-lint-ignore-file no-console
/**
 * The column cache of issue 24, by hand (never in CI): for the tasks of the engine bench
 * (access, json, nested; `wide` on request) and one question over one hour of a week of logs
 * (`hour`), Trawl as a real server (bench/engine_bench.ts starts it) timed from outside:
 *
 * - no cache: `cache.enabled=false`, the file read as before;
 * - first read: the cache emptied before each run, so the read also writes it (a second server,
 *   up at the same time: each first read follows a read without the cache, in turn);
 * - repeated read: the same query again, its columns in the cache;
 *
 * beside DuckDB over the raw file and over its own native table (`CREATE TABLE ... AS`, made
 * before the timing), with as many threads as Trawl has workers; and the cache's size for the
 * columns used against the raw bytes they came from. The targets are printed beside
 * the figures, with the load average. The median of `--runs` (default 3) counts; beside each time,
 * the server's CPU for the query (all its threads), steadier on a loaded machine.
 *
 *   deno run -A bench/gen_data.ts --mb 100      # access.log, events.jsonl, signins.jsonl
 *   (cd bench/node && npm install)
 *   deno run -A bench/cache_bench.ts [--runs 3] [--tasks access,json,nested,hour,wide]
 *     [--workers 2] [--week-mb 100] [--no-peers]
 */

import { join } from "node:path";
import { ACCESS_LOG, DATA_DIR, EVENTS_JSONL, SIGNINS_JSONL } from "./gen_data.ts";
import {
  ACCESS_PATTERN,
  cpuOf,
  loadAverage,
  makeHome,
  median,
  node,
  type Run,
  startServer,
  TASKS,
  trawlQuery,
} from "./engine_bench.ts";

const WEEK_LOG = join(DATA_DIR, "week.log");
const HOUR_FROM = "2024-05-04 13:00:00";
const HOUR_TO = "2024-05-04 14:00:00";

export type CacheName = "access" | "json" | "nested" | "wide" | "hour";

interface CacheTask {
  readonly title: string;
  readonly file: string;
  readonly script: string;
  /** The task's name for bench/node/duckdb_cache_peer.mjs (null: none there). */
  readonly peer: string | null;
}

export const CACHE_TASKS: Record<CacheName, CacheTask> = {
  access: { ...TASKS.access, peer: "access" },
  json: { ...TASKS.json, peer: "json" },
  nested: { ...TASKS.nested, peer: "nested" },
  wide: { ...TASKS.wide, peer: null },
  hour: {
    title: `one hour of a week of access logs: requests by status (${HOUR_FROM} to ${HOUR_TO})`,
    file: WEEK_LOG,
    script: `PARSE(pattern: '''${ACCESS_PATTERN}''', src: 'file://bench/week.log')
| filter(time >= T('${HOUR_FROM}') and time < T('${HOUR_TO}'))
| select(status, count(*) as n) | group(status) | sort(status)`,
    peer: "hour",
  },
};

function option(name: string): string | undefined {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}

/** A week of access-log lines (about `mb` MB), their times spread evenly over it, in order. */
async function weekLog(mb: number): Promise<void> {
  try {
    const info = await Deno.stat(WEEK_LOG);
    if (Math.abs(info.size - mb * 1e6) < mb * 1e4) return;
  } catch { /* made below */ }
  // The lines of the access log, retimed: one week from 2024-05-01 on.
  const source = await Deno.readTextFile(ACCESS_LOG);
  const lines = source.split("\n").filter((l) => l.length > 0);
  const n = Math.floor((mb * 1e6) / (source.length / lines.length));
  const step = (7 * 86_400_000) / n;
  const months = [
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "May",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
  ];
  const pad = (x: number) => (x < 10 ? "0" + x : String(x));
  const out = await Deno.open(WEEK_LOG, { write: true, create: true, truncate: true });
  const encoder = new TextEncoder();
  try {
    let text = "";
    for (let i = 0; i < n; i++) {
      const d = new Date(Date.UTC(2024, 4, 1) + Math.floor(i * step));
      const time = `${pad(d.getUTCDate())}/${months[d.getUTCMonth()]}/${d.getUTCFullYear()}:${
        pad(d.getUTCHours())
      }:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`;
      text += lines[i % lines.length]!.replace(/\[[^\]]*\]/, `[${time}]`) + "\n";
      if (text.length > 1 << 20) {
        await out.write(encoder.encode(text));
        text = "";
      }
    }
    await out.write(encoder.encode(text));
  } finally {
    out.close();
  }
}

async function duSize(dir: string): Promise<number> {
  let total = 0;
  try {
    for await (const e of Deno.readDir(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) total += await duSize(p);
      else if (e.isFile) total += (await Deno.stat(p)).size;
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return total;
}

function fmt(ms: number): string {
  return ms.toFixed(0).padStart(8);
}

async function main(): Promise<void> {
  const runs = Number(option("runs") ?? 3);
  const names = (option("tasks") ?? "access,json,nested,hour").split(",") as CacheName[];
  const workers = Number(option("workers") ?? (navigator.hardwareConcurrency || 1));
  const noPeers = Deno.args.includes("--no-peers");
  for (const f of [ACCESS_LOG, EVENTS_JSONL, SIGNINS_JSONL]) await Deno.stat(f);
  if (names.includes("hour")) await weekLog(Number(option("week-mb") ?? 100));
  const { home, token: cacheToken } = await makeHome();
  // The server without the cache has a home of its own (two servers share no home).
  const plainHome = await makeHome();
  const cacheDir = join(home, "engine_data", "cache");
  const verdicts: string[] = [];
  console.log(
    `# Column cache bench (issue 24): Trawl workers ${workers}, DuckDB threads ${workers}; median of ${runs}; load ${loadAverage()}`,
  );
  try {
    for (const name of names) {
      const task = CACHE_TASKS[name];
      const bytes = (await Deno.stat(task.file)).size;
      const loadBefore = loadAverage();
      const query = async (
        server: Awaited<ReturnType<typeof startServer>>,
        token = cacheToken,
      ): Promise<Run> => {
        // trawlQuery knows the engine bench's tasks; the hour's script is posted alike.
        if (name !== "hour") return await trawlQuery(server, token, name);
        const cpu0 = cpuOf(server.pid);
        const started = performance.now();
        const res = await fetch(`${server.url}/API/v1.0/?scriptPath=/user`, {
          method: "POST",
          headers: {
            Authorization: `Bearer ${token}`,
            "Content-Type": "text/vnd.engine.script",
            Accept: "application/json",
            "Accept-Encoding": "identity",
          },
          body: task.script,
        });
        const text = await res.text();
        const ms = performance.now() - started;
        if (!res.ok) throw new Error(`Trawl answered ${res.status}: ${text.slice(0, 500)}`);
        const rows = JSON.parse(text) as Record<string, unknown>[];
        return { ms, cpuMs: cpuOf(server.pid) - cpu0, result: rows.map((r) => Object.values(r)) };
      };
      // Two servers at once, one without the cache and one with it: a read without the cache
      // and a first read (the cache emptied before it) are taken in turn, so that the load of a
      // shared machine meets both alike.
      const plainServer = await startServer(plainHome.home, [
        `query.workers=${workers}`,
        "cache.enabled=false",
      ]);
      const plain: Run[] = [];
      const first: Run[] = [];
      const repeated: Run[] = [];
      let cacheBytes = 0;
      try {
        const server = await startServer(home, [`query.workers=${workers}`, "cache.enabled=true"]);
        try {
          // Both warmed, as servers that have run a while (the workers' compiled code): the
          // fill's twice, as its code meets two kinds of blocks.
          await query(plainServer, plainHome.token);
          for (let i = 0; i < 2; i++) {
            await Deno.remove(cacheDir, { recursive: true }).catch(() => {});
            await query(server);
          }
          for (let i = 0; i < runs; i++) {
            plain.push(await query(plainServer, plainHome.token));
            await Deno.remove(cacheDir, { recursive: true }).catch(() => {});
            first.push(await query(server));
          }
          cacheBytes = await duSize(cacheDir);
          for (let i = 0; i < runs; i++) repeated.push(await query(server));
        } finally {
          await server.stop();
        }
      } finally {
        await plainServer.stop();
      }
      const peers: { name: string; ms: number; loadMs?: number; result: unknown }[] = [];
      if (!noPeers && task.peer !== null) {
        for (const mode of ["raw", "native"]) {
          const all: (Run & { loadMs?: number })[] = [];
          for (let i = 0; i < runs; i++) {
            all.push(
              await node("duckdb_cache_peer.mjs", [
                mode,
                task.peer,
                task.file,
                String(workers),
                `${HOUR_FROM}+00`,
                `${HOUR_TO}+00`,
              ]) as Run & { loadMs?: number },
            );
          }
          peers.push({
            name: `DuckDB ${mode === "raw" ? "raw file" : "native table"}`,
            ms: median(all.map((r) => r.ms)),
            ...(mode === "native" ? { loadMs: median(all.map((r) => r.loadMs ?? 0)) } : {}),
            result: all[0]!.result,
          });
        }
      }
      const p = median(plain.map((r) => r.ms));
      const f = median(first.map((r) => r.ms));
      const r = median(repeated.map((x) => x.ms));
      console.log(`\n## ${name}: ${task.title} (${(bytes / 1e6).toFixed(0)} MB)`);
      console.log(`load average before ${loadBefore}, after ${loadAverage()}\n`);
      // The server's CPU (all its threads) per query: steadier than the time on a loaded
      // machine, where the time waits for cores as much as it works.
      const cpu = (all: readonly Run[]) => median(all.map((x) => x.cpuMs ?? NaN));
      console.log("| run                         | median ms | CPU ms (server) | runs (ms) |");
      console.log("|-----------------------------|-----------|-----------------|-----------|");
      const row = (label: string, ms: number, cpuMs: number, all: readonly number[] | string) =>
        console.log(
          `| ${label.padEnd(27)} | ${fmt(ms).padStart(9)} | ${
            (Number.isNaN(cpuMs) ? "" : cpuMs.toFixed(0)).padStart(15)
          } | ${typeof all === "string" ? all : all.map((m) => m.toFixed(0)).join(", ")} |`,
        );
      row("Trawl, no cache", p, cpu(plain), plain.map((x) => x.ms));
      row("Trawl, first read (fills)", f, cpu(first), first.map((x) => x.ms));
      row("Trawl, repeated read", r, cpu(repeated), repeated.map((x) => x.ms));
      for (const peer of peers) {
        row(
          peer.name,
          peer.ms,
          NaN,
          peer.loadMs !== undefined ? `table made in ${peer.loadMs.toFixed(0)} ms` : "",
        );
      }
      const agree = [first[0]!.result, repeated[0]!.result, ...peers.map((x) => x.result)]
        .every((x) => JSON.stringify(x) === JSON.stringify(plain[0]!.result));
      console.log(
        agree
          ? "\nresults agree"
          : `\nRESULTS DIFFER:\n${
            [plain[0]!.result, first[0]!.result, repeated[0]!.result, ...peers.map((x) => x.result)]
              .map((x) => JSON.stringify(x).slice(0, 300)).join("\n")
          }`,
      );
      const ratio = (a: number, b: number) => (a / b).toFixed(2);
      const raw = peers.find((x) => x.name === "DuckDB raw file");
      const native = peers.find((x) => x.name === "DuckDB native table");
      const size = cacheBytes / bytes;
      const overhead = f / p - 1;
      const verdict = (ok: boolean) => (ok ? "MET" : "MISSED");
      verdicts.push(
        `${name}: repeated ${ratio(f, r)}× faster than first read (target ≥ ${
          name === "hour" ? 20 : 5
        }) ${verdict(f / r >= (name === "hour" ? 20 : 5))}` +
          (raw
            ? `; ${ratio(raw.ms, r)}× DuckDB raw (target ≥ 2) ${verdict(raw.ms / r >= 2)}`
            : "") +
          (native ? `; ${ratio(native.ms, r)}× DuckDB native table (reported)` : "") +
          `; cache ${(cacheBytes / 1e6).toFixed(1)} MB = ${size.toFixed(2)}× raw (target ≤ 0.5) ${
            verdict(size <= 0.5)
          }; first read ${(overhead * 100).toFixed(0)}% over no cache (target ≤ 10%) ${
            verdict(overhead <= 0.1)
          } (server CPU: repeated ${
            ratio(cpu(first), cpu(repeated))
          }× less than first read; first read ${
            ((cpu(first) / cpu(plain) - 1) * 100).toFixed(0)
          }% over no cache)`,
      );
    }
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(plainHome.home, { recursive: true });
  }
  console.log(`\n## Targets (load ${loadAverage()})\n`);
  for (const v of verdicts) console.log(`- ${v}`);
}

if (import.meta.main) await main();
