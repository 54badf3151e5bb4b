/**
 * Trawl against SQLite (node:sqlite): the same seeded data (5 000 rows with nulls, addresses
 * as text for Trawl and as integers for SQLite, timestamps) and the same questions, asked in
 * both languages; the answers must be equal, row for row.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { engineHome } from "./support/engine_home.ts";
import { IpAddr, Timestamp, type Value } from "../engine/values/values.ts";
import { formatIp } from "../engine/values/ip.ts";
import { seededRandom } from "./support/seeded_random.ts";

const ROWS = 5000;
const HOSTS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];
const USERS = ["ann", "bob", "cid", "dee", "eve", "abe", "amy", "bea"];
const STATUSES = [200, 200, 200, 301, 404, 500];
const BASE = Date.UTC(2024, 4, 1);

interface Event {
  id: number;
  host: string | null;
  user: string;
  status: number | null;
  bytes: number | null;
  ip: number;
  ts: number | null;
}

function generate(): Event[] {
  const r = seededRandom(20240501);
  const pick = <T>(list: readonly T[]) => list[Math.floor(r() * list.length)]!;
  return Array.from({ length: ROWS }, (_, id) => ({
    id,
    host: r() < 0.1 ? null : pick(HOSTS),
    user: pick(USERS),
    status: r() < 0.05 ? null : pick(STATUSES),
    bytes: r() < 0.1 ? null : Math.floor(r() * 100_000),
    // 10.0-3.x.y: few enough distinct /24 networks to group.
    ip: (10 << 24 >>> 0) + (Math.floor(r() * 4) << 16) + (Math.floor(r() * 6) << 8) +
      Math.floor(r() * 40),
    ts: r() < 0.03 ? null : BASE + Math.floor(r() * 3 * 86_400_000),
  }));
}

function ipText(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

/** Trawl values as plain ones: timestamps in ms, addresses as text. */
function plain(v: Value): unknown {
  if (v instanceof Timestamp) return v.ms;
  if (v instanceof IpAddr) return formatIp(v);
  return v;
}

interface Case {
  readonly name: string;
  readonly trawl: string;
  readonly sql: string;
  /** Columns SQLite gives as integer addresses, shown as text. */
  readonly ipColumns?: readonly string[];
}

const SRC = "READ_JSON(src: '/shared/events.jsonl')";
const TS = "TIMESTAMP(ts)";

