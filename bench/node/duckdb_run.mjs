// deno-lint-ignore-file no-console
// The DuckDB side of bench/engine_bench.ts. Prints `{ ms, result }`, timing the query only (not
// Node's start or loading DuckDB). The wide task writes its JSON to `out` and gives its row count.
//
//   node bench/node/duckdb_run.mjs access|json|nested|wide <file> <threads> [<out>]
import { createRequire } from "node:module";

// Loaded through require so that `deno check bench/` does not try to resolve a Node-only package.
const { DuckDBInstance } = createRequire(import.meta.url)("@duckdb/node-api");

const [task, file, threads = "1", out = "/dev/null"] = process.argv.slice(2);
const path = file.replaceAll("'", "''");
const LINES = `read_csv('${path}', columns = {'line': 'VARCHAR'}, delim = '\\t', quote = '',
  escape = '', header = false, auto_detect = false)`;
const QUERIES = {
  access: `
    SELECT r.client AS client, sum(TRY_CAST(r.bytes AS BIGINT)) AS total FROM (
      SELECT regexp_extract(line,
        '^(\\S+) \\S+ \\S+ \\[[^\\]]*\\] "[^"]*" (\\d{3}) (\\d+|-)',
        ['client', 'status', 'bytes']) AS r
      FROM ${LINES}
    ) WHERE r.status = '200'
    GROUP BY r.client ORDER BY total DESC LIMIT 10`,
  json: `
    SELECT status, count(*) AS n
    FROM read_json('${path}', format = 'newline_delimited', columns = {status: 'BIGINT'})
    GROUP BY status ORDER BY status`,
  // Columns declared, as the issue measured it: DuckDB reads only these.
  nested: `
    SELECT status.errorCode AS code, location.countryOrRegion AS country, count(*) AS n
    FROM read_json('${path}', format = 'newline_delimited', columns = {
      status: 'STRUCT(errorCode BIGINT)', location: 'STRUCT(countryOrRegion VARCHAR)'})
    WHERE status.errorCode <> 0
    GROUP BY ALL ORDER BY n DESC, code, country`,
  wide: `
    COPY (
      SELECT strptime(r.time, '%d/%b/%Y:%H:%M:%S %z') AS time, r.client AS ip,
        CAST(r.status AS INTEGER) AS status, TRY_CAST(r.bytes AS BIGINT) AS bytes, r.path AS path
      FROM (
        SELECT regexp_extract(line,
          '^(\\S+) \\S+ \\S+ \\[([^\\]]*)\\] "\\S+ (\\S+) [^"]*" (\\d{3}) (\\d+|-)',
          ['client', 'time', 'path', 'status', 'bytes']) AS r
        FROM ${LINES})
    ) TO '${out.replaceAll("'", "''")}' (FORMAT JSON, ARRAY true)`,
};

const instance = await DuckDBInstance.create(":memory:");
const connection = await instance.connect();
await connection.run(`SET threads = ${Number(threads)}`);
const cpu0 = process.cpuUsage();
const started = performance.now();
const reader = await connection.runAndReadAll(QUERIES[task]);
const ms = performance.now() - started;
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000;
const result = reader.getRows().map((row) =>
  row.map((v) => (typeof v === "bigint" ? Number(v) : v))
);
console.log(JSON.stringify({ ms, cpuMs, result: task === "wide" ? result[0]?.[0] : result }));
