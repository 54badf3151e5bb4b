// deno-lint-ignore-file no-console
/**
 * The engine benchmark of issues 9 and 23 (targets: issue 23's), side by side in one run (by hand,
 * never in CI):
 *
 * 1. access: combined access log, top 10 clients by bytes of status 200 (PARSE);
 * 2. json: flat JSON lines, count by status (READ_JSON);
 * 3. nested: JSON lines shaped like Entra ID sign-ins (Graph `signIn`), failures by
 *    `status.errorCode` and `location.countryOrRegion`;
 * 4. wide: every line of the access log as 5 columns (time, ip, status, bytes, path) returned as
 *    JSON (2.4 M rows on the 390 MB log).
 *
 * Trawl runs as a real server (`main.ts serve`, one started afresh per task and worker count, so
 * that its peak RSS, VmHWM from /proc, is that task's) and is timed from outside: a synchronous
 * query POSTed through the HTTP API until the last byte of its answer. The peers run in process
 * under Node (bench/node/; `npm install` there first), timed around the query only (process
 * start excluded): ClickHouse (chDB) and DuckDB, each with as many threads as Trawl has workers,
 * and with one thread. The wide task's peers write the same JSON to a file. The median of
 * `--runs` (default 3) counts.
 *
 *   deno run -A bench/gen_data.ts --mb 390
 *   deno run -A bench/engine_bench.ts [--runs 3] [--tasks access,json,nested,wide]
 *     [--workers 1,2] [--no-one-thread-peers] [--no-peers] [--profile DIR] [--server-set K=V]
 *     [--v8 FLAGS] [--warmup N] [--ref DIR] [--env K=V]
 *
 * `--warmup N` runs each system N times untimed first: a Trawl server's scan workers start with
 * V8's compiler cold (a worker's first query of the access task took 800 ms, its fourth 480),
 * which a server that has answered a few queries no longer is; the peers are native code, run
 * in a fresh process each time either way.
 *
 * The ratio column is the issue's: the peer's time over Trawl's (above 1: Trawl is faster).
 * The CPU column is the CPU time (user + system, all threads) the query took in its process
 * (Trawl: the server's, from /proc; peers: Node's process.cpuUsage()): on a busy machine, where
 * other processes take the cores, it tells the work done apart from the waiting.
 * Trawl's worker counts are passed as `--set query.workers=N`; a build without that setting
 * runs with its one scan thread and says so.
 *
 * `--ref DIR` also runs another build of Trawl (a checkout of the revision to compare with, say
 * `git archive REV | tar -x -C DIR`, its `bench/data` a link to this one's) as a server of its
 * own beside this one's, the two queried in turn, run after run (ref, this, ref, this...): on a
 * shared machine whose load swings from second to second, only pairs taken this close together
 * tell a change of 10-20% from the noise. It prints both medians and the median of the pairs'
 * ratios (ref / this: above 1, this build is faster), of the wall time and of the server's CPU.
 * `--env K=V` (repeatable) sets a variable for this build's server only (`TRAWL_SCANNER=wasm`
 * against a reference on its default path).
 */

import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";
import { ACCESS_LOG, DATA_DIR, EVENTS_JSONL, SIGNINS_JSONL } from "./gen_data.ts";
import { SETTING_KEYS } from "../home/settings.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..");
const DENO = Deno.execPath();
/** The `--v8-flags=` of the `start` task in the deno.json of the build at `root`. */
function startV8Flags(root: string): string | undefined {
  return /--v8-flags=(\S+)/.exec(
    JSON.parse(Deno.readTextFileSync(join(root, "deno.json"))).tasks.start,
  )?.[1];
}
const TOKEN_LINE = /^trawl_[A-Za-z0-9_-]{43}$/;

export const ACCESS_PATTERN =
  `IPADDR:client ' ' NSPACE:ident ' ' NSPACE:user ' [' HTTPDATE:time '] "' NSPACE:method ' ' ` +
  `NSPACE:path ' ' NSPACE:protocol '" ' INT:status ' ' LONG:bytes? ' ' DQS:referrer ' ' DQS:agent`;