const CASES: readonly Case[] = [
  {
    name: "an equality filter",
    trawl: `${SRC} | filter(status = 500) | select(id, host) | sort(id)`,
    sql: "SELECT id, host FROM events WHERE status = 500 ORDER BY id",
  },
  {
    name: "a conjunction with is not null, counted",
    trawl: `${SRC} | filter(bytes > 50000 and host is not null) | select(count(*) as n)`,
    sql: "SELECT count(*) AS n FROM events WHERE bytes > 50000 AND host IS NOT NULL",
  },
  {
    name: "a group with several aggregates",
    trawl: `${SRC} | select(host, count(*) as n, count(bytes) as nb, sum(bytes) as s,
              min(bytes) as lo, max(bytes) as hi, avg(bytes) as mean) | group(host) | sort(host)`,
    sql: `SELECT host, count(*) AS n, count(bytes) AS nb, sum(bytes) AS s, min(bytes) AS lo,
            max(bytes) AS hi, avg(bytes) AS mean FROM events GROUP BY host ORDER BY host NULLS LAST`,
  },
  {
    name: "a group on two keys",
    trawl:
      `${SRC} | select(host, status, count(*) as n) | group(host, status) | sort(host, status)`,
    sql: `SELECT host, status, count(*) AS n FROM events GROUP BY host, status
            ORDER BY host NULLS LAST, status NULLS LAST`,
  },
  {
    name: "a descending sort with nulls last and a limit",
    trawl: `${SRC} | sort(bytes desc, id) | limit(40) | select(id, bytes)`,
    sql: "SELECT id, bytes FROM events ORDER BY bytes DESC NULLS LAST, id LIMIT 40",
  },
  {
    name: "an ascending sort with nulls last, a limit and an offset",
    trawl:
      `${SRC} | filter(id < 1500) | sort(status, id desc) | limit(30, 1300) | select(id, status)`,
    sql: `SELECT id, status FROM events WHERE id < 1500 ORDER BY status NULLS LAST, id DESC
            LIMIT 30 OFFSET 1300`,
  },
  {
    name: "an inner join, grouped",
    trawl: `${SRC} | join(READ_JSON(src: '/shared/teams.jsonl') on left.host = right.host)
              | select(team, count(*) as n, sum(bytes) as s) | group(team) | sort(team)`,
    sql: `SELECT team, count(*) AS n, sum(bytes) AS s FROM events e JOIN teams t ON e.host = t.host
            GROUP BY team ORDER BY team`,
  },
  {
    name: "a left join keeps unmatched rows with nulls",
    trawl: `${SRC} | leftjoin(READ_JSON(src: '/shared/teams.jsonl') on left.host = right.host)
              | filter(team is null) | select(host, count(*) as n) | group(host) | sort(host)`,
    sql: `SELECT e.host, count(*) AS n FROM events e LEFT JOIN teams t ON e.host = t.host
            WHERE t.team IS NULL GROUP BY e.host ORDER BY e.host NULLS LAST`,
  },
  {
    name: "an address in a network",
    trawl:
      `${SRC} | filter(IP(ip) in 10.1.0.0/16) | select(count(*) as n, count_distinct(ip) as d)`,
    sql: `SELECT count(*) AS n, count(DISTINCT ip) AS d FROM events
            WHERE ip BETWEEN ${(10 << 24) + (1 << 16)} AND ${(10 << 24) + (1 << 16) + 65535}`,
  },
  {
    name: "addresses truncated to /24 networks, grouped",
    trawl: `${SRC} | select(ip_trunc(IP(ip), 24) as net, count(*) as n) | group(net) | sort(net)`,
    sql: "SELECT (ip / 256) * 256 AS net, count(*) AS n FROM events GROUP BY net ORDER BY net",
    ipColumns: ["net"],
  },
  {
    name: "timestamps truncated to hours, grouped",
    trawl: `${SRC} | select(time_trunc(${TS}, 1 hour) as h, count(*) as n, max(bytes) as hi)
              | group(h) | sort(h)`,
    sql: `SELECT (ts / 3600000) * 3600000 AS h, count(*) AS n, max(bytes) AS hi FROM events
            GROUP BY h ORDER BY h NULLS LAST`,
  },
  {
    name: "the hour of the day, grouped",
    trawl: `${SRC} | filter(ts is not null) | select(hour(${TS}) as hr, sum(bytes) as s) | group(hr)
              | sort(hr)`,
    sql: `SELECT (ts / 3600000) % 24 AS hr, sum(bytes) AS s FROM events WHERE ts IS NOT NULL
            GROUP BY hr ORDER BY hr`,
  },
  {
    name: "a time range filter",
    trawl: `${SRC} | filter(${TS} >= T('2024-05-02 00:00:00') and ${TS} < T('2024-05-02 12:00:00'))
              | select(count(*) as n)`,
    sql: `SELECT count(*) AS n FROM events WHERE ts >= ${BASE + 86_400_000}
            AND ts < ${BASE + 86_400_000 + 43_200_000}`,
  },
  {
    name: "filter_out and count_distinct",
    trawl:
      `${SRC} | filter_out(status = 200) | select(count_distinct(host) as hosts, count(*) as n)`,
    sql: `SELECT count(DISTINCT host) AS hosts, count(*) AS n FROM events
            WHERE NOT (status = 200) OR status IS NULL`,
  },
  {
    name: "like on strings",
    trawl:
      `${SRC} | filter(user like 'a%') | select(user, count(*) as n) | group(user) | sort(user)`,
    sql: "SELECT user, count(*) AS n FROM events WHERE user LIKE 'a%' GROUP BY user ORDER BY user",
  },
  {
    name: "coalesce inside a sum, per status",
    trawl: `${SRC} | select(status, sum(coalesce(bytes, 0)) as s, count(*) as n) | group(status)
              | sort(status)`,
    sql: `SELECT status, sum(coalesce(bytes, 0)) AS s, count(*) AS n FROM events GROUP BY status
            ORDER BY status NULLS LAST`,
  },
  {
    name: "in a list with is null",
    trawl:
      `${SRC} | filter(status in (404, 500) and bytes is null) | select(id, status) | sort(id)`,
    sql: "SELECT id, status FROM events WHERE status IN (404, 500) AND bytes IS NULL ORDER BY id",
  },
  {
    name: "an expression of aggregates",
    trawl: `${SRC} | select(user, sum(bytes) / count(bytes) as per, count_distinct(ip) as ips)
              | group(user) | sort(user)`,
    sql: `SELECT user, CAST(sum(bytes) AS REAL) / count(bytes) AS per, count(DISTINCT ip) AS ips
            FROM events GROUP BY user ORDER BY user`,
  },
];

