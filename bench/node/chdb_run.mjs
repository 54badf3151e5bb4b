// deno-lint-ignore-file no-console
// The ClickHouse side of bench/engine_bench.ts, through chDB (ClickHouse in process). Prints
// `{ ms, result }`, timing the query only (not Node's start or loading chDB). The wide task
// writes its JSON to `out` and gives its row count.
//
//   node bench/node/chdb_run.mjs access|json|nested|wide <file> <threads> [<out>]
import { createRequire } from "node:module";

// Loaded through require so that `deno check bench/` does not try to resolve a Node-only package.
const { query } = createRequire(import.meta.url)("chdb");

const [task, file, threads = "1", out = "/tmp/trawl-bench-chdb.json"] = process.argv.slice(2);
const path = file.replaceAll("'", "\\'");
const LINES = `file('${path}', 'LineAsString', 'line String')`;
const QUERIES = {
  // splitByChar, as the issue measured it: fields 1 (client), 9 (status) and 10 (bytes).
  access: `
    SELECT toString(toIPv4(f[1])) AS client, sum(toInt64OrZero(f[10])) AS total
    FROM (SELECT splitByChar(' ', line) AS f FROM ${LINES})
    WHERE f[9] = '200'
    GROUP BY client ORDER BY total DESC LIMIT 10`,
  json: `
    SELECT status, count() AS n FROM file('${path}', 'JSONEachRow', 'status Int64')
    GROUP BY status ORDER BY status`,
  nested: `
    SELECT status.errorCode AS code, location.countryOrRegion AS country, count() AS n
    FROM file('${path}', 'JSONEachRow',
      'status Tuple(errorCode Int64), location Tuple(countryOrRegion String)')
    WHERE code <> 0
    GROUP BY code, country ORDER BY n DESC, code, country`,
  wide: `
    SELECT parseDateTime64BestEffort(replaceOne(substring(f[4], 2), ':', ' '), 3, 'UTC') AS time,
      toIPv4(f[1]) AS ip, toInt32(f[9]) AS status, toInt64OrNull(f[10]) AS bytes, f[7] AS path
    FROM (SELECT splitByChar(' ', line) AS f FROM ${LINES})
    INTO OUTFILE '${out.replaceAll("'", "\\'")}' TRUNCATE FORMAT JSON`,
};

const settings = ` SETTINGS max_threads = ${Number(threads)}`;
const cpu0 = process.cpuUsage();
const started = performance.now();
const text = query(QUERIES[task] + settings, "JSONCompact");
const ms = performance.now() - started;
const cpu = process.cpuUsage(cpu0);
let result;
if (task === "wide") {
  const counted = query(`SELECT count() FROM file('${out}', 'JSON')`, "JSONCompact");
  result = JSON.parse(counted).data[0][0];
} else {
  result = JSON.parse(text).data.map((row) =>
    row.map((v) => (typeof v === "string" && /^-?\d+$/.test(v) ? Number(v) : v))
  );
}
const cpuMs = (cpu.user + cpu.system) / 1000;
console.log(JSON.stringify({ ms, cpuMs, result: task === "wide" ? Number(result) : result }));
