// The DuckDB side of bench/engine_bench.ts, on one thread. Prints `{ ms, result }`, timing the
// query only (not Node's start or loading DuckDB).
//
//   node bench/node/duckdb_run.mjs access|json <file>
import { createRequire } from "node:module";

// Loaded through require so that `deno check bench/` does not try to resolve a Node-only package.
const { DuckDBInstance } = createRequire(import.meta.url)("@duckdb/node-api");

const [task, file] = process.argv.slice(2);
const path = file.replaceAll("'", "''");
const QUERIES = {
  access: `
    SELECT r.client AS client, sum(TRY_CAST(r.bytes AS BIGINT)) AS total FROM (
      SELECT regexp_extract(line,
        '^(\\S+) \\S+ \\S+ \\[[^\\]]*\\] "[^"]*" (\\d{3}) (\\d+|-)',
        ['client', 'status', 'bytes']) AS r
      FROM read_csv('${path}', columns = {'line': 'VARCHAR'}, delim = '\\t', quote = '',
        escape = '', header = false, auto_detect = false)
    ) WHERE r.status = '200'
    GROUP BY r.client ORDER BY total DESC LIMIT 10`,
  json: `
    SELECT status, count(*) AS n
    FROM read_json('${path}', format = 'newline_delimited')
    GROUP BY status ORDER BY status`,
};

const instance = await DuckDBInstance.create(":memory:");
const connection = await instance.connect();
await connection.run("SET threads = 1");
const started = performance.now();
const reader = await connection.runAndReadAll(QUERIES[task]);
const ms = performance.now() - started;
const result = reader.getRows().map((row) =>
  row.map((v) => (typeof v === "bigint" ? Number(v) : v))
);
console.log(JSON.stringify({ ms, result }));