export type TaskName = "access" | "json" | "nested" | "wide";

interface Task {
  readonly title: string;
  readonly file: string;
  readonly script: string;
  /** The peer the issue's target names, and the target ratio (peer time / Trawl time). */
  readonly target: { readonly peer: "ClickHouse" | "DuckDB"; readonly ratio: number };
}

export const TASKS: Record<TaskName, Task> = {
  access: {
    title: "access log: top 10 clients by bytes of status 200",
    file: ACCESS_LOG,
    script: `PARSE(pattern: '''${ACCESS_PATTERN}''', src: 'file://bench/access.log')
| filter(status = 200)
| select(client, sum(bytes) as total) | group(client) | sort(total desc) | limit(10)`,
    target: { peer: "ClickHouse", ratio: 1.2 },
  },
  json: {
    title: "flat JSON lines: count by status",
    file: EVENTS_JSONL,
    script: `READ_JSON(src: 'file://bench/events.jsonl')
| select(status, count(*) as n) | group(status) | sort(status)`,
    target: { peer: "ClickHouse", ratio: 2.0 },
  },
  nested: {
    title: "nested sign-in JSON lines: failures by status.errorCode and location.countryOrRegion",
    file: SIGNINS_JSONL,
    script: `READ_JSON(src: 'file://bench/signins.jsonl')
| filter(status.errorCode != 0)
| select(status.errorCode as code, location.countryOrRegion as country, count(*) as n)
| group(code, country) | sort(n desc, code, country)`,
    target: { peer: "DuckDB", ratio: 1.0 },
  },
  wide: {
    title: "wide result: every access-log line as 5 columns, as JSON",
    file: ACCESS_LOG,
    script: `PARSE(pattern: '''${ACCESS_PATTERN}''', src: 'file://bench/access.log')
| select(time, client as ip, status, bytes, path)`,
    target: { peer: "ClickHouse", ratio: 0.8 },
  },
};

export interface Run {
  readonly ms: number;
  /** CPU time (user + system) the query took in its process, all threads. */
  readonly cpuMs?: number;
  readonly result: unknown;
}

interface Figure {
  readonly name: string;
  readonly ms: number;
  readonly all: readonly number[];
  readonly cpuMs?: number;
  readonly peakRssMb?: number;
  readonly result: unknown;
}

function option(name: string): string | undefined {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}

/** `--env K=V` (repeatable): environment variables of this build's server, not the ref's. */
export function serverEnv(): Record<string, string> {
  return Object.fromEntries(
    Deno.args.flatMap((a, i) => {
      if (a !== "--env") return [];
      const [k, ...v] = Deno.args[i + 1]!.split("=");
      return [[k!, v.join("=")]];
    }),
  );
}

/** `--server-set KEY=VALUE` (repeatable): further settings for Trawl's server. */
function serverSets(): string[] {
  return Deno.args.flatMap((a, i) => a === "--server-set" ? [Deno.args[i + 1]!] : []);
}

