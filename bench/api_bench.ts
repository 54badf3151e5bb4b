// deno-lint-ignore-file no-console
/**
 * HTTP API benchmarks, not part of CI: `deno run -A bench/api_bench.ts [--seconds 5]
 * [--rounds 3] [--connections 32] [--rows 2000000] [--parts 1,2,3,4] [--set key=value]`. Prints one table, each figure beside the
 * issue's target and the ratio, with the machine's load average before and after.
 *
 * Everything is measured from outside the server, against the same build in one run:
 *
 * 1. A trivial synchronous query (`VALUES((a: 1))`, POST /API/v1.0/) under load from a second
 *    process, autocannon under Node (bench/node/, installed on first use), beside a bare
 *    `Deno.serve` answering `{"status":"ok"}` loaded the same way. The two alternate for
 *    `--rounds` rounds and the median round of each counts, so that a burst of load from
 *    elsewhere hits both. Targets: with `--connections` (32), half the bare server's requests
 *    per second (issue 9); with 16 clients (`--small-connections`), 0.33× (issue 23).
 * 2. The asynchronous round trip of the same query (POST, poll until SUCCEEDED, GET the result,
 *    DELETE), one at a time: p50 under 5 ms.
 * 3. A 2-million-row result (PARSE of a file generated on disk beforehand by a streaming
 *    writer) fetched as JSON and as CSV: rows per second (at least 700 000/s) and the SERVER's
 *    peak memory, VmHWM of its process from /proc (under 300 MB). That server is started
 *    afresh for this part, so its peak is that of the big result alone.
 *
 *    The same result is also fetched as an Arrow IPC stream (rows/s and bytes) and as JSON with
 *    `Accept-Encoding: gzip` (rows/s and bytes on the wire: gzip's cost). Run with
 *    `--rows 2400000` for the 2.4 M rows.
 *
 * 5. `POST /check` on a 50-line script, one request at a time: p50 under 5 ms.
 *
 * 4. The same trivial synchronous query and GET whoami in process: `app.fetch` without a socket,
 *    32 in flight, on the app main.ts serves; CPU microseconds per request (process.cpuUsage,
 *    best and median of 9 runs), which a busy machine disturbs far less than requests/s.
 *
 * The servers are real `main.ts serve` subprocesses on a temporary home, with their default
 * settings (request log on, to stderr, which is discarded) but `query.maxQueued` raised so that
 * the load is not refused with 429.
 */

import { join } from "node:path";
import { inProcessServer, perRequest } from "./in_process.ts";
import { RecordBatchReader } from "apache-arrow";
import { sleep } from "../engine/util/sleep.ts";

const DENO = Deno.execPath();
const ROOT = new URL("..", import.meta.url).pathname;
const MAIN = join(ROOT, "main.ts");
const NODE_DIR = join(ROOT, "bench", "node");
/** autocannon's script: bench/node's, or `AUTOCANNON=<path to autocannon.js>` (one already installed). */
const AUTOCANNON = Deno.env.get("AUTOCANNON") ??
  join(NODE_DIR, "node_modules", "autocannon", "autocannon.js");
const TOKEN_LINE = /^trawl_[A-Za-z0-9_-]{43}$/;
const SCRIPT_TYPE = "text/vnd.engine.script";
const TRIVIAL = "VALUES((a: 1))";

