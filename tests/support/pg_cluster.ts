/**
 * Real `main.ts serve` processes spreading scans over one PostgreSQL (`cluster.distributeBytes`
 * low): the cluster, the logs they share and the test's look at the shares table, for the tests
 * of distributed scans (tests/storage/pg_distributed_test.ts, pg_segments_test.ts,
 * pg_golden_cluster_test.ts).
 *
 *   await using pg = await startPostgres();
 *   await withCluster(pg, { lines: 150_000, answerBytes: "256 KiB" }, async (c) => {
 *     const id = await submit(c.a, c.token, script);
 *     await untilShares(c.db, "no share ran", (rows) => rows.some((r) => r.state === "running"));
 *   });
 */

import { join } from "node:path";
import { type ServerProcess, startServerProcess } from "../foundation/server_process.ts";
import { defineLogs } from "./server_api.ts";
import type { Postgres } from "./postgres.ts";
import { stateHome } from "./shared_state.ts";
import { seededRandom } from "./seeded_random.ts";
import { openPgStorage, type PgStorage } from "../../home/storage/pg_storage.ts";
import { sleep } from "../../engine/util/sleep.ts";

/** The records `writeLog` writes: `10.0.1.7 404 31337 /p/12`. */
export const PATTERN = `IPADDR:ip ' ' INT:status ' ' LONG:bytes ' ' NSPACE:path`;

/**
 * `lines` records of about 40 bytes each (statuses 200, 200, 404, 500 equally likely, from
 * `seed`); with `junk`, a line that is not a record after every 40,000th.
 */
export async function writeLog(
  path: string,
  lines: number,
  seed: number,
  junk = false,
): Promise<void> {
  const rnd = seededRandom(seed);
  const parts: string[] = [];
  for (let i = 0; i < lines; i++) {
    const status = [200, 200, 404, 500][Math.floor(rnd() * 4)];
    const ip = `10.0.${Math.floor(rnd() * 4)}.${Math.floor(rnd() * 50)}`;
    parts.push(`${ip} ${status} ${Math.floor(rnd() * 50000)} /p/${i % 97}\n`);
    if (junk && i % 40_000 === 7) parts.push("not a record\n");
  }
  await Deno.writeTextFile(path, parts.join(""));
}

/** A row of `trawl_shares` (home/storage/pg_shares.ts), as the tests read it. */
export interface ShareRow {
  run: string;
  share: number;
  coordinator: string;
  state: string;
  attempt: number;
  holder: string | null;
  stopped_at: Date | null;
  segment: string | null;
  pieces: number | null;
  error: string | null;
}

/** Every row of the shares table, in the order the runs were queued. */
export function shareRows(db: PgStorage): Promise<ShareRow[]> {
  return db.sql<ShareRow[]>`
    SELECT run, share, coordinator, state, attempt, holder, stopped_at, segment, pieces, error
    FROM trawl_shares ORDER BY created, run, share`;
}

/**
 * Waits until `test` holds for what `look` answers; answers that. The bound (two minutes) only
 * tells a wait that never ends, naming `what` and the last look.
 */
export async function until<T>(
  what: string,
  look: () => Promise<T>,
  test: (seen: T) => boolean,
): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const seen = await look();
    if (test(seen)) return seen;
    if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(seen)}`);
    await sleep(10);
  }
}

/** `until` over the rows of the shares table. */
export function untilShares(
  db: PgStorage,
  what: string,
  test: (rows: ShareRow[]) => boolean,
): Promise<ShareRow[]> {
  return until(what, () => shareRows(db), test);
}

/** The pid of the server process whose home is `home` (a process the test started). */
export async function pidOf(home: string): Promise<number> {
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const args = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    const parts = args.split("\0");
    const at = parts.indexOf("--home");
    if (at >= 0 && parts[at + 1] === home && parts.includes("serve")) return Number(entry.name);
  }
  throw new Error(`no server process with home ${home}`);
}

/** The name the shares table gives `server` (`holder`, `coordinator`), from its log. */
export async function shareName(server: ServerProcess): Promise<string> {
  const said = /distributed scans: this server is (\S+) in the shares table/;
  const lines = await until(
    "the server never said its name in the shares table",
    () => Promise.resolve([...server.stderr, ...server.stdout]),
    (lines) => lines.some((l) => said.test(l)),
  );
  return said.exec(lines.find((l) => said.test(l))!)![1]!;
}

/**
 * Pauses process `pid` (SIGSTOP) and waits until it is stopped and its connections to the
 * database (application_name `trawl <pid>`, home/storage/pg_storage.ts) run no statement but
 * those waiting on it (`wait_event_type` Client: sending it rows, or reading the rest of its
 * request, whose end, Sync, commits): what it sent before the stop has been done, or commits only
 * if it is let go, and it sends nothing more.
 */
export async function pause(db: PgStorage, pid: number): Promise<void> {
  // Its connections are told by their name (a server spreading scans always listens on one).
  const [{ n }] = await db.sql<[{ n: number }]>`
    SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${`trawl ${pid}`}`;
  if (n === 0) throw new Error(`no connection of process ${pid} is named 'trawl ${pid}'`);
  Deno.kill(pid, "SIGSTOP");
  await until(
    `process ${pid} did not stop`,
    async () => (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ")[1]?.[0],
    (state) => state === "T" || state === "t",
  );
  await until(
    `a statement of process ${pid} still runs in the database`,
    () =>
      db.sql<{ state: string | null; wait: string | null }[]>`
        SELECT state, wait_event_type AS wait FROM pg_stat_activity
        WHERE application_name = ${`trawl ${pid}`} AND state = 'active'
          AND wait_event_type IS DISTINCT FROM 'Client'`,
    (rows) => rows.length === 0,
  );
}

/** Waits until process `pid` has no connection left to the database (it died, they closed). */
export async function untilDisconnected(db: PgStorage, pid: number): Promise<void> {
  await until(
    `process ${pid} still has connections to the database`,
    () =>
      db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${`trawl ${pid}`}`,
    (rows) => rows[0]!.n === 0,
  );
}

