// deno-lint-ignore-file no-console
/**
 * Small queries through servers on one PostgreSQL (`storage = pg:`, admission as rows:
 * home/storage/pg_admission.ts), by hand, not in CI:
 *
 *   deno run -A bench/pg_queries_bench.ts [--seconds 5] [--concurrency 8] [--rounds 2] [--pin]
 *     [--max-running N]
 *
 * A trivial query (`VALUES((a: 1))`), `--concurrency` clients, through one server, then through
 * two servers on the same database with the clients spread over both: synchronous
 * (`POST /?scriptPath=`) and asynchronous (`POST /queries`, then its result asked until it is
 * there). Printed: req/s, p50, p99 of each, and the ratio two servers / one beside issue 25's
 * target (above 1: a second server adds, not subtracts). The one-server and two-server turns
 * alternate `--rounds` times on fresh databases so that the machine's other load falls on both
 * alike; the best turn of each is compared. The load (/proc/loadavg) before and after.
 * `query.maxRunning` is one cap across the servers (its default: the cores, 2 here): with fewer
 * slots than clients most queries queue and are handed a freed slot, by another server's commit
 * when there are two (`--max-running 8`: none queues).
 *
 * `--pin`: each server as a machine of one core (`taskset -a -p -c N`): the first server on CPU 0
 * (in both turns), the second on CPU 1. PostgreSQL and this client are not pinned (the database's
 * own machine, the clients'). Unpinned, the lone server also uses the second core (its collector
 * threads, the result store's work), so a second server adds less than a second machine would.
 * On this 2-core machine the clients and PostgreSQL share the cores with the servers either way.
 */

import { join } from "node:path";
import { type ServerProcess, startServerProcess } from "../tests/foundation/server_process.ts";
import { startPostgres } from "../tests/support/postgres.ts";
import { pinServer } from "./pin_server.ts";
import { sleep } from "../engine/util/sleep.ts";

function arg(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}

const SECONDS = arg("seconds", 5);
const CONCURRENCY = arg("concurrency", 8);
const ROUNDS = arg("rounds", 2);
const PIN = Deno.args.includes("--pin");
/** `query.maxRunning` of every server (across servers: one cap); 0: its default, the cores. */
const MAX_RUNNING = arg("max-running", 0);
const SMALL = "VALUES((a: 1))";
const loadavg = async () =>
  (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");

async function home(root: string, name: string, storage: string): Promise<string> {
  const dir = join(root, name);
  await Deno.mkdir(join(dir, "conf"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, "conf", "settings.conf"),
    `storage = ${storage}\nquery.maxQueued = 10000\nquery.maxResultsPerUser = 100000\n` +
      (MAX_RUNNING > 0 ? `query.maxRunning = ${MAX_RUNNING}\n` : ""),
  );
  return dir;
}

function client(server: ServerProcess, token: string) {
  const headers = { Authorization: `Bearer ${token}` };
  const ok = async (res: Response) => {
    if (!res.ok) throw new Error(`${res.status}: ${await res.text()}`);
    return res;
  };
  return {
    async sync(): Promise<void> {
      const res = await fetch(`${server.url}/API/v1.0/?scriptPath=/user`, {
        method: "POST",
        headers: { ...headers, "Content-Type": "text/vnd.engine.script" },
        body: SMALL,
      });
      await (await ok(res)).arrayBuffer();
    },
    async async(): Promise<void> {
      const res = await ok(
        await fetch(`${server.url}/API/v1.0/queries?scriptPath=/user`, {
          method: "POST",
          headers: { ...headers, "Content-Type": "text/vnd.engine.script" },
          body: SMALL,
        }),
      );
      const id = (await res.json()).queryId;
      for (;;) {
        const got = await fetch(`${server.url}/API/v1.0/queries/${id}/result`, { headers });
        if (got.status !== 409) {
          await (await ok(got)).arrayBuffer();
          return;
        }
        await got.body?.cancel();
        await sleep(1);
      }
    },
  };
}

interface Figure {
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
}

async function measure(clients: (() => Promise<void>)[]): Promise<Figure> {
  const times: number[] = [];
  // A second of warming (the servers' first queries load their code), not counted.
  const warm = performance.now() + 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, i) => {
      while (performance.now() < warm) await clients[i % clients.length]!();
    }),
  );
  const end = performance.now() + SECONDS * 1000;
  const started = performance.now();
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
  const elapsed = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { perSecond: times.length / elapsed, p50: at(0.5), p99: at(0.99) };
}

