/**
 * Trawl's `window(...)` and `percentile`/`median` against DuckDB: the same seeded events (with
 * nulls, ties in the order keys, null group keys), the same questions in both languages; the
 * answers must be equal row for row. Trawl answers with its scans in the query's thread and on
 * 3 scan workers (each file cut into shares however small): the same rows each time.
 */

import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import { engineHome } from "./support/engine_home.ts";
import { seededRandom } from "./support/seeded_random.ts";
import { createScanWorkers } from "../actors/scan_workers.ts";
import type { Value } from "../engine/values/values.ts";

const ROWS = 3000;
const USERS = ["ann", "bob", "cid", "dee", "eve", "fay", "gus"];
const HOSTS = ["alpha", "beta", "gamma", "delta"];

interface Event {
  id: number;
  user: string;
  host: string | null;
  status: number | null;
  bytes: number | null;
}

function generate(): Event[] {
  const r = seededRandom(28);
  const pick = <T>(list: readonly T[]) => list[Math.floor(r() * list.length)]!;
  return Array.from({ length: ROWS }, (_, id) => ({
    id,
    user: pick(USERS),
    host: r() < 0.1 ? null : pick(HOSTS),
    status: r() < 0.05 ? null : pick([200, 200, 301, 404, 500]),
    bytes: r() < 0.1 ? null : Math.floor(r() * 10_000),
  }));
}

interface Case {
  readonly name: string;
  readonly trawl: string;
  readonly sql: string;
}

const SRC = "READ_JSON(src: '/shared/events.jsonl')";
const FRAME = "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW";
const BY_USER = "PARTITION BY user ORDER BY status NULLS LAST, id";

const CASES: readonly Case[] = [
  {
    name: "row numbers, lags, leads and running aggregates per user",
    trawl: `${SRC} | window(row_number() as n, lag(bytes) as prev, lead(bytes) as next,
      lag(bytes, 3) as prev3, lead(bytes, 2) as next2, sum(bytes) as running, count(bytes) as c,
      count(*) as rows, min(bytes) as lo, max(bytes) as hi, bytes - lag(bytes) as delta,
      by: user, order: status, id) | select(id, n, prev, next, prev3, next2, running, c, rows,
      lo, hi, delta) | sort(id)`,
    sql: `SELECT id, row_number() OVER w, lag(bytes) OVER w, lead(bytes) OVER w,
      lag(bytes, 3) OVER w, lead(bytes, 2) OVER w, sum(bytes) OVER (w ${FRAME}),
      count(bytes) OVER (w ${FRAME}), count(*) OVER (w ${FRAME}), min(bytes) OVER (w ${FRAME}),
      max(bytes) OVER (w ${FRAME}), bytes - lag(bytes) OVER w
      FROM events WINDOW w AS (${BY_USER}) ORDER BY id`,
  },
  {
    name: "ranks with ties and null group keys, in descending order",
    trawl: `${SRC} | window(rank() as r, dense_rank() as d, by: host, order: status desc)
      | select(id, r, d) | sort(id)`,
    sql: `SELECT id, rank() OVER w, dense_rank() OVER w FROM events
      WINDOW w AS (PARTITION BY host ORDER BY status DESC NULLS LAST) ORDER BY id`,
  },
  {
    name: "the top 3 of each host by bytes",
    trawl: `${SRC} | window(row_number() as n, by: host, order: bytes desc, id)
      | filter(n <= 3) | select(host, n, id, bytes) | sort(host, n)`,
    sql: `SELECT host, n, id, bytes FROM (SELECT *, row_number() OVER (PARTITION BY host
      ORDER BY bytes DESC NULLS LAST, id) AS n FROM events) WHERE n <= 3
      ORDER BY host NULLS LAST, n`,
  },
  {
    name: "one window over every row, no by:",
    trawl: `${SRC} | window(row_number() as n, sum(status) as s, order: id) | select(id, n, s)
      | sort(id)`,
    sql: `SELECT id, row_number() OVER w, sum(status) OVER (w ${FRAME}) FROM events
      WINDOW w AS (ORDER BY id) ORDER BY id`,
  },
  {
    name: "percentiles and medians per user",
    trawl: `${SRC} | select(user, percentile(bytes, 0.9) as p90, percentile(bytes, 0) as p0,
      percentile(bytes, 1) as p100, median(status) as m, percentile(bytes, 0.333) as p33)
      | group(user) | sort(user)`,
    sql: `SELECT user, quantile_cont(bytes, 0.9), quantile_cont(bytes, 0.0),
      quantile_cont(bytes, 1.0), quantile_cont(status, 0.5), quantile_cont(bytes, 0.333)
      FROM events GROUP BY user ORDER BY user`,
  },
];

function plain(v: unknown): unknown {
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "number" && !Number.isInteger(v)) return Math.round(v * 1e9) / 1e9;
  return v;
}

Deno.test("window(...) and percentile give DuckDB's answers, on 1 and 3 scan workers", async () => {
  const events = generate();
  await using home = await engineHome();
  const text = events.map((e) => JSON.stringify(e)).join("\n") + "\n";
  await home.write("/shared/events.jsonl", text);
  const file = await Deno.makeTempFile({ suffix: ".jsonl" });
  await Deno.writeTextFile(file, text);

  const duck = await DuckDBInstance.create(":memory:");
  const db = await duck.connect();
  await db.run(
    `CREATE TABLE events AS SELECT * FROM read_json('${file}', format = 'newline_delimited',
      columns = {id: 'BIGINT', user: 'VARCHAR', host: 'VARCHAR', status: 'BIGINT',
      bytes: 'BIGINT'})`,
  );
  const workers = createScanWorkers({
    count: 3,
    dataDir: home.tree.root,
    grants: () => [],
    minShareBytes: 1,
  });
  try {
    for (const c of CASES) {
      const want = (await db.runAndReadAll(c.sql)).getRows().map((r) => r.map(plain));
      assert.ok(want.length > 0, `${c.name}: the question has an answer`);
      for (const pool of [undefined, workers]) {
        const result = await home.run(c.trawl, pool ? { scanWorkers: pool } : {});
        const columns = result.schema.map((f) => f.name);
        const got = result.rows.map((r) => columns.map((k) => plain(r[k] as Value)));
        assert.equal(got.length, want.length, `${c.name}: rows`);
        got.forEach((row, i) =>
          assert.deepEqual(
            row,
            want[i],
            `${c.name}${pool ? " (3 workers)" : ""}: row ${i}: Trawl ${JSON.stringify(row)}, ` +
              `DuckDB ${JSON.stringify(want[i])}`,
          )
        );
      }
    }
  } finally {
    await workers.close();
    db.closeSync();
    duck.closeSync();
    await Deno.remove(file);
  }
});
