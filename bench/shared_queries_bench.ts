// deno-lint-ignore-file no-console
/**
 * Queries shared by servers on one Deno KV file (actors/shared_queries.ts), by hand, not in CI:
 *
 *   deno run -A bench/shared_queries_bench.ts [--rows 2000000] [--seconds 5] [--concurrency 8]
 *
 * 1. A result of `--rows` rows made on server A, stored in the KV, and read through server B
 *    (rows/s), against reading it from A itself; the time from submit until B sees it SUCCEEDED
 *    (the run and the storing), and the peak RSS of both servers (VmHWM).
 * 2. Small synchronous and asynchronous queries, `--concurrency` clients: one server on the KV
 *    against two servers on the same KV, the clients spread over both (req/s, p50, p99).
 */

import { join } from "node:path";
import { type ServerProcess, startServerProcess } from "../tests/foundation/server_process.ts";
import { sleep } from "../engine/util/sleep.ts";

function arg(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}

const ROWS = arg("rows", 2_000_000);
const SECONDS = arg("seconds", 5);
const CONCURRENCY = arg("concurrency", 8);
const SMALL = "VALUES((x: 1), (x: 2), (x: 3)) | select(count(*) as n)";

/** The peak resident memory of the server whose command line names `home` (MB). */
function peakRssMb(home: string): number {
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
      if (!cmdline.includes(home) || !cmdline.includes("serve")) continue;
      const status = Deno.readTextFileSync(`/proc/${entry.name}/status`);
      const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
      return Math.round(kb / 1024);
    } catch {
      // gone, or not ours
    }
  }
  return NaN;
}

async function kvHome(root: string, name: string, kv: string): Promise<string> {
  const home = join(root, name);
  await Deno.mkdir(join(home, "conf"), { recursive: true });
  await Deno.writeTextFile(
    join(home, "conf", "settings.conf"),
    `storage = kv:${join(root, kv)}\nquery.maxQueued = 10000\nquery.maxResultsPerUser = 100000\n`,
  );
  return home;
}

function client(server: ServerProcess, token: string) {
  const headers = { Authorization: `Bearer ${token}` };
  const ok = async (res: Response) => {
    if (!res.ok) throw new Error(`${res.status}: ${await res.text()}`);
    return res;
  };
  return {
    async sync(script: string): Promise<void> {
      const res = await fetch(`${server.url}/API/v1.0/?scriptPath=/shared`, {
        method: "POST",
        headers: { ...headers, "Content-Type": "text/vnd.engine.script" },
        body: script,
      });
      await (await ok(res)).arrayBuffer();
    },
    async submit(script: string): Promise<string> {
      const res = await ok(
        await fetch(`${server.url}/API/v1.0/queries?scriptPath=/shared`, {
          method: "POST",
          headers: { ...headers, "Content-Type": "text/vnd.engine.script" },
          body: script,
        }),
      );
      return (await res.json()).queryId;
    },
    async state(id: string): Promise<string> {
      const res = await ok(await fetch(`${server.url}/API/v1.0/queries/${id}`, { headers }));
      return (await res.json()).state;
    },
    /** The whole result; returns its bytes. */
    async result(id: string): Promise<number> {
      const res = await fetch(`${server.url}/API/v1.0/queries/${id}/result`, { headers });
      if (res.status === 409) {
        await res.body?.cancel();
        return -1;
      }
      let bytes = 0;
      for await (const chunk of (await ok(res)).body!) bytes += chunk.length;
      return bytes;
    },
  };
}

async function measure(name: string, clients: (() => Promise<void>)[]): Promise<void> {
  const times: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, i) => {
      const once = clients[i % clients.length]!;
      while (performance.now() < end) {
        const start = performance.now();
        await once();
        times.push(performance.now() - start);
      }
    }),
  );
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  console.log(
    `${name.padEnd(36)} ${(times.length / SECONDS).toFixed(0).padStart(6)} req/s  p50 ${
      at(0.5).toFixed(2)
    } ms  p99 ${at(0.99).toFixed(2)} ms`,
  );
}

