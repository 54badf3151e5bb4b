/**
 * Scans on workers (engine/exec/parallel/, actors/scan_workers.ts): the same results as one
 * thread for aggregates over shares of files cut into byte ranges, one warning per source,
 * progress, and every worker stopped at once on cancellation.
 */

import assert from "node:assert/strict";
import { engineHome } from "./support/engine_home.ts";
import { createScanWorkers, type ScanWorkerPool } from "../actors/scan_workers.ts";
import type { ShareHandle, ShareMessage } from "../engine/contracts/scan_workers.ts";
import { compile, execute } from "../engine/engine.ts";
import { toJsonValue } from "../engine/render/render.ts";
import { seededRandom } from "./support/seeded_random.ts";
import type { Row } from "../engine/values/values.ts";
import { sleep } from "../engine/util/sleep.ts";

/** Real workers over the home's tree, counted; every file is cut however small. */
function workers(
  root: string,
  count: number,
  stats: { started: number; stopped: number; heard?: ShareMessage["kind"][] } = {
    started: 0,
    stopped: 0,
  },
): ScanWorkerPool {
  const real = createScanWorkers({ count, dataDir: root, grants: () => [], minShareBytes: 1 });
  return {
    close: () => real.close(),
    count,
    minShareBytes: 1,
    start(task, listen) {
      stats.started++;
      const handle = real.start(task, (message) => {
        stats.heard?.push(message.kind);
        listen(message);
      });
      let stopped = false;
      return {
        stop() {
          if (!stopped) stats.stopped++;
          stopped = true;
          handle.stop();
        },
        credit: () => handle.credit(),
      } satisfies ShareHandle;
    },
  };
}

async function writeLogs(home: Awaited<ReturnType<typeof engineHome>>): Promise<void> {
  const rnd = seededRandom(11);
  let log = "";
  let json = "";
  for (let i = 0; i < 3000; i++) {
    const status = [200, 200, 404, 500][Math.floor(rnd() * 4)];
    const bytes = Math.floor(rnd() * 5000);
    const ip = `10.0.${Math.floor(rnd() * 4)}.${Math.floor(rnd() * 50)}`;
    log += `${ip} ${status} ${bytes} /p/${i % 7}\n`;
    if (i % 500 === 7) log += "not a record\n";
    json += i % 400 === 3 ? "[not json\n" : JSON.stringify({
      ip,
      status: { code: status, reason: status === 200 ? null : "bad" },
      bytes,
      tags: i % 3 === 0 ? [] : ["a", { k: i % 5 }],
    }) + "\n";
  }
  await home.write("/shared/p/a.log", log.slice(0, log.length / 2 + 7));
  await home.write("/shared/p/b.log", "");
  await home.write("/shared/p/c.log", log.slice(log.length / 2 + 7));
  await home.write("/shared/j/events.jsonl", json);
}

const PATTERN = `IPADDR:ip ' ' INT:status ' ' LONG:bytes ' ' NSPACE:path`;
const SCRIPTS = [
  `PARSE(pattern: '''${PATTERN}''', src: '/shared/p/*.log')
   | filter(status = 200) | select(ip, sum(bytes) as total, count(*) as n) | group(ip)`,
  `PARSE(pattern: '''${PATTERN}''', src: '/shared/p/*.log')
   | select(path, status, count(*) as n, sum(bytes) / 2 as half) | group(path, status)`,
  `PARSE(pattern: '''${PATTERN}''', src: '/shared/p/*.log') | select(count(*) as n, sum(bytes) as b)`,
  `PARSE(pattern: '''${PATTERN}''', src: '/shared/p/*.log') | filter(status = 999)
   | select(count(*) as n, sum(bytes) as b)`,
  `READ_JSON(src: '/shared/j/events.jsonl') | filter(status.code != 200)
   | select(status.code as code, ip, count(*) as n) | group(code, ip)`,
  `READ_JSON(src: '/shared/j/events.jsonl') | select(tags[1].k as k, count(tags) as n) | group(k)`, // Aggregates with accumulators: their states merged in the order of the shares.
  `PARSE(pattern: '''${PATTERN}''', src: '/shared/p/*.log')
   | select(status, min(bytes) as lo, max(bytes) as hi, avg(bytes) as mean,
            count_distinct(ip) as ips, min(ip) as first_ip, max(path) as last_path)
   | group(status)`,
  `PARSE(pattern: '''${PATTERN}''', src: '/shared/p/*.log')
   | select(path, first(ip) as f, last(bytes) as l, array_agg(status) as all_status,
            count_distinct(bytes % 10) as d, sum(bytes) as total)
   | group(path)`,
  `PARSE(pattern: '''${PATTERN}''', src: '/shared/p/*.log') | filter(status = 404)
   | select(min(bytes) as lo, max(bytes) as hi, avg(bytes) as mean, count_distinct(ip) as ips)`,
  `READ_JSON(src: '/shared/j/events.jsonl')
   | select(status.code as code, min(bytes) as lo, max(ip) as top, count_distinct(tags) as t)
   | group(code)`,
];