export function loadAverage(): string {
  return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Untimed runs before the timed ones, for every system alike (`--warmup`, default 0). */
const WARMUP = Number(option("warmup") ?? 0);

export async function timed(runs: number, name: string, make: () => Promise<Run>): Promise<Figure> {
  for (let i = 0; i < WARMUP; i++) await make();
  const all: Run[] = [];
  for (let i = 0; i < runs; i++) all.push(await make());
  const ms = median(all.map((r) => r.ms));
  const cpus = all.flatMap((r) => (r.cpuMs === undefined ? [] : [r.cpuMs]));
  return {
    name,
    ms,
    all: all.map((r) => r.ms),
    ...(cpus.length > 0 ? { cpuMs: median(cpus) } : {}),
    result: all[0]!.result,
  };
}

/**
 * `a` and `b` run in turn, `runs` times each (after `--warmup` untimed runs of each): their
 * figures, and the medians of the pairs' ratios a / b of the wall time and of the CPU time.
 */
async function timedPair(
  runs: number,
  names: [string, string],
  a: () => Promise<Run>,
  b: () => Promise<Run>,
): Promise<{ a: Figure; b: Figure; wall: number; cpu: number | undefined }> {
  for (let i = 0; i < WARMUP; i++) {
    await a();
    await b();
  }
  const as: Run[] = [];
  const bs: Run[] = [];
  for (let i = 0; i < runs; i++) {
    as.push(await a());
    bs.push(await b());
  }
  const figure = (name: string, all: Run[]): Figure => {
    const cpus = all.flatMap((r) => (r.cpuMs === undefined ? [] : [r.cpuMs]));
    return {
      name,
      ms: median(all.map((r) => r.ms)),
      all: all.map((r) => r.ms),
      ...(cpus.length > 0 ? { cpuMs: median(cpus) } : {}),
      result: all[0]!.result,
    };
  };
  const cpuRatios = as.flatMap((r, i) =>
    r.cpuMs !== undefined && bs[i]!.cpuMs ? [r.cpuMs / bs[i]!.cpuMs!] : []
  );
  return {
    a: figure(names[0], as),
    b: figure(names[1], bs),
    wall: median(as.map((r, i) => r.ms / bs[i]!.ms)),
    cpu: cpuRatios.length > 0 ? median(cpuRatios) : undefined,
  };
}

export async function node(script: string, args: string[]): Promise<Run> {
  const out = await new Deno.Command("node", {
    args: [join(HERE, "node", script), ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) {
    throw new Error(`${script} ${args.join(" ")} failed:\n${new TextDecoder().decode(out.stderr)}`);
  }
  return JSON.parse(text.split("\n").pop()!);
}

// ---------------------------------------------------------------------------------------------
// Trawl as a server

export interface Server {
  readonly url: string;
  readonly pid: number;
  readonly token?: string | undefined;
  stop(): Promise<void>;
}

export async function startServer(
  home: string,
  sets: string[],
  root: string = ROOT,
  env: Record<string, string> = {},
): Promise<Server> {
  const child = new Deno.Command(DENO, {
    args: [
      "run",
      "--unstable-no-legacy-abort",
      "--allow-all",
      // --profile DIR: the server's CPU profile (its main thread), written when it stops.
      ...(option("profile") ? ["--cpu-prof", `--cpu-prof-dir=${option("profile")}`] : []),
      // --v8 FLAGS: V8 flags for the server (all its isolates, workers included); by default
      // those of its build's deno.json start task, as a server is started.
      ...((option("v8") ?? startV8Flags(root))
        ? [`--v8-flags=${option("v8") ?? startV8Flags(root)}`]
        : []),
      join(root, "main.ts"),
      "serve",
      "--home",
      home,
      "--set",
      "wgui.port=0",
      "--set",
      "wgui.host=127.0.0.1",
      "--set",
      "log.requests=false",
      ...sets.flatMap((s) => ["--set", s]),
    ],
    cwd: root,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1", ...env },
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const lines: string[] = [];
  let rest = "";
  while (!lines.some((l) => l.includes("listening on"))) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the server ended before it listened:\n${lines.join("\n")}`);
    const parts = (rest + value).split("\n");
    rest = parts.pop()!;
    lines.push(...parts);
  }
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  const url = /listening on (http:\/\/\S+?)\/?$/.exec(
    lines.find((l) => l.includes("listening"))!,
  )![1]!;
  return {
    url,
    pid: child.pid,
    token: lines.find((l) => TOKEN_LINE.test(l)),
    async stop() {
      child.kill("SIGINT");
      await child.status;
    },
  };
}

export function peakRssMb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

/** A home whose admin may read `file://bench/...` (bench/data); returns its admin token. */
export async function makeHome(): Promise<{ home: string; token: string }> {
  const home = await Deno.makeTempDir({ prefix: "trawl-engine-bench-" });
  const first = await startServer(home, []);
  await first.stop();
  const stores = join(home, "data", "system", "datastores");
  await Deno.mkdir(stores, { recursive: true });
  await Deno.writeTextFile(
    join(stores, "bench.json"),
    JSON.stringify({ type: "FILE", fileStore: { root: DATA_DIR } }),
  );
  return { home, token: first.token! };
}

/** CPU time (user + system, all threads) of a process so far, in ms. */
export function cpuOf(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1]!.split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks * 10; // USER_HZ is 100 on Linux
}

/**
 * The query of `task` posted asynchronously, timed until it has SUCCEEDED (`waitMillis`: the
 * answer comes as it finishes), its result not read; then freed.
 */
export async function trawlAsync(server: Server, token: string, task: TaskName): Promise<Run> {
  const auth = { Authorization: `Bearer ${token}` };
  const cpu0 = cpuOf(server.pid);
  const started = performance.now();
  const res = await fetch(`${server.url}/API/v1.0/queries?scriptPath=/user&waitMillis=60000`, {
    method: "POST",
    headers: { ...auth, "Content-Type": "text/vnd.engine.script", Accept: "application/json" },
    body: TASKS[task].script,
  });
  const status = await res.json();
  const ms = performance.now() - started;
  if (res.status !== 200 || status.state !== "SUCCEEDED") {
    throw new Error(`Trawl answered ${res.status}: ${JSON.stringify(status).slice(0, 500)}`);
  }
  const cpuMs = cpuOf(server.pid) - cpu0;
  await (await fetch(`${server.url}/API/v1.0/queries/${status.queryId}`, {
    method: "DELETE",
    headers: auth,
  })).body?.cancel();
  return { ms, cpuMs, result: status.rowsOut ?? null };
}

/** One synchronous query through the API, timed until the last byte of the answer. */
export async function trawlQuery(
  server: Server,
  token: string,
  task: TaskName,
  encoding = "identity",
): Promise<Run> {
  const cpu0 = cpuOf(server.pid);
  const started = performance.now();
  const res = await fetch(`${server.url}/API/v1.0/?scriptPath=/user`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "text/vnd.engine.script",
      Accept: "application/json",
      // Plain JSON, as the peers write it, unless asked (Deno's fetch decodes what it gets, as
      // Node's fetch or Python's requests do).
      "Accept-Encoding": encoding,
    },
    body: TASKS[task].script,
  });
  if (task === "wide") {
    // Count the rows as they stream: one object each (no value of this task holds a brace).
    let rows = 0;
    let bytes = 0;
    let firstByteMs = 0;
    // Deno's fetch decodes gzip and br but not zstd: decoded here, as a client would.
    const body = encoding === "zstd"
      ? Readable.toWeb(Readable.fromWeb(res.body! as never).pipe(zlib.createZstdDecompress()))
      : res.body!;
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      firstByteMs ||= performance.now() - started;
      bytes += chunk.length;
      for (let i = chunk.indexOf(0x7b); i >= 0; i = chunk.indexOf(0x7b, i + 1)) rows++;
    }
    const ms = performance.now() - started;
    if (!res.ok) throw new Error(`Trawl answered ${res.status}`);
    // The answer streams while the query runs (docs/api.md, "Streamed answers").
    console.log(
      `  wide${encoding === "identity" ? "" : `, ${encoding}`}: first byte after ${
        firstByteMs.toFixed(0)
      } ms, last after ${ms.toFixed(0)} ms`,
    );
    return { ms, cpuMs: cpuOf(server.pid) - cpu0, result: { rows, mb: Math.round(bytes / 1e6) } };
  }
  const text = await res.text();
  const ms = performance.now() - started;
  if (!res.ok) throw new Error(`Trawl answered ${res.status}: ${text.slice(0, 500)}`);
  const rows = JSON.parse(text) as Record<string, unknown>[];
  return { ms, cpuMs: cpuOf(server.pid) - cpu0, result: rows.map((r) => Object.values(r)) };
}

// ---------------------------------------------------------------------------------------------

function printTable(task: Task, figures: Figure[], trawlN: Figure, bytes: number): void {
  console.log(
    "| system                          | median ms | MB/s  | ratio (its time / Trawl N's) | CPU ms | peak RSS | runs (ms) |",
  );
  console.log(
    "|---------------------------------|-----------|-------|------------------------------|--------|----------|-----------|",
  );
  for (const f of figures) {
    const mbs = bytes / 1e6 / (f.ms / 1000);
    console.log(
      `| ${f.name.padEnd(31)} | ${f.ms.toFixed(0).padStart(9)} | ${mbs.toFixed(0).padStart(5)} | ${
        (f.ms / trawlN.ms).toFixed(2).padStart(28)
      } | ${(f.cpuMs === undefined ? "" : f.cpuMs.toFixed(0)).padStart(6)} | ${
        (f.peakRssMb ? `${f.peakRssMb} MB` : "").padStart(8)
      } | ${f.all.map((m) => m.toFixed(0)).join(", ")} |`,
    );
  }
  void task;
}

function sameResult(task: TaskName, a: unknown, b: unknown): boolean {
  if (task === "wide") return (a as { rows: number }).rows === b; // the peers give counts
  return JSON.stringify(a) === JSON.stringify(b);
}

async function main(): Promise<void> {
  const runs = Number(option("runs") ?? 3);
  const tasks = (option("tasks") ?? "access,json,nested,wide").split(",") as TaskName[];
  const cores = navigator.hardwareConcurrency || 1;
  const hasWorkers = (SETTING_KEYS as readonly string[]).includes("query.workers");
  const workerCounts = hasWorkers
    ? (option("workers") ?? [...new Set([1, cores])].join(",")).split(",").map(Number)
    : [1];
  const threads = Math.max(...workerCounts, hasWorkers ? 1 : cores);
  const onePeers = !Deno.args.includes("--no-one-thread-peers");
  // Trawl alone (while working on it): no peer runs, no ratios.
  const noPeers = Deno.args.includes("--no-peers");
  // --ref DIR: another build, alternated with this one run by run.
  const ref = option("ref");
  const { home, token } = await makeHome();
  const verdicts: string[] = [];
  console.log(
    `# Engine benchmark: ${cores} cores; Trawl ${
      hasWorkers ? `workers ${workerCounts.join(", ")}` : "one scan thread (no query.workers)"
    }; peers ${threads} thread(s)${onePeers ? " and 1" : ""}; median of ${runs}${
      WARMUP > 0 ? ` after ${WARMUP} untimed` : ""
    }`,
  );
  try {
    for (const name of tasks) {
      const task = TASKS[name];
      const bytes = (await Deno.stat(task.file)).size;
      const loadBefore = loadAverage();
      const trawl: Figure[] = [];
      /** The wide task's further figures (issue 23), printed with its table. */
      const extra: string[] = [];
      for (const w of workerCounts) {
        const server = await startServer(
          home,
          [
            ...(hasWorkers ? [`query.workers=${w}`] : []),
            ...serverSets(),
          ],
          ROOT,
          serverEnv(),
        );
        // The reference build's server, on the same home and data, stopped before the next.
        const refServer = ref === undefined ? undefined : await startServer(home, [
          ...(hasWorkers ? [`query.workers=${w}`] : []),
          ...serverSets(),
        ], ref);
        try {
          let f: Figure;
          if (refServer !== undefined) {
            const pair = await timedPair(
              runs,
              [
                `Trawl ref, ${w} worker${w > 1 ? "s" : ""}`,
                `Trawl, ${w} worker${w > 1 ? "s" : ""}`,
              ],
              () => trawlQuery(refServer, token, name),
              () => trawlQuery(server, token, name),
            );
            f = pair.b;
            trawl.push({ ...pair.a, peakRssMb: peakRssMb(refServer.pid) });
            const verdict =
              `${name}, ${w} worker${w > 1 ? "s" : ""}: ref / this, median of ${runs} ` +
              `pairs: wall ${pair.wall.toFixed(2)}×, server CPU ${
                pair.cpu === undefined ? "?" : `${pair.cpu.toFixed(2)}×`
              } (ref ${ref})`;
            extra.push(verdict);
          } else {
            f = await timed(
              runs,
              `Trawl, ${w} worker${w > 1 ? "s" : ""}`,
              () => trawlQuery(server, token, name),
            );
          }
          if (name === "wide" && w === workerCounts.at(-1)) {
            // Issue 23: the streamed answer against the query alone, and compression's cost.
            const quiet = await timed(
              runs,
              "async, SUCCEEDED, not read",
              () => trawlAsync(server, token, name),
            );
            const gzip = await timed(
              runs,
              "sync, gzip",
              () => trawlQuery(server, token, name, "gzip"),
            );
            const zstd = await timed(
              runs,
              "sync, zstd",
              () => trawlQuery(server, token, name, "zstd"),
            );
            // Deno's fetch, the client above, decodes gzip at about 100-130 MB/s, and on 2 cores
            // the client's decoding competes with the server: the same answers fetched by Node's
            // fetch (zlib in C), gzip and identity in turn (Node 20 has no zstd).
            const viaNode = (encoding: string, raw = false) => async (): Promise<Run> => {
              const cpu0 = cpuOf(server.pid);
              const run = await node("wide_client.mjs", [
                `${server.url}/API/v1.0/?scriptPath=/user`,
                token,
                encoding,
                TASKS.wide.script,
                ...(raw ? ["raw"] : []),
              ]);
              return { ...run, cpuMs: cpuOf(server.pid) - cpu0 };
            };
            const nodePair = await timedPair(
              runs,
              ["Node's fetch, gzip", "Node's fetch, identity"],
              viaNode("gzip"),
              viaNode("identity"),
            );
            // The server's part alone: gzip's bytes not decoded (node:http), against identity's.
            const rawPair = await timedPair(
              runs,
              ["node:http, gzip, not decoded", "node:http, identity"],
              viaNode("gzip", true),
              viaNode("identity", true),
            );
            for (const got of [nodePair.a, nodePair.b, gzip, zstd]) {
              if (JSON.stringify(got.result) !== JSON.stringify(f.result)) {
                throw new Error(
                  `${got.name}: ${JSON.stringify(got.result)}, identity ${
                    JSON.stringify(f.result)
                  }`,
                );
              }
            }
            const rss = peakRssMb(server.pid);
            const line = (what: string, a: Figure, b: Figure, target: number) =>
              `${what}: ${a.ms.toFixed(0)} ms / ${b.ms.toFixed(0)} ms = ${
                (a.ms / b.ms).toFixed(2)
              }× (target ≤ ${target}) ${a.ms / b.ms <= target ? "MET" : "MISSED"}`;
            extra.push(
              line(`wide, ${w} workers, sync answer vs async SUCCEEDED not read`, f, quiet, 1.15),
              line(`wide, ${w} workers, gzip vs identity`, gzip, f, 1.3),
              line(`wide, ${w} workers, zstd vs identity`, zstd, f, 1.3),
              `wide, ${w} workers, gzip vs identity with Node's fetch as the client (median of ` +
                `${runs} pairs): ${nodePair.wall.toFixed(2)}× (target ≤ 1.3) ${
                  nodePair.wall <= 1.3 ? "MET" : "MISSED"
                }; server CPU ${nodePair.cpu?.toFixed(2) ?? "?"}×; runs gzip ${
                  nodePair.a.all.map((m) => m.toFixed(0)).join(", ")
                }, identity ${nodePair.b.all.map((m) => m.toFixed(0)).join(", ")} ms`,
              `wide, ${w} workers, gzip vs identity, the server's part (node:http, gzip not ` +
                `decoded; median of ${runs} pairs): ${rawPair.wall.toFixed(2)}× (target ≤ 1.3) ${
                  rawPair.wall <= 1.3 ? "MET" : "MISSED"
                }; server CPU ${rawPair.cpu?.toFixed(2) ?? "?"}×; runs gzip ${
                  rawPair.a.all.map((m) => m.toFixed(0)).join(", ")
                }, identity ${rawPair.b.all.map((m) => m.toFixed(0)).join(", ")} ms`,
              `wide, ${w} workers: server peak RSS (workers counted) ${rss} MB (target < 400) ${
                rss < 400 ? "MET" : "MISSED"
              }; runs: sync ${f.all.map((m) => m.toFixed(0)).join(", ")}, async ${
                quiet.all.map((m) => m.toFixed(0)).join(", ")
              }, gzip ${gzip.all.map((m) => m.toFixed(0)).join(", ")}, zstd ${
                zstd.all.map((m) => m.toFixed(0)).join(", ")
              } ms; server CPU ms sync ${f.cpuMs} / async ${quiet.cpuMs} / gzip ${gzip.cpuMs}`,
            );
          }
          trawl.push({ ...f, peakRssMb: peakRssMb(server.pid) });
        } finally {
          await server.stop();
          await refServer?.stop();
        }
      }
      const peers: Figure[] = [];
      const out = join(await Deno.makeTempDir(), "out.json");
      for (const t of noPeers ? [] : onePeers && threads > 1 ? [threads, 1] : [threads]) {
        peers.push(
          await timed(
            runs,
            `ClickHouse (chDB), ${t} thread${t > 1 ? "s" : ""}`,
            () => node("chdb_run.mjs", [name, task.file, String(t), out]),
          ),
          await timed(
            runs,
            `DuckDB, ${t} thread${t > 1 ? "s" : ""}`,
            () => node("duckdb_run.mjs", [name, task.file, String(t), out]),
          ),
        );
      }
      await Deno.remove(dirname(out), { recursive: true });
      const trawlN = trawl[trawl.length - 1]!;
      console.log(`\n## ${name}: ${task.title} (${(bytes / 1e6).toFixed(0)} MB)`);
      console.log(`load average before ${loadBefore}, after ${loadAverage()}\n`);
      for (const e of extra.splice(0)) {
        console.log(`- ${e}`);
        verdicts.push(e);
      }
      if (extra.length === 0) console.log();
      printTable(task, [...trawl, ...peers], trawlN, bytes);
      const differ = peers.filter((p) => !sameResult(name, trawlN.result, p.result));
      console.log(
        differ.length === 0
          ? "\nresults agree"
          : `\nRESULTS DIFFER from ${differ.map((d) => d.name).join(", ")}:\n${
            JSON.stringify(trawlN.result).slice(0, 800)
          }\n${differ.map((d) => JSON.stringify(d.result).slice(0, 800)).join("\n")}`,
      );
      if (trawl.length > 1 && ref === undefined) {
        const one = trawl[0]!;
        for (const f of trawl.slice(1)) {
          console.log(`speed-up ${f.name} over 1 worker: ${(one.ms / f.ms).toFixed(2)}×`);
        }
      }
      const peer = peers.find((p) => p.name.startsWith(task.target.peer));
      if (!peer) continue;
      const ratio = peer.ms / trawlN.ms;
      verdicts.push(
        `${name}: ${ratio.toFixed(2)}× ${peer.name} (target ≥ ${task.target.ratio}) ${
          ratio >= task.target.ratio ? "MET" : "MISSED"
        }; Trawl peak RSS ${trawl.map((t) => t.peakRssMb).join(" / ")} MB (target < 400) ${
          trawl.every((t) => (t.peakRssMb ?? 0) < 400) ? "MET" : "MISSED"
        }`,
      );
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
  console.log("\n## Targets\n");
  for (const v of verdicts) console.log(`- ${v}`);
}

if (import.meta.main) await main();
