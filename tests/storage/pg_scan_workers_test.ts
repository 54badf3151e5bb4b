/**
 * Scan workers of a server on PostgreSQL (`storage = pg:<url>`, main.ts): each worker opens the
 * database (actors/worker_tree.ts, a pool of its own) and reads the files put through the API
 * from it. A real server with `query.workers=2` answers as one with a single worker, its scans
 * cut into two shares on the workers; once it stopped, no connection of it is left.
 */

import assert from "node:assert/strict";
import postgres from "postgres";
import type { RunningServer } from "../../main.ts";
import { sharedPostgres } from "../support/postgres.ts";
import { bigLog, countedServer, stateHome, stopServer } from "../support/shared_state.ts";

const pg = await sharedPostgres();
const GROUPED =
  "PARSE(pattern: '''INT:n ' ' LD:host ' ' WORD:method LD EOL''', src: '/users/admin/big.log')" +
  " | filter(n % 7 = 0) | select(method, count(*) as hits, sum(n) as total) | group(method)";

Deno.test("scan workers read a PostgreSQL server's tree as one thread does, and close their connections", async () => {
  const url = await pg.newDatabase();
  const root = await Deno.makeTempDir({ prefix: "trawl-pgworkers-" });
  const servers: RunningServer[] = [];
  try {
    const two = await countedServer(await stateHome(root, "two", `pg:${url}`), 2);
    servers.push(two.server);
    const one = await countedServer(await stateHome(root, "one", `pg:${url}`), 1);
    servers.push(one.server);
    assert.ok(two.server.deps.scanWorkers, "a PostgreSQL server has scan workers");
    const token = two.token!;
    const call = (s: RunningServer, path: string, init: RequestInit = {}) =>
      fetch(`${s.url}API/v1.0${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${token}`, ...init.headers },
      });
    const put = await call(two.server, "/resources/user/big.log", {
      method: "PUT",
      body: bigLog(),
    });
    assert.equal(put.status, 201, await put.text());
    const run = async (s: RunningServer) => {
      const res = await call(s, "/?scriptPath=/user", {
        method: "POST",
        headers: { "Content-Type": "text/plain" },
        body: GROUPED,
      });
      const text = await res.text();
      assert.equal(res.status, 200, text);
      return JSON.parse(text);
    };
    const before = two.shares.started;
    const parallel = await run(two.server);
    assert.equal(two.shares.started - before, 2, "two shares on workers");
    assert.deepEqual(parallel, [
      { method: "POST", hits: 18096, total: 3_438_194_760 },
      { method: "GET", hits: 36190, total: 6_876_009_525 },
    ]);
    assert.deepEqual(parallel, await run(one.server));

    // Once both servers stopped (their workers with them), no session is left on the database.
    for (const s of servers.splice(0)) await stopServer(s);
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      let left = -1;
      for (let i = 0; i < 50; i++) {
        const [row] = await sql<[{ n: number }]>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()`;
        left = row.n;
        if (left === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(left, 0, "sessions left on the database");
    } finally {
      await sql.end();
    }
  } finally {
    for (const s of servers) await stopServer(s).catch(() => {});
    await Deno.remove(root, { recursive: true });
  }
});