Deno.test("aggregates over scans on workers give one thread's rows, in its order, and its warnings", async () => {
  await using home = await engineHome();
  await writeLogs(home);
  for (const n of [2, 3, 5]) {
    const stats = { started: 0, stopped: 0 };
    // One pool for all scripts: its workers run share after share.
    const pool = workers(home.tree.root, n, stats);
    using _ = { [Symbol.dispose]: () => pool.close() };
    for (const script of SCRIPTS) {
      const one = await home.run(script);
      const many = await home.run(script, { scanWorkers: pool });
      const render = (r: typeof one) =>
        JSON.stringify({
          rows: r.rows.map((row) => toJsonValue(row, { timeZone: "UTC" })),
          warnings: r.warnings,
        });
      assert.equal(render(many), render(one), `${n} workers: ${script}`);
      assert.equal(many.progress.at(-1), 1);
      assert.ok(one.rows.length > 0);
    }
    assert.ok(stats.started >= SCRIPTS.length * 2, `${n} workers: ${stats.started} started`);
  }
});

Deno.test("cancelling a query stops all its scan workers at once", async () => {
  await using home = await engineHome();
  // Enough lines that the scan is still running when it is cancelled.
  const line = "10.0.0.1 200 123 /p/x\n";
  await home.write("/shared/big.log", line.repeat(400_000));
  const stats = { started: 0, stopped: 0, heard: [] as ShareMessage["kind"][] };
  const pool = workers(home.tree.root, 3, stats);
  const compiled = await compile({
    text: `PARSE(pattern: '''${PATTERN}''', src: '/shared/big.log') | select(count(*) as n)`,
  }, home.context({ scanWorkers: pool }));
  assert.ok(compiled.ok);
  const abort = new AbortController();
  const run = execute(compiled.plan, { signal: abort.signal });
  const rows = run.batches[Symbol.asyncIterator]().next();
  rows.catch(() => {});
  while (stats.started < 3) await sleep(5);
  abort.abort(new DOMException("cancelled", "AbortError"));
  await assert.rejects(rows, (e: Error) => e.name === "AbortError");
  // Every worker told to stop by the time the query gave up, and none of them had handed in its
  // groups: the query did not wait for a share to run to its end. (Counted, not timed: beside the
  // whole parallel suite any clock stalls; a worker's start alone takes longer than the 5 ms above.)
  assert.equal(stats.stopped, stats.started, `stopped ${stats.stopped} of ${stats.started}`);
  assert.equal(stats.heard.includes("groups"), false, `heard ${stats.heard.join(", ")}`);
  pool.close();
});

Deno.test("a worker past its part of the memory limit fails the query with MEMORY_LIMIT", async () => {
  await using home = await engineHome({ memoryLimit: 64 * 1024 });
  let log = "";
  for (let i = 0; i < 5000; i++) log += `10.${i >> 8 & 255}.${i & 255}.1 200 ${i} /p/${i}\n`;
  await home.write("/shared/m.log", log);
  const pool = workers(home.tree.root, 2);
  try {
    await assert.rejects(
      home.run(
        `PARSE(pattern: '''${PATTERN}''', src: '/shared/m.log') | select(path, count(*) as n)
         | group(path)`,
        { scanWorkers: pool },
      ),
      (e: Error & { diagnostic?: { code: string } }) => e.diagnostic?.code === "MEMORY_LIMIT",
    );
  } finally {
    pool.close();
  }
});