export interface ClusterOptions {
  /** Records in each of the two logs, `a.log` and `b.log`. */
  readonly lines: number;
  /** A share answering more than this writes its answer as a segment (`cluster.shareAnswerBytes`). */
  readonly answerBytes: string;
  /** Servers spreading scans: two by default. */
  readonly size?: number;
  /** Lines that are not records among the logs' (`writeLog`'s `junk`). */
  readonly junk?: boolean;
  /** A lone server too, on a database of its own, not spreading: the answers to compare with. */
  readonly solo?: boolean;
}

/** Servers spreading scans on a fresh database, the logs folder they share, a look at it. */
export interface Cluster {
  readonly a: ServerProcess;
  readonly b: ServerProcess;
  /** Every server spreading scans: `a`, `b`, and more when asked for. */
  readonly spread: readonly ServerProcess[];
  /** Their homes, in the same order. */
  readonly homes: readonly string[];
  /** The lone server, when asked for (its token is its own: `solo.firstToken`). */
  readonly solo: ServerProcess | undefined;
  /** The admin token of `a`, which every spreading server takes. */
  readonly token: string;
  readonly logs: string;
  readonly root: string;
  readonly url: string;
  /** More servers the test starts, killed with the others. */
  readonly more: ServerProcess[];
  /** The test's own connection to the database (closed after, whatever it is then). */
  db: PgStorage;
}

/**
 * A cluster given to `body` (query.workers=1, cluster.lease=2 s, the FILE datastore `logs` over
 * the logs folder defined on `a` and on the lone server); every server is killed, the test's
 * connection closed and the folder removed after, whatever `body` did.
 */
export async function withCluster(
  pg: Postgres,
  options: ClusterOptions,
  body: (c: Cluster) => Promise<void>,
): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "trawl-pgcluster-" });
  const url = await pg.newDatabase();
  const servers: ServerProcess[] = [];
  let db: PgStorage | undefined;
  try {
    db = await openPgStorage(url, { connections: 1 });
    const logs = join(root, "logs");
    await Deno.mkdir(logs);
    await writeLog(join(logs, "a.log"), options.lines, 1, options.junk);
    await writeLog(join(logs, "b.log"), options.lines, 2, options.junk);
    const args = [
      "query.workers=1",
      "cluster.distributeBytes=1 MiB",
      "cluster.lease=2 s",
      `cluster.shareAnswerBytes=${options.answerBytes}`,
    ].flatMap((s) => ["--set", s]);
    const homes: string[] = [];
    for (const name of ["a", "b", "c", "d"].slice(0, options.size ?? 2)) {
      homes.push(await stateHome(root, name, `pg:${url}`));
      servers.push(await startServerProcess(homes.at(-1)!, args));
    }
    const spread = [...servers];
    const [a, b] = spread as [ServerProcess, ServerProcess];
    const token = a.firstToken!;
    await defineLogs(a, token, logs);
    let solo: ServerProcess | undefined;
    if (options.solo) {
      solo = await startServerProcess(
        await stateHome(root, "solo", `pg:${await pg.newDatabase()}`),
        ["--set", "query.workers=1"],
      );
      servers.push(solo);
      await defineLogs(solo, solo.firstToken!, logs);
    }
    const cluster: Cluster = {
      a,
      b,
      spread,
      homes,
      solo,
      token,
      logs,
      root,
      url,
      more: servers,
      db,
    };
    try {
      await body(cluster);
    } catch (e) {
      // What the servers said last: a failure seen only on a busy machine is read from this.
      for (const [i, s] of servers.entries()) {
        const said = [...s.stdout, ...s.stderr].slice(-40);
        // deno-lint-ignore no-console
        if (said.length > 0) console.error(`--- server ${i}, its last lines:\n${said.join("\n")}`);
      }
      throw e;
    } finally {
      db = cluster.db;
    }
  } finally {
    await db?.close();
    for (const s of servers) await s.stop("SIGKILL").catch(() => {});
    await Deno.remove(root, { recursive: true });
  }
}