function option(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  const value = i >= 0 ? Number(Deno.args[i + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} needs a positive number`);
  return value;
}

const SECONDS = option("seconds", 5);
const ROUNDS = option("rounds", 3);
const CONNECTIONS = option("connections", 32);
/** Keep-alive clients of issue 23's small-query target (`--small-connections`). */
const SMALL_CONNECTIONS = option("small-connections", 16);
const ROWS = option("rows", 2_000_000);
/** `--parts 1,3` runs some of the three parts only (while working on one). */
const PARTS = new Set((Deno.args[Deno.args.indexOf("--parts") + 1] ?? "").split(","));
const part = (n: number) => !Deno.args.includes("--parts") || PARTS.has(String(n));
/** `--set key=value` (repeatable) passes settings to the servers, to try other values. */
const SETS = Deno.args.flatMap((a, i) => Deno.args[i - 1] === "--set" ? ["--set", a] : []);
/** `--v8-flags=...` for the servers, e.g. to trace the garbage collector. */
const V8_FLAGS = Deno.args.filter((a) => a.startsWith("--v8-flags="));

// ---------------------------------------------------------------------------------------------
// Processes

interface Server {
  readonly url: string;
  readonly pid: number;
  /** The admin token, printed on the first start of a home. */
  readonly token: string | undefined;
  stop(): Promise<void>;
}

/** Reads lines of a child's stdout until `done` says enough; the rest is drained. */
async function readLinesUntil(
  stream: ReadableStream<Uint8Array>,
  done: (line: string) => boolean,
): Promise<string[]> {
  const lines: string[] = [];
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let rest = "";
  for (;;) {
    const { value, done: ended } = await reader.read();
    if (ended) throw new Error(`the process ended before it was ready:\n${lines.join("\n")}`);
    const parts = (rest + value).split("\n");
    rest = parts.pop()!;
    lines.push(...parts);
    if (parts.some(done)) break;
  }
  // Keep draining, so that the child never blocks on a full pipe.
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  return lines;
}

/** `main.ts serve` on a free port; stderr (the request log) is discarded. */
async function startServer(home: string): Promise<Server> {
  const child = new Deno.Command(DENO, {
    args: [
      "run",
      "--unstable-no-legacy-abort",
      "--allow-all",
      ...V8_FLAGS,
      MAIN,
      "serve",
      "--home",
      home,
      "--set",
      "wgui.port=0",
      "--set",
      "wgui.host=127.0.0.1",
      "--set",
      "query.maxQueued=100000",
      ...SETS,
    ],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: Deno.env.get("BENCH_SERVER_STDERR") ? "inherit" : "null",
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
  }).spawn();
  const lines = await readLinesUntil(child.stdout, (l) => l.includes("listening on"));
  const url = /listening on (http:\/\/\S+?)\/?$/.exec(lines.at(-1)!)![1]!;
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

/** A bare `Deno.serve` hello-world in its own process: the reference for throughput. */
async function startHello(): Promise<Server> {
  const script = `Deno.serve({ hostname: "127.0.0.1", port: 0,
    onListen: (a) => console.log("listening on http://127.0.0.1:" + a.port) },
    () => Response.json({ status: "ok" }));`;
  const child = new Deno.Command(DENO, {
    args: ["eval", script],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = await readLinesUntil(child.stdout, (l) => l.includes("listening on"));
  return {
    url: /listening on (\S+)/.exec(lines.at(-1)!)![1]!,
    pid: child.pid,
    token: undefined,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

/** Peak and current resident memory of a process, in bytes, from /proc/<pid>/status. */
async function memoryOf(pid: number): Promise<{ peak: number; now: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)![1]);
  return { peak: kb("VmHWM") * 1024, now: kb("VmRSS") * 1024 };
}

async function loadAverage(): Promise<string> {
  return (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
}

// ---------------------------------------------------------------------------------------------
// Load

interface LoadResult {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
}

async function ensureAutocannon(): Promise<void> {
  try {
    await Deno.stat(AUTOCANNON);
  } catch {
    console.log("installing autocannon into bench/node (npm install) ...");
    const { code } = await new Deno.Command("npm", {
      args: ["install", "--no-audit", "--no-fund"],
      cwd: NODE_DIR,
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (code !== 0) throw new Error("npm install in bench/node failed");
  }
}

/** `SECONDS` of load from autocannon (a Node process) after a one-second warm-up. */
async function load(
  url: string,
  request: { method?: string; headers?: Record<string, string>; body?: string } = {},
  connections = CONNECTIONS,
): Promise<LoadResult> {
  const args = [AUTOCANNON, "--json", "-c", String(connections)];
  if (request.method) args.push("-m", request.method);
  for (const [k, v] of Object.entries(request.headers ?? {})) args.push("-H", `${k}=${v}`);
  if (request.body !== undefined) args.push("-b", request.body);
  const run = async (seconds: number) => {
    const out = await new Deno.Command("node", {
      args: [...args, "-d", String(seconds), url],
      stdout: "piped",
      stderr: "null",
    }).output();
    if (out.code !== 0) throw new Error(`autocannon exited with ${out.code}`);
    return JSON.parse(new TextDecoder().decode(out.stdout));
  };
  await run(1);
  const r = await run(SECONDS);
  if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0) {
    throw new Error(
      `${url}: ${r.non2xx} non-2xx answers, ${r.errors} errors, ${r.timeouts} timeouts`,
    );
  }
  return { rps: r["2xx"] / r.duration, p50: r.latency.p50, p99: r.latency.p99 };
}

function median<T>(items: readonly T[], by: (t: T) => number): T {
  return [...items].sort((a, b) => by(a) - by(b))[Math.floor(items.length / 2)]!;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** Milliseconds of `n` requests made one after another, sorted. */
async function oneByOne(n: number, request: () => Promise<void>): Promise<number[]> {
  for (let i = 0; i < Math.min(50, n); i++) await request();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await request();
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b);
}

async function expectOk(res: Response): Promise<Response> {
  if (!res.ok) throw new Error(`${res.url}: ${res.status} ${await res.text()}`);
  return res;
}

// ---------------------------------------------------------------------------------------------
// The three parts

interface Row {
  readonly measure: string;
  readonly value: string;
  readonly target: string;
  /** value / target, oriented so that >= 1 meets the target; undefined for information. */
  readonly ratio?: number;
}

async function benchSync(server: Server, token: string, rows: Row[]): Promise<void> {
  const auth = { Authorization: `Bearer ${token}` };
  const sync = {
    method: "POST",
    headers: { ...auth, "Content-Type": SCRIPT_TYPE },
    body: TRIVIAL,
  };
  const syncUrl = `${server.url}/API/v1.0/?scriptPath=/user`;
  const check = await (await expectOk(await fetch(syncUrl, sync))).text();
  if (check !== '[{"a":1}]') throw new Error(`unexpected answer ${check}`);

  const bare: LoadResult[] = [];
  const trawl: LoadResult[] = [];
  // Issue 23: 16 keep-alive clients, against the bare server's {"status":"ok"}, alternated.
  const bare16: LoadResult[] = [];
  const trawl16: LoadResult[] = [];
  const hello = await startHello();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      bare.push(await load(hello.url));
      trawl.push(await load(syncUrl, sync));
      bare16.push(await load(hello.url, {}, SMALL_CONNECTIONS));
      trawl16.push(await load(syncUrl, sync, SMALL_CONNECTIONS));
    }
  } finally {
    await hello.stop();
  }
  const b16 = median(bare16, (r) => r.rps);
  const t16 = median(trawl16, (r) => r.rps);
  rows.push(
    {
      measure: `1. sync VALUES, ${SMALL_CONNECTIONS} clients, req/s (issue 23)`,
      value: `${t16.rps.toFixed(0)} = ${(t16.rps / b16.rps).toFixed(3)} x bare`,
      target: `>= ${(b16.rps * 0.33).toFixed(0)} (0.33 x bare)`,
      ratio: t16.rps / (b16.rps * 0.33),
    },
    {
      measure: `   bare Deno.serve {"status":"ok"}, ${SMALL_CONNECTIONS} clients`,
      value: `${b16.rps.toFixed(0)} req/s; rounds Trawl ${
        trawl16.map((r) => r.rps.toFixed(0)).join(", ")
      }, bare ${bare16.map((r) => r.rps.toFixed(0)).join(", ")}`,
      target: "",
    },
  );
  const whoami = await load(`${server.url}/API/v1.0/whoami`, { headers: auth });
  const b = median(bare, (r) => r.rps);
  const t = median(trawl, (r) => r.rps);
  const list = (rs: LoadResult[]) => rs.map((r) => r.rps.toFixed(0)).join(", ");
  rows.push(
    {
      measure: "1. sync VALUES, req/s",
      value: `${t.rps.toFixed(0)}`,
      target: `>= ${(b.rps / 2).toFixed(0)} (0.5 x bare)`,
      ratio: t.rps / (b.rps / 2),
    },
    {
      measure: "   ... as a share of bare Deno.serve",
      value: `${(t.rps / b.rps).toFixed(3)} x`,
      target: ">= 0.5 x",
    },
    { measure: "   ... latency p50 / p99", value: `${t.p50} / ${t.p99} ms`, target: "" },
    { measure: "   ... rounds (req/s)", value: list(trawl), target: "" },
    { measure: "   bare Deno.serve hello, req/s", value: `${b.rps.toFixed(0)}`, target: "" },
    {
      measure: "   ... p50 / p99; rounds",
      value: `${b.p50} / ${b.p99} ms; ${list(bare)}`,
      target: "",
    },
    { measure: "   GET whoami (auth only), req/s", value: `${whoami.rps.toFixed(0)}`, target: "" },
  );

  const alone = await oneByOne(500, async () => {
    await (await expectOk(await fetch(syncUrl, sync))).arrayBuffer();
  });
  const aloneWhoami = await oneByOne(500, async () => {
    await (await expectOk(await fetch(`${server.url}/API/v1.0/whoami`, { headers: auth })))
      .arrayBuffer();
  });
  rows.push({
    measure: "   one request alone p50: sync / whoami",
    value: `${percentile(alone, 0.5).toFixed(2)} / ${percentile(aloneWhoami, 0.5).toFixed(2)} ms`,
    target: "",
  });
}

async function benchAsync(server: Server, token: string, rows: Row[]): Promise<void> {
  const auth = { Authorization: `Bearer ${token}` };
  const base = `${server.url}/API/v1.0/queries`;
  const times = await oneByOne(500, async () => {
    const post = await expectOk(
      await fetch(`${base}?scriptPath=/user`, {
        method: "POST",
        headers: { ...auth, "Content-Type": SCRIPT_TYPE },
        body: TRIVIAL,
      }),
    );
    const { queryId } = await post.json();
    for (;;) {
      const st = await (await expectOk(await fetch(`${base}/${queryId}`, { headers: auth })))
        .json();
      if (st.state === "SUCCEEDED") break;
      if (st.state === "FAILED" || st.state === "CANCELLED") throw new Error(st.state);
    }
    const result =
      await (await expectOk(await fetch(`${base}/${queryId}/result`, { headers: auth })))
        .text();
    if (result !== '[{"a":1}]') throw new Error(`unexpected result ${result}`);
    await (await fetch(`${base}/${queryId}`, { method: "DELETE", headers: auth })).body?.cancel();
  });
  const p50 = percentile(times, 0.5);
  rows.push(
    {
      measure: "2. async round trip p50",
      value: `${p50.toFixed(2)} ms`,
      target: "< 5 ms",
      ratio: 5 / p50,
    },
    { measure: "   ... p99", value: `${percentile(times, 0.99).toFixed(2)} ms`, target: "" },
  );
}

/** Writes `ROWS` log lines to `file` a megabyte at a time. */
async function writeRows(file: string): Promise<number> {
  const out = await Deno.open(file, { write: true, create: true, truncate: true });
  const encoder = new TextEncoder();
  let bytes = 0;
  try {
    let chunk = "";
    for (let i = 0; i < ROWS; i++) {
      chunk += `${i} host-${i % 97} GET /p/${i % 1000}\n`;
      if (chunk.length >= 1 << 20 || i === ROWS - 1) {
        const data = encoder.encode(chunk);
        for (let at = 0; at < data.length;) at += await out.write(data.subarray(at));
        bytes += data.length;
        chunk = "";
      }
    }
  } finally {
    out.close();
  }
  return bytes;
}

async function benchLarge(home: string, token: string, rows: Row[]): Promise<void> {
  const file = join(home, "data", "shared", "rows.log");
  await Deno.mkdir(join(file, ".."), { recursive: true });
  const size = await writeRows(file);
  const server = await startServer(home);
  try {
    const auth = { Authorization: `Bearer ${token}` };
    const base = `${server.url}/API/v1.0/queries`;
    const atStart = await memoryOf(server.pid);
    const t0 = performance.now();
    const post = await expectOk(
      await fetch(`${base}?scriptPath=/user`, {
        method: "POST",
        headers: { ...auth, "Content-Type": SCRIPT_TYPE },
        body: "PARSE(pattern: '''INT:n ' ' NSPACE:host ' ' WORD:method ' ' NSPACE:path EOL''', " +
          "src: '/shared/rows.log')",
      }),
    );
    const { queryId } = await post.json();
    for (;;) {
      const st = await (await expectOk(await fetch(`${base}/${queryId}`, { headers: auth })))
        .json();
      if (st.state === "SUCCEEDED") break;
      if (st.state === "FAILED" || st.state === "CANCELLED") {
        throw new Error(`the big query ended ${st.state}: ${JSON.stringify(st.error)}`);
      }
      await sleep(20);
    }
    const ran = performance.now() - t0;
    const afterRun = await memoryOf(server.pid);
    rows.push({
      measure: `3. ${ROWS} rows: the query ran in`,
      value: `${(ran / 1000).toFixed(2)} s (${(size / 1e6).toFixed(0)} MB file)`,
      target: "",
    });
    const fetches = [
      ["JSON", "application/json", "identity"],
      ["CSV", "application/csv", "identity"],
      ["Arrow", "application/vnd.apache.arrow.stream", "identity"],
    ] as const;
    for (const [name, type, encoding] of fetches) {
      const t = performance.now();
      // An explicit Accept-Encoding: fetch then hands the body over as it came (not decoded).
      const res = await expectOk(
        await fetch(`${base}/${queryId}/result`, {
          headers: { ...auth, Accept: type, "Accept-Encoding": encoding },
        }),
      );
      if ((res.headers.get("Content-Encoding") ?? "identity") !== encoding) {
        throw new Error(`${name}: Content-Encoding ${res.headers.get("Content-Encoding")}`);
      }
      const chunks: Uint8Array[] = [];
      let bytes = 0;
      let newlines = 0;
      for await (const chunk of res.body!) {
        bytes += chunk.length;
        if (name === "Arrow") chunks.push(chunk);
        else if (encoding === "identity") {
          for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) newlines++;
        }
      }
      const secs = (performance.now() - t) / 1000;
      if (type === "application/csv" && newlines !== ROWS + 1) {
        throw new Error(`the CSV had ${newlines - 1} rows, not ${ROWS}`);
      }
      if (name === "Arrow") {
        // Read back after the clock stopped: every row is there.
        let n = 0;
        for (const batch of RecordBatchReader.from(chunks)) n += batch.numRows;
        if (n !== ROWS) throw new Error(`the Arrow stream had ${n} rows, not ${ROWS}`);
      }
      rows.push({
        measure: `   ... fetched as ${name}, rows/s`,
        value: `${(ROWS / secs).toFixed(0)} (${(bytes / 1e6).toFixed(0)} MB)`,
        target: ">= 700000",
        ratio: ROWS / secs / 700_000,
      });
    }
    // gzip's cost: fetch would decode the body, so the compressed bytes are read off a socket.
    {
      const t = performance.now();
      const bytes = await rawGet(`${base}/${queryId}/result`, {
        ...auth,
        Accept: "application/json",
        "Accept-Encoding": "gzip",
      });
      const secs = (performance.now() - t) / 1000;
      rows.push({
        measure: "   ... fetched as JSON with gzip, rows/s",
        value: `${(ROWS / secs).toFixed(0)} (${(bytes / 1e6).toFixed(0)} MB on the wire)`,
        target: "",
      });
    }
    const end = await memoryOf(server.pid);
    rows.push(
      {
        measure: "   server peak RSS (VmHWM)",
        value: `${(end.peak / 1e6).toFixed(0)} MB = ${(end.peak / 2 ** 20).toFixed(0)} MiB`,
        target: "< 300 MB",
        ratio: 300e6 / end.peak,
      },
      {
        measure: "   ... at start / after the run",
        value: `${(atStart.peak / 1e6).toFixed(0)} / ${(afterRun.peak / 1e6).toFixed(0)} MB`,
        target: "",
      },
    );
  } finally {
    await server.stop();
  }
}

/** Part 4: CPU time per request of the app itself, without sockets (see the file's comment). */
async function benchInProcess(dir: string, rows: Row[]): Promise<void> {
  // The request log stays on, as in the servers above, written to /dev/null in its batches.
  await using s = await inProcessServer(join(dir, "inprocess"));
  for (const [name, make] of s.kinds) {
    const run = async (n: number) => (await perRequest(s.app, make, n, CONNECTIONS)).cpu;
    await run(3000);
    const times: number[] = [];
    for (let i = 0; i < 9; i++) times.push(await run(3000));
    times.sort((a, b) => a - b);
    rows.push({
      measure: `4. in process, ${name}: CPU µs/request`,
      value: `${times[0]!.toFixed(0)} best, ${times[4]!.toFixed(0)} median`,
      target: "",
    });
  }
}

function printTable(rows: readonly Row[]): void {
  const w = [
    Math.max(...rows.map((r) => r.measure.length)),
    Math.max(...rows.map((r) => r.value.length)),
    Math.max(...rows.map((r) => r.target.length), 6),
  ];
  const line = (a: string, b: string, c: string, d: string) =>
    `${a.padEnd(w[0]!)}  ${b.padStart(w[1]!)}  ${c.padEnd(w[2]!)}  ${d}`;
  console.log(line("measure", "value", "target", "ratio"));
  console.log("-".repeat(w[0]! + w[1]! + w[2]! + 16));
  for (const r of rows) {
    const ratio = r.ratio === undefined
      ? ""
      : `${r.ratio.toFixed(2)} ${r.ratio >= 1 ? "met" : "MISSED"}`;
    console.log(line(r.measure, r.value, r.target, ratio));
  }
}

/**
 * The bytes of a GET's body as they come over the socket (HTTP/1.1, `Connection: close`; the
 * chunked framing is counted too, a few bytes per 64 KiB), after checking it was gzip-encoded.
 */
async function rawGet(url: string, headers: Record<string, string>): Promise<number> {
  const u = new URL(url);
  const conn = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
  const lines = [`GET ${u.pathname}${u.search} HTTP/1.1`, `Host: ${u.host}`, "Connection: close"];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  await conn.write(new TextEncoder().encode(lines.join("\r\n") + "\r\n\r\n"));
  let head = "";
  let body = 0;
  for await (const chunk of conn.readable) {
    if (head.endsWith("\r\n\r\n")) {
      body += chunk.length;
      continue;
    }
    const text = new TextDecoder("latin1").decode(chunk);
    const end = text.indexOf("\r\n\r\n");
    if (end < 0) head += text;
    else {
      head += text.slice(0, end + 4);
      body += chunk.length - (end + 4);
    }
  }
  if (!/^content-encoding: gzip\r$/im.test(head)) throw new Error(`not gzip: ${head}`);
  return body;
}

/** Part 5: POST /check on a 50-line script, one at a time (an editor's keystroke pause). */
async function benchCheck(server: Server, token: string, rows: Row[]): Promise<void> {
  const lines = ["VALUES((a: 1, b: 'x', c: 2.5, t: T('2024-05-01T13:00:00Z')))"];
  for (let i = 1; i < 50; i++) {
    lines.push(
      i % 2 ? `| filter(a >= ${i} or b != 'y${i}')` : `| select(a, b, c + ${i} as c, t)`,
    );
  }
  const script = lines.join("\n");
  const headers = { Authorization: `Bearer ${token}`, "Content-Type": "text/plain" };
  const times = await oneByOne(300, async () => {
    const res = await expectOk(
      await fetch(`${server.url}/API/v1.0/check?scriptPath=/user`, {
        method: "POST",
        headers,
        body: script,
      }),
    );
    const body = await res.json();
    if (!body.ok) throw new Error(`the check found problems: ${JSON.stringify(body)}`);
  });
  const p50 = percentile(times, 0.5);
  rows.push(
    {
      measure: "5. POST /check, 50 lines, p50",
      value: `${p50.toFixed(2)} ms`,
      target: "< 5 ms",
      ratio: 5 / p50,
    },
    { measure: "   ... p99", value: `${percentile(times, 0.99).toFixed(2)} ms`, target: "" },
  );
}

async function main(): Promise<void> {
  await ensureAutocannon();
  const before = await loadAverage();
  const dir = await Deno.makeTempDir({ prefix: "trawl-api-bench-" });
  const rows: Row[] = [];
  try {
    const home = join(dir, "home");
    const server = await startServer(home);
    const token = server.token!;
    try {
      if (part(1)) await benchSync(server, token, rows);
      if (part(2)) await benchAsync(server, token, rows);
      if (part(5)) await benchCheck(server, token, rows);
    } finally {
      await server.stop();
    }
    if (part(3)) await benchLarge(home, token, rows);
    if (part(4)) await benchInProcess(dir, rows);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  console.log(
    `\nTrawl HTTP API, ${navigator.hardwareConcurrency} CPUs, ${SECONDS} s x ${ROUNDS} rounds, ` +
      `${CONNECTIONS} connections (autocannon)`,
  );
  console.log(`load average before: ${before}; after: ${await loadAverage()}\n`);
  printTable(rows);
}

if (import.meta.main) await main();