Deno.test("filtering row pipelines on workers give one thread's rows in order; a limit stops every worker", async () => {
  await using home = await engineHome();
  await writeLogs(home);
  const line = "10.0.0.1 200 123 /p/x\n";
  await home.write("/shared/big.log", line.repeat(400_000));
  const stats = { started: 0, stopped: 0 };
  const pool = workers(home.tree.root, 3, stats);
  try {
    for (
      const script of [
        `PARSE(pattern: '''${PATTERN}''', src: '/shared/p/*.log') | filter(status != 200)
         | select(ip, bytes * 2 as b, path)`,
        `READ_JSON(src: '/shared/j/events.jsonl') | unnest(tags as t) | filter(t is not null)
         | select(ip, t, status.code)`,
      ]
    ) {
      const one = await home.run(script);
      const many = await home.run(script, { scanWorkers: pool });
      assert.deepEqual(many.rows, one.rows);
      assert.deepEqual(many.warnings, one.warnings);
    }
    const started = stats.started;
    const limited = await home.run(
      `PARSE(pattern: '''${PATTERN}''', src: '/shared/big.log') | filter(status = 200) | limit(5)`,
      { scanWorkers: pool },
    );
    assert.equal(limited.rows.length, 5);
    assert.equal(stats.started - started, 3);
    assert.equal(stats.stopped, stats.started, `stopped ${stats.stopped} of ${stats.started}`);
    // A pipeline that keeps every row is read here: handing rows over costs more than that.
    const before = stats.started;
    await home.run(`PARSE(pattern: '''${PATTERN}''', src: '/shared/big.log') | select(ip)`, {
      scanWorkers: pool,
    });
    assert.equal(stats.started, before);
  } finally {
    pool.close();
  }
});

Deno.test("a top-N sort over a row pipeline runs in workers and gives one thread's rows, ties in order", async () => {
  await using home = await engineHome();
  await writeLogs(home);
  const stats = { started: 0, stopped: 0 };
  const pool = workers(home.tree.root, 3, stats);
  try {
    for (
      const script of [
        `PARSE(pattern: '''${PATTERN}''', src: '/shared/p/*.log') | sort(bytes desc) | limit(7)`,
        // Many ties: the order among them is the input's.
        `PARSE(pattern: '''${PATTERN}''', src: '/shared/p/*.log') | filter(status != 200)
         | select(ip, status, path) | sort(status, path desc) | limit(40)`,
        `READ_JSON(src: '/shared/j/events.jsonl') | select(ip, bytes, status.code as code)
         | sort(code desc) | limit(2000)`,
      ]
    ) {
      const before = stats.started;
      const one = await home.run(script);
      const many = await home.run(script, { scanWorkers: pool });
      assert.ok(stats.started - before >= 2, `workers started: ${stats.started - before}`);
      assert.deepEqual(many.rows, one.rows, script);
      assert.deepEqual(many.warnings, one.warnings);
      assert.ok(one.rows.length > 0);
    }
  } finally {
    pool.close();
  }
});

Deno.test("what the workers read is counted in the query's stats, as one thread counts it", async () => {
  const { newQueryStats } = await import("../engine/plan/context.ts");
  await using home = await engineHome();
  await writeLogs(home);
  const pool = workers(home.tree.root, 3);
  try {
    for (
      const script of [
        `PARSE(pattern: '''${PATTERN}''', src: '/shared/p/*.log') | select(path, count(*) as n)
         | group(path)`,
        `PARSE(pattern: '''${PATTERN}''', src: '/shared/p/*.log') | filter(status = 404)`,
        `READ_JSON(src: '/shared/j/events.jsonl') | select(count(*) as n)`,
      ]
    ) {
      const counted = [];
      for (const scanWorkers of [undefined, pool]) {
        const compiled = await compile(
          { text: script },
          home.context(scanWorkers ? { scanWorkers } : {}),
        );
        assert.ok(compiled.ok);
        const stats = newQueryStats();
        const run = execute(compiled.plan, { signal: new AbortController().signal, stats });
        for await (const _ of run.batches) { /* drain */ }
        counted.push(stats);
      }
      assert.ok(counted[0]!.bytesRead > 0 && counted[0]!.recordsRead > 0);
      assert.deepEqual(counted[1], counted[0], script);
    }
  } finally {
    pool.close();
  }
});

Deno.test("a worker stopped mid-share is terminated and a fresh one takes its place", async () => {
  await using home = await engineHome();
  await home.write("/shared/big.log", "10.0.0.1 200 123 /p/x\n".repeat(400_000));
  const pool = createScanWorkers({
    count: 2,
    dataDir: home.tree.root,
    grants: () => [],
    minShareBytes: 1,
    warm: true,
  });
  try {
    assert.equal(pool.idleCount(), 2);
    const compiled = await compile({
      text: `PARSE(pattern: '''${PATTERN}''', src: '/shared/big.log') | filter(status = 200)
             | limit(3)`,
    }, home.context({ scanWorkers: pool }));
    assert.ok(compiled.ok);
    let rows = 0;
    const run = execute(compiled.plan, { signal: new AbortController().signal });
    for await (const batch of run.batches) rows += batch.length;
    assert.equal(rows, 3);
    // Both were stopped by the limit, terminated, and not given back.
    assert.equal(pool.idleCount(), 0);
    for (const until = Date.now() + 5000; pool.idleCount() < 2 && Date.now() < until;) {
      await sleep(50);
    }
    assert.equal(pool.idleCount(), 2);
  } finally {
    pool.close();
  }
});

