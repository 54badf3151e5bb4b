/**
 * A connection that dies while it starts, at the array types' query the PostgreSQL client sends
 * first on every new connection (vendor/README.md). A database restarted under a busy server does
 * this: its sessions are ended, some of them mid-start, and the next connection is refused until
 * it is up. In the client as published, the types' query was left in flight across the reconnect:
 * its rejection reached no one (an unhandled rejection, which ends the process), and the old
 * session's error failed the first statement of the new one. A TCP hop on loopback in front of a
 * real PostgreSQL cuts the connection at that query.
 */

import assert from "node:assert/strict";
import postgres from "postgres";
import { sharedPostgres } from "../support/postgres.ts";
import { pgFatal, startHop } from "../support/tcp_hop.ts";

const pg = await sharedPostgres();

/** The database's URL, through the hop's port. */
function through(url: string, port: number): string {
  const u = new URL(url);
  u.port = String(port);
  return u.href;
}

const TYPES_QUERY = "typcategory";

Deno.test("a session ended by the database while the connection starts: the statement runs on the next connection, and nothing is left unhandled", async () => {
  const url = await pg.newDatabase();
  const target = { hostname: "127.0.0.1", port: pg.port };
  const hop = startHop({
    target,
    cutAt: TYPES_QUERY,
    answer: pgFatal("57P01", "terminating connection due to administrator command"),
  });
  const sql = postgres(through(url, hop.port), { max: 1, onnotice: () => {} });
  try {
    const rows = await sql`SELECT 41 + 1 AS answer`;
    assert.equal(rows[0]?.answer, 42);
    assert.ok(hop.cut, "the connection was not cut: the test proves nothing");
    assert.equal(hop.accepted, 2, "the statement ran on a second connection");
    // The connection works on.
    assert.equal((await sql`SELECT 'on' AS still`)[0]?.still, "on");
  } finally {
    await sql.end({ timeout: 1 });
    hop.close();
  }
});

Deno.test("a connection cut while it starts, the database then refusing: the statement fails as a connection error, nothing is left unhandled, and the pool connects once the database is back", async () => {
  const url = await pg.newDatabase();
  const target = { hostname: "127.0.0.1", port: pg.port };
  const hop = startHop({ target, cutAt: TYPES_QUERY, refuseAfterCut: true });
  const sql = postgres(through(url, hop.port), { max: 1, onnotice: () => {}, backoff: () => 0 });
  let back: ReturnType<typeof startHop> | null = null;
  try {
    const e = await sql`SELECT 1`.then(() => null, (e: unknown) => e as Error & { code?: string });
    assert.ok(hop.cut, "the connection was not cut: the test proves nothing");
    assert.ok(e, "the statement ran though the database refused");
    assert.ok(
      ["ECONNREFUSED", "ECONNRESET", "CONNECTION_CLOSED"].includes(e.code ?? ""),
      `${e.code}: ${e.message}`,
    );
    // The database is back on the same address: the next statement connects and runs.
    back = startHop({ target, port: hop.port });
    assert.equal((await sql`SELECT 7 AS seven`)[0]?.seven, 7);
  } finally {
    await sql.end({ timeout: 1 });
    hop.close();
    back?.close();
  }
});
