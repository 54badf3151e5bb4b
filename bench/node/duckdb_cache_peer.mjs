// deno-lint-ignore-file no-console
// DuckDB beside bench/cache_bench.ts: over the raw file (`raw`, as duckdb_run.mjs) or over its
// own native table made from the file first (`native`: `CREATE TABLE t AS ...`, not timed; the
// time it took is printed as `loadMs`). Prints `{ ms, cpuMs, loadMs, result }`.
//
//   node bench/node/duckdb_cache_peer.mjs raw|native access|json|nested|hour <file> <threads> [from to]
import { createRequire } from "node:module";

const { DuckDBInstance } = createRequire(import.meta.url)("@duckdb/node-api");

const [mode, task, file, threads = "1", from = "", to = ""] = process.argv
  .slice(2);
const path = file.replaceAll("'", "''");
const LINES = `read_csv('${path}', columns = {'line': 'VARCHAR'}, delim = '\\t', quote = '',
  escape = '', header = false, auto_detect = false)`;
const ACCESS = `SELECT r.client AS client, r.status AS status, TRY_CAST(r.bytes AS BIGINT) AS bytes
  FROM (SELECT regexp_extract(line, '^(\\S+) \\S+ \\S+ \\[[^\\]]*\\] "[^"]*" (\\d{3}) (\\d+|-)',
    ['client', 'status', 'bytes']) AS r FROM ${LINES})`;
const HOURLY =
  `SELECT strptime(r.time, '%d/%b/%Y:%H:%M:%S %z') AS time, CAST(r.status AS INTEGER) AS status
  FROM (SELECT regexp_extract(line, '^\\S+ \\S+ \\S+ \\[([^\\]]*)\\] "[^"]*" (\\d{3})',
    ['time', 'status']) AS r FROM ${LINES})`;
const JSON_FLAT = `SELECT * FROM read_json('${path}', format = 'newline_delimited',
  columns = {status: 'BIGINT'})`;
const JSON_NESTED = `SELECT * FROM read_json('${path}', format = 'newline_delimited', columns = {
  status: 'STRUCT(errorCode BIGINT)', location: 'STRUCT(countryOrRegion VARCHAR)'})`;
const SOURCES = {
  access: ACCESS,
  json: JSON_FLAT,
  nested: JSON_NESTED,
  hour: HOURLY,
};
const WHERE = `time >= '${from}'::TIMESTAMPTZ AND time < '${to}'::TIMESTAMPTZ`;
const query = (src) =>
  ({
    access: `SELECT client, sum(bytes) AS total FROM (${src}) WHERE status = '200'
    GROUP BY client ORDER BY total DESC LIMIT 10`,
    json: `SELECT status, count(*) AS n FROM (${src}) GROUP BY status ORDER BY status`,
    nested: `SELECT status.errorCode AS code, location.countryOrRegion AS country, count(*) AS n
    FROM (${src}) WHERE status.errorCode <> 0 GROUP BY ALL ORDER BY n DESC, code, country`,
    hour:
      `SELECT status, count(*) AS n FROM (${src}) WHERE ${WHERE} GROUP BY status ORDER BY status`,
  })[task];

const instance = await DuckDBInstance.create(":memory:");
const connection = await instance.connect();
await connection.run(`SET threads = ${Number(threads)}`);
await connection.run(`SET TimeZone = 'UTC'`);
let loadMs = 0;
let sql = query(SOURCES[task]);
if (mode === "native") {
  const t0 = performance.now();
  await connection.run(`CREATE TABLE t AS ${SOURCES[task]}`);
  loadMs = performance.now() - t0;
  sql = query("SELECT * FROM t");
}
const cpu0 = process.cpuUsage();
const started = performance.now();
const reader = await connection.runAndReadAll(sql);
const ms = performance.now() - started;
const cpu = process.cpuUsage(cpu0);
const result = reader.getRows().map((row) =>
  row.map((v) => (typeof v === "bigint" ? Number(v) : v))
);
console.log(
  JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000, loadMs, result }),
);