async function bigResult(root: string): Promise<void> {
  const homeA = await kvHome(root, "a", "big.kv");
  const homeB = await kvHome(root, "b", "big.kv");
  await using a = await startServerProcess(homeA);
  await using b = await startServerProcess(homeB);
  const token = a.firstToken!;
  const file = await Deno.open(join(homeA, "data", "shared", "big.log"), {
    write: true,
    create: true,
  });
  const encoder = new TextEncoder();
  for (let first = 0; first < ROWS; first += 100_000) {
    const parts: string[] = [];
    for (let i = first; i < Math.min(ROWS, first + 100_000); i++) {
      parts.push(`${i} host-17 GET /index.html 200 5120\n`);
    }
    await file.write(encoder.encode(parts.join("")));
  }
  file.close();
  const onA = client(a, token);
  const onB = client(b, token);
  const started = performance.now();
  const id = await onA.submit(
    "PARSE(pattern: '''INT:n LD:x EOL''', src: '/shared/big.log')",
  );
  while (await onB.state(id) !== "SUCCEEDED") await sleep(20);
  const stored = performance.now() - started;
  const readB = performance.now();
  const bytesB = await onB.result(id);
  const fromB = performance.now() - readB;
  const readA = performance.now();
  const bytesA = await onA.result(id);
  const fromA = performance.now() - readA;
  if (bytesA !== bytesB) throw new Error(`A served ${bytesA} bytes, B ${bytesB}`);
  const rate = (ms: number) => `${(ROWS / (ms / 1000) / 1e6).toFixed(2)} M rows/s`;
  console.log(`${ROWS} rows (${(bytesA / 1e6).toFixed(0)} MB of JSON):`);
  console.log(`  submit on A until B sees it SUCCEEDED  ${(stored / 1000).toFixed(1)} s`);
  console.log(
    `  read through B (from the KV)           ${(fromB / 1000).toFixed(1)} s, ${rate(fromB)}`,
  );
  console.log(
    `  read through A (its own store)         ${(fromA / 1000).toFixed(1)} s, ${rate(fromA)}`,
  );
  console.log(`  peak RSS: A ${peakRssMb(homeA)} MB, B ${peakRssMb(homeB)} MB`);
}

async function smallQueries(root: string): Promise<void> {
  const sync = (s: ReturnType<typeof client>) => () => s.sync(SMALL);
  const async = (s: ReturnType<typeof client>) => async () => {
    const id = await s.submit(SMALL);
    while (await s.result(id) < 0) await sleep(1);
  };
  {
    // The reference: one server on its files.
    await using f = await startServerProcess(join(root, "files"), [
      "--set",
      "query.maxQueued=10000",
      "--set",
      "query.maxResultsPerUser=100000",
    ]);
    const files = client(f, f.firstToken!);
    await measure("files, one server: sync", [sync(files)]);
    await measure("files, one server: async submit+result", [async(files)]);
  }
  const homes = [await kvHome(root, "c", "small.kv"), await kvHome(root, "d", "small.kv")];
  await using c = await startServerProcess(homes[0]!);
  const token = c.firstToken!;
  const one = client(c, token);
  await measure("kv, one server: sync", [sync(one)]);
  await measure("kv, one server: async submit+result", [async(one)]);
  await using d = await startServerProcess(homes[1]!);
  const two = [one, client(d, token)];
  await measure("kv, two servers: sync", two.map(sync));
  await measure("kv, two servers: async submit+result", two.map(async));
  const warnings = [...c.stderr, ...d.stderr].filter((l) => / (WARN|ERROR) /.test(l));
  if (warnings.length > 0) console.log(warnings.slice(0, 10).join("\n"));
}

const root = await Deno.makeTempDir({ prefix: "trawl-shared-bench-" });
try {
  console.log(`load: ${Deno.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  if (ROWS > 0) await bigResult(root); // --rows 0: the small queries alone
  await smallQueries(root);
  console.log(`load: ${Deno.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
} finally {
  await Deno.remove(root, { recursive: true });
}