const show = (f: Figure) =>
  `${f.perSecond.toFixed(0).padStart(6)} req/s  p50 ${f.p50.toFixed(2).padStart(7)} ms  p99 ${
    f.p99.toFixed(2).padStart(7)
  } ms`;

type Kind = "sync" | "async";
const KINDS: readonly Kind[] = ["sync", "async"];

/** One turn: `servers` servers on a fresh database, each kind measured. */
async function turn(
  root: string,
  pg: Awaited<ReturnType<typeof startPostgres>>,
  servers: 1 | 2,
  round: number,
): Promise<Record<Kind, Figure>> {
  const storage = `pg:${await pg.newDatabase()}`;
  await using stack = new AsyncDisposableStack();
  const homes: string[] = [];
  const started: ServerProcess[] = [];
  for (let i = 0; i < servers; i++) {
    const dir = await home(root, `r${round}-${servers}-${i}`, storage);
    homes.push(dir);
    started.push(stack.use(await startServerProcess(dir)));
    if (PIN) await pinServer(dir, i);
  }
  const token = started[0]!.firstToken!;
  const clients = started.map((s) => client(s, token));
  const out = {} as Record<Kind, Figure>;
  for (const kind of KINDS) {
    out[kind] = await measure(clients.map((c) => () => c[kind]()));
    console.log(`  round ${round + 1}, ${servers} server(s), ${kind.padEnd(5)} ${show(out[kind])}`);
  }
  const warnings = started.flatMap((s) => s.stderr).filter((l) => / (WARN|ERROR) /.test(l));
  if (warnings.length > 0) console.log(warnings.slice(0, 10).join("\n"));
  return out;
}

const root = await Deno.makeTempDir({ prefix: "trawl-pgq-bench-" });
try {
  await using pg = await startPostgres();
  console.log(`load before: ${await loadavg()}`);
  console.log(
    `${CONCURRENCY} clients, ${SECONDS} s a measure, ${ROUNDS} round(s), query.maxRunning ${
      MAX_RUNNING > 0 ? MAX_RUNNING : `default (${navigator.hardwareConcurrency})`
    }, ${PIN ? "pinned: server 1 on CPU 0, server 2 on CPU 1" : "unpinned"}`,
  );
  const best: Record<1 | 2, Partial<Record<Kind, Figure>>> = { 1: {}, 2: {} };
  for (let round = 0; round < ROUNDS; round++) {
    for (const servers of [1, 2] as const) {
      const got = await turn(root, pg, servers, round);
      for (const kind of KINDS) {
        const was = best[servers][kind];
        if (!was || got[kind].perSecond > was.perSecond) best[servers][kind] = got[kind];
      }
    }
  }
  console.log(`best of ${ROUNDS} (${PIN ? "pinned" : "unpinned"}):`);
  for (const kind of KINDS) {
    const one = best[1][kind]!, two = best[2][kind]!;
    console.log(`  ${kind.padEnd(5)} 1 server  ${show(one)}`);
    console.log(`  ${kind.padEnd(5)} 2 servers ${show(two)}`);
    const ratio = two.perSecond / one.perSecond;
    console.log(
      `  ${kind.padEnd(5)} 2 / 1 = ${ratio.toFixed(2)}  (target > 1: ${
        ratio > 1 ? "met" : "NOT met"
      })`,
    );
  }
  console.log(`load after: ${await loadavg()}`);
} finally {
  await Deno.remove(root, { recursive: true });
}
