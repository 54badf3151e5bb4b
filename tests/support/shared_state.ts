/**
 * The shared state of several real `main.ts serve` processes, on each backend that can share it:
 * a Deno KV file (`kv:`) and a PostgreSQL database (`pg:`, on the test process's PostgreSQL from
 * tests/support/postgres.ts). The shared-state tests run once per backend, mostly on two servers
 * (`twoServers`: real processes); the scan-worker tests start theirs in this process
 * (`countedServer`, its workers' shares counted):
 *
 *   eachBackend("servers share their users", async (backend) => {
 *     await using servers = await twoServers(backend, "trawl-kv-");
 *     const { a, b, homeA } = servers; // two `main.ts serve` processes on one state
 *   });
 */

import { join } from "node:path";
import { sharedPostgres } from "./postgres.ts";
import { type ServerProcess, startServerProcess } from "../foundation/server_process.ts";
import { type RunningServer, startServer } from "../../main.ts";
import { createLogger } from "../../home/log.ts";
import type { ShareMessage } from "../../engine/contracts/scan_workers.ts";

export type Backend = "kv" | "pg";
export const BACKENDS: readonly Backend[] = ["kv", "pg"];

/**
 * The `storage` setting of one fresh shared state: a KV file in `root`, or a database of its
 * own on this process's PostgreSQL.
 */
export async function sharedStorage(backend: Backend, root: string): Promise<string> {
  if (backend === "kv") return `kv:${join(root, "state.kv")}`;
  const pg = await sharedPostgres();
  return `pg:${await pg.newDatabase()}`;
}

/** A home `root/name` whose settings.conf keeps the state in `storage` (a storage setting). */
export async function stateHome(root: string, name: string, storage: string): Promise<string> {
  const dir = join(root, name);
  await Deno.mkdir(join(dir, "conf"), { recursive: true });
  await Deno.writeTextFile(join(dir, "conf", "settings.conf"), `storage = ${storage}\n`);
  return dir;
}

/**
 * Registers the test once per backend, named `<name> [kv]` and `<name> [pg]`. The file's
 * PostgreSQL is started here, at registration (the file's top level), so that no test's
 * sanitizer counts it as its own.
 */
export async function eachBackend(
  name: string,
  body: (backend: Backend) => Promise<void>,
): Promise<void> {
  await sharedPostgres();
  for (const backend of BACKENDS) Deno.test(`${name} [${backend}]`, () => body(backend));
}

/** Two `main.ts serve` processes on one fresh shared state, each with its own home. */
export interface TwoServers extends AsyncDisposable {
  /** A temp folder holding the homes (`a`, `b`); a test may put files there too. */
  readonly root: string;
  readonly homeA: string;
  readonly homeB: string;
  readonly a: ServerProcess;
  readonly b: ServerProcess;
}

/**
 * Starts server `a` then `b` on a fresh shared state of `backend` (in a temp folder named
 * `prefix...`): `a` creates the admin (its `firstToken`). At dispose both stop (`b` first) and
 * the folder is removed.
 */
export async function twoServers(backend: Backend, prefix: string): Promise<TwoServers> {
  const root = await Deno.makeTempDir({ prefix });
  await using stack = new AsyncDisposableStack();
  stack.defer(() => Deno.remove(root, { recursive: true }));
  const state = await sharedStorage(backend, root);
  const homeA = await stateHome(root, "a", state);
  const homeB = await stateHome(root, "b", state);
  const a = stack.use(await startServerProcess(homeA));
  const b = stack.use(await startServerProcess(homeB));
  const owned = stack.move();
  return { root, homeA, homeB, a, b, [Symbol.asyncDispose]: () => owned.disposeAsync() };
}

const TOKEN_LINE = /^trawl_[A-Za-z0-9_-]{43}$/;

/** A server of this process (main.ts's `startServer`) whose scan workers' shares are counted. */
export interface CountedServer {
  readonly server: RunningServer;
  /** Shares started on the server's workers, and their last messages by kind. */
  readonly shares: { started: number; ends: Record<string, number>; failures: string[] };
  /** The admin token printed on first start, if this start printed one. */
  readonly token?: string | undefined;
}

/**
 * A server started as main.ts starts it, on `home` (see stateHome), with `workers` scan workers
 * (niced 0, as tests/api/server.ts: niced workers starve beside other test files on a busy
 * machine); its ERROR lines go to the test's stderr. Stopped by stopServer.
 */
export async function countedServer(home: string, workers: number): Promise<CountedServer> {
  const lines: string[] = [];
  const server = await startServer({
    home,
    overrides: {
      "wgui.host": "127.0.0.1",
      "wgui.port": "0",
      "server.timeZone": "UTC",
      "query.workers": String(workers),
      "query.workerNice": "0",
    },
    out: (line) => lines.push(line),
    log: createLogger((line) => {
      // deno-lint-ignore no-console
      if (line.includes(" ERROR ")) console.error(line);
    }),
  });
  const shares = { started: 0, ends: {} as Record<string, number>, failures: [] as string[] };
  const pool = server.deps.scanWorkers;
  if (pool) {
    // Counted where the engine starts a share: the workers are the pool's real ones.
    const start = pool.start.bind(pool);
    pool.start = (task, listen) => {
      shares.started++;
      return start(task, (m: ShareMessage) => {
        if (m.kind === "groups" || m.kind === "done" || m.kind === "failed") {
          shares.ends[m.kind] = (shares.ends[m.kind] ?? 0) + 1;
        }
        if (m.kind === "failed") shares.failures.push(JSON.stringify(m));
        listen(m);
      });
    };
  }
  return { server, shares, token: lines.find((l) => TOKEN_LINE.test(l)) };
}

/** Stops a server of countedServer and what it started (its workers with it). */
export async function stopServer(server: RunningServer): Promise<void> {
  await server.shutdown();
  await server.finished;
  server.deps.supervisor?.stop();
  server.deps.lifetimes.pacer.stop();
}

/** About 14 MiB: more than the 8 MiB a worker's share takes at least, so it is cut in two. */
export function bigLog(lines = 380_000): string {
  const parts: string[] = [];
  for (let i = 0; i < lines; i++) {
    parts.push(`${i} host-${i % 13} ${i % 3 === 0 ? "POST" : "GET"} /index.html 200 5120\n`);
  }
  return parts.join("");
}