function sameNumber(a: unknown, b: unknown): boolean {
  if (typeof a !== "number" || typeof b !== "number") return false;
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

function assertSameRows(name: string, trawl: unknown[][], sql: unknown[][]): void {
  assert.equal(trawl.length, sql.length, `${name}: row counts differ`);
  trawl.forEach((row, i) => {
    assert.equal(row.length, sql[i]!.length, `${name}: column counts differ`);
    row.forEach((v, j) => {
      if (v === sql[i]![j] || sameNumber(v, sql[i]![j])) return;
      assert.fail(
        `${name}: row ${i} column ${j}: Trawl ${JSON.stringify(v)}, SQLite ${
          JSON.stringify(sql[i]![j])
        }\n` +
          `Trawl row ${JSON.stringify(row)}\nSQLite row ${JSON.stringify(sql[i])}`,
      );
    });
  });
}

Deno.test("Trawl and SQLite give the same answers to the same questions", async () => {
  const events = generate();
  await using home = await engineHome();
  await home.write(
    "/shared/events.jsonl",
    events.map((e) =>
      JSON.stringify({
        ...e,
        ip: ipText(e.ip),
        ts: e.ts === null ? null : new Date(e.ts).toISOString(),
      })
    ).join("\n") + "\n",
  );
  // Two hosts have no team: left joins see them.
  const teams = HOSTS.slice(0, 6).map((host, i) => ({ host, team: i % 2 ? "blue" : "red" }));
  await home.write("/shared/teams.jsonl", teams.map((t) => JSON.stringify(t)).join("\n"));

  const db = new DatabaseSync(":memory:");
  db.exec(`CREATE TABLE events (id INTEGER, host TEXT, user TEXT, status INTEGER, bytes INTEGER,
             ip INTEGER, ts INTEGER);
           CREATE TABLE teams (host TEXT, team TEXT);`);
  const insert = db.prepare("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (const e of events) insert.run(e.id, e.host, e.user, e.status, e.bytes, e.ip, e.ts);
  const insertTeam = db.prepare("INSERT INTO teams VALUES (?, ?)");
  for (const t of teams) insertTeam.run(t.host, t.team);

  for (const c of CASES) {
    const result = await home.run(c.trawl);
    const columns = result.schema.map((f) => f.name);
    const trawlRows = result.rows.map((r) => columns.map((k) => plain(r[k]!)));
    const sqlRows = (db.prepare(c.sql).all() as Record<string, unknown>[]).map((r) =>
      Object.entries(r).map((
        [k, v],
      ) => (c.ipColumns?.includes(k) && typeof v === "number" ? ipText(v) : v))
    );
    assert.ok(sqlRows.length > 0, `${c.name}: the question has an answer`);
    assertSameRows(c.name, trawlRows, sqlRows);
  }
  db.close();
});