Deno.test("a worker runs the part the query planned: a view deleted after planning changes nothing", async () => {
  await using home = await engineHome();
  await writeLogs(home);
  // A view's argument, a `$constant` of the script and literals of every encoded kind (an
  // address, an interval) travel to the workers as values, not as the view's text.
  await home.write(
    "/shared/v.sx",
    `init(code::INTEGER);\n$big = 1000;\nPARSE(pattern: '''${PATTERN}''', src: '/shared/p/*.log')
     | filter(status = $code and bytes > $big and ip != 10.0.9.9 and 1h > 30m)`,
  );
  const script = `$prefix = '/p/';\n@[/shared/v.sx](code: 200)
    | filter(starts_with(path, $prefix))
    | select(ip, count(*) as n, sum(bytes) as b) | group(ip) | sort(ip)`;
  const alone = await home.run(script);
  assert.ok(alone.rows.length > 10);
  const stats = { started: 0, stopped: 0 };
  const pool = workers(home.tree.root, 2, stats);
  try {
    const compiled = await compile({ text: script }, home.context({ scanWorkers: pool }));
    assert.ok(compiled.ok, JSON.stringify(!compiled.ok && compiled.diagnostics));
    await Deno.remove(home.tree.resolve(home.user, "/shared/v.sx").real);
    const run = execute(compiled.plan, { signal: new AbortController().signal });
    const rows: Row[] = [];
    for await (const batch of run.batches) rows.push(...batch);
    assert.ok(stats.started >= 2, `${stats.started} workers started`);
    const json = (row: Row) => toJsonValue(row, { timeZone: "UTC" });
    assert.deepEqual(rows.map(json), alone.rows.map(json));
  } finally {
    pool.close();
  }
});

Deno.test("line_field and raw_field on workers: each share counts the lines before it, every record gets its own line and text", async () => {
  await using home = await engineHome();
  // Each record holds its own line number (n=...); blank lines, CRLF lines and lines that are
  // not records in between, so a share's first line is rarely a record.
  let log = "";
  let json = "";
  for (let i = 1; i <= 6000; i++) {
    log += i % 97 === 0
      ? "\n"
      : i % 89 === 0
      ? "no number here\n"
      : `x${"y".repeat(i % 13)} n=${i}` +
        (i % 7 === 0 ? "\r\n" : "\n");
    json += i % 83 === 0
      ? "\n"
      : i % 79 === 0
      ? "[not an object\n"
      : `{"n":${i},"pad":"${"p".repeat(i % 11)}"}\n`;
  }
  await home.write("/shared/lines/a.log", log);
  await home.write("/shared/lines/b.log", log.slice(0, 20_000));
  await home.write("/shared/lines/e.jsonl", json);
  const stats = { started: 0, stopped: 0 };
  const pool = workers(home.tree.root, 3, stats);
  try {
    for (
      const script of [
        `PARSE(pattern: '''LD 'n=' INT:n EOL''', src: '/shared/lines/*.log', line_field: 'line',
               raw_field: 'raw') | filter(n > 0) | select(n, line, raw)`,
        `READ_JSON(src: '/shared/lines/e.jsonl', line_field: 'line', raw_field: 'raw')
         | filter(n > 0) | select(n, line, raw)`,
      ]
    ) {
      const before = stats.started;
      const one = await home.run(script);
      const many = await home.run(script, { scanWorkers: pool });
      assert.ok(stats.started - before >= 2, `${stats.started - before} workers: ${script}`);
      assert.ok(many.rows.length > 5000, `${many.rows.length} rows`);
      for (const r of many.rows) {
        assert.equal(r.line, r.n, JSON.stringify(r));
        assert.ok(String(r.raw).includes(String(r.n)) && !String(r.raw).endsWith("\r"));
      }
      assert.deepEqual(many.rows, one.rows);
      assert.deepEqual(many.warnings, one.warnings);
    }
  } finally {
    pool.close();
  }
});
