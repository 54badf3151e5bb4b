/**
 * A result rendered by the scan workers (engine/render/rendered.ts): when the format is fixed
 * before the run, a root row pipeline runs in the workers and its rows arrive as bytes of the
 * format, the same bytes as one thread's rows written by the row writers, with the same schema
 * (nulls seen included), warnings and order.
 */

import assert from "node:assert/strict";
import { engineHome } from "./support/engine_home.ts";
import { createScanWorkers } from "../actors/scan_workers.ts";
import { compile, execute } from "../engine/engine.ts";
import type { RenderOptions } from "../engine/render/render.ts";
import { formatSpec, rowWriterOf } from "../routes/formats.ts";
import { RenderedRows, type RenderRequest } from "../engine/render/rendered.ts";
import type { RowTextFormat } from "../engine/render/render_bytes.ts";
import type { Warning } from "../engine/contracts/datastore.ts";
import type { ScanWorkers } from "../engine/contracts/scan_workers.ts";
import { ROW_CREDIT, type ShareMessage, type ShareTask } from "../engine/contracts/scan_workers.ts";
import { sleep } from "../engine/util/sleep.ts";

const PATTERN = `IPADDR:ip ' ' INT:status ' ' LONG:bytes? ' [' HTTPDATE:time '] ' NSPACE:path ` +
  `' ' DQS:agent`;

/** A log of every kind of value the pattern gives, nulls and non-ASCII text among them. */
function log(lines: number): string {
  let out = "";
  for (let i = 0; i < lines; i++) {
    const bytes = i % 13 === 0 ? "-" : String(i * 7919);
    const second = String(i % 60).padStart(2, "0");
    const path = i % 5 === 0 ? `/zürich/${i}?q=東京` : `/p/${i}`;
    out += `10.${i % 3}.${i % 256}.${i % 200} ${200 + (i % 4)} ${bytes} ` +
      `[01/May/2024:13:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${second} +0200] ` +
      `${path} "agent \\"${i}\\" \\\\ x"\n`;
    if (i % 997 === 5) out += "not a record\n";
  }
  return out;
}

/**
 * Two logs of `a` and `b` lines in /shared/r, and 3 scan workers that cut any scan into shares
 * (close `pool` after).
 */
async function logsOnWorkers(home: Awaited<ReturnType<typeof engineHome>>, a: number, b: number) {
  await home.write("/shared/r/a.log", log(a));
  await home.write("/shared/r/b.log", log(b));
  const pool = createScanWorkers({ count: 3, dataDir: home.tree.root, grants: () => [] });
  return { pool, workers: { ...pool, minShareBytes: 1 } };
}

/**
 * The wide script over `src` run on one thread (its rows, and the ndjson writer of one row) and
 * started on `workers` rendering JSON (`lanes` as asked): what the backlog and lane tests compare.
 */
async function renderedRuns(
  home: Awaited<ReturnType<typeof engineHome>>,
  workers: ScanWorkers,
  src: string,
  lanes: boolean,
) {
  const script = `PARSE(pattern: '''${PATTERN}''', src: '${src}')
      | select(time, ip, status, bytes, path)`;
  const one = await home.run(script);
  const write = rowWriterOf(formatSpec("application/x-ndjson"))(
    one.schema.map((f) => f.name),
    { timeZone: "UTC" },
  );
  const compiled = await compile({ text: script }, home.context({ scanWorkers: workers }));
  assert.ok(compiled.ok);
  const run = execute(compiled.plan, {
    signal: new AbortController().signal,
    render: { format: "json", options: { timeZone: "UTC" }, ...(lanes ? { lanes: true } : {}) },
  });
  return { one, write, run };
}

const decoder = new TextDecoder();

Deno.test("a root row pipeline on workers arrives rendered: one thread's rows as bytes", async () => {
  await using home = await engineHome();
  const { pool, workers } = await logsOnWorkers(home, 6000, 2500);
  try {
    const scripts = [
      `PARSE(pattern: '''${PATTERN}''', src: '/shared/r/*.log')`,
      `PARSE(pattern: '''${PATTERN}''', src: '/shared/r/*.log')
       | select(time, ip, status, bytes, path, agent, bytes * 2 as twice)`,
      `PARSE(pattern: '''${PATTERN}''', src: '/shared/r/*.log') | filter(status = 201)
       | select(path, bytes)`,
    ];
    const formats: [RowTextFormat, RenderOptions][] = [
      ["json", { timeZone: "Europe/Berlin" }],
      ["csv", { timeZone: "UTC", timestampFormat: "dd/MMM/yyyy HH:mm:ss Z" }],
      ["tsv", { timeZone: "Asia/Kolkata" }],
    ];
    for (const script of scripts) {
      const one = await home.run(script);
      assert.ok(one.rows.length > 1000);
      for (const [format, options] of formats) {
        const columns = one.schema.map((f) => f.name);
        const write = rowWriterOf(formatSpec(
          format === "json"
            ? "application/x-ndjson"
            : format === "csv"
            ? "application/csv"
            : "text/tab-separated-values",
        ))(columns, options);
        const compiled = await compile({ text: script }, home.context({ scanWorkers: workers }));
        assert.ok(compiled.ok);
        const warnings: Warning[] = [];
        const render: RenderRequest = { format, options };
        const run = execute(compiled.plan, {
          signal: new AbortController().signal,
          onWarning: (w) => warnings.push(w),
          render,
        });
        const texts: string[] = [];
        let rendered = 0;
        for await (const part of run.parts!) {
          assert.ok(part instanceof RenderedRows, "every batch comes rendered");
          rendered++;
          let start = 0;
          for (const end of part.ends) {
            texts.push(decoder.decode(part.bytes.subarray(start, end)));
            start = end;
          }
        }
        assert.ok(rendered > 1, `${rendered} parts`);
        assert.equal(texts.length, one.rows.length, `${format}: ${script}`);
        one.rows.forEach((row, i) => assert.equal(texts[i], write(row), `${format} row ${i}`));
        assert.deepEqual(run.schema(), one.schema, `schema, ${format}: ${script}`);
        assert.deepEqual(warnings, one.warnings);
      }
    }
    // Nulls seen by the workers make the column nullable, as one thread's observer does.
    const one = await home.run(`PARSE(pattern: '''${PATTERN}''', src: '/shared/r/*.log')`);
    assert.equal(one.schema.find((f) => f.name === "bytes")?.nullable, true);
  } finally {
    pool.close();
  }
});

Deno.test("without a fixed format, or with an open schema, rows come as rows", async () => {
  await using home = await engineHome();
  await home.write("/shared/r/a.log", log(3000));
  await home.write(
    "/shared/r/e.jsonl",
    Array.from({ length: 3000 }, (_, i) => JSON.stringify({ i, s: `x${i}` })).join("\n") + "\n",
  );
  const pool = createScanWorkers({ count: 2, dataDir: home.tree.root, grants: () => [] });
  const workers = { ...pool, minShareBytes: 1 };
  try {
    for (
      const [script, render] of [
        [`PARSE(pattern: '''${PATTERN}''', src: '/shared/r/a.log')`, undefined],
        [`READ_JSON(src: '/shared/r/e.jsonl')`, { format: "json", options: { timeZone: "UTC" } }],
      ] as const
    ) {
      const compiled = await compile({ text: script }, home.context({ scanWorkers: workers }));
      assert.ok(compiled.ok);
      const run = execute(compiled.plan, {
        signal: new AbortController().signal,
        ...(render ? { render } : {}),
      });
      let rows = 0;
      for await (const part of run.parts ?? run.batches) {
        assert.ok(!(part instanceof RenderedRows));
        rows += part.length;
      }
      assert.equal(rows, 3000);
    }
  } finally {
    pool.close();
  }
});

Deno.test("a rendering share not at its turn scans on into a backlog: its queue bounded, its bytes exact", async () => {
  await using home = await engineHome();
  await home.write("/shared/r/a.log", log(20000));
  const backlogDir = `${home.dir}/results`;
  const pool = createScanWorkers({
    count: 2,
    dataDir: home.tree.root,
    grants: () => [],
    backlogDir,
  });
  // What each share posted, read and when it was done, seen between the workers and the merge.
  const posted: number[] = [];
  const read: number[] = [];
  const done: boolean[] = [];
  const workers = {
    ...pool,
    minShareBytes: 1,
    start: (task: ShareTask, listen: (m: ShareMessage) => void) => {
      const k = posted.length;
      posted.push(0);
      read.push(0);
      done.push(false);
      return pool.start(task, (m) => {
        if (m.kind === "rendered") posted[k]!++;
        if (m.kind === "done") done[k] = true;
        if (m.kind === "progress") read[k]! += m.bytes;
        listen(m);
      });
    },
  };
  try {
    const { one, write, run } = await renderedRuns(home, workers, "/shared/r/a.log", false);
    const parts = run.parts![Symbol.asyncIterator]();
    const texts: string[] = [];
    const take = (part: unknown) => {
      assert.ok(part instanceof RenderedRows);
      let start = 0;
      for (const end of part.ends) {
        texts.push(decoder.decode(part.bytes.subarray(start, end)));
        start = end;
      }
    };
    const first = await parts.next();
    take(first.value);
    // The merge holds at its first batch: both shares still read their input to its end, the
    // second (whose turn has not come) into its backlog, posting no more than its credits allow.
    const size = (await Deno.stat(`${home.tree.root}/shared/r/a.log`)).size;
    const until = Date.now() + 30_000;
    while (read[0]! + read[1]! < size && Date.now() < until) {
      await sleep(20);
    }
    assert.equal(read[0]! + read[1]!, size, "both shares read their input to its end");
    assert.ok(read[0]! > 0 && read[1]! > 0);
    assert.deepEqual(done, [false, false], "neither is done before its batches are taken");
    assert.ok(posted[1]! <= ROW_CREDIT, `the second share posted ${posted[1]} batches`);
    assert.ok(posted[0]! <= ROW_CREDIT + 1, `the first share posted ${posted[0]} batches`);
    for (let r = await parts.next(); !r.done; r = await parts.next()) take(r.value);
    assert.ok(posted[1]! > ROW_CREDIT, "the backlog's batches came once taken");
    assert.deepEqual(done, [true, true]);
    assert.equal(texts.length, one.rows.length);
    one.rows.forEach((row, i) => assert.equal(texts[i], write(row), `row ${i}`));
    // The backlog files went with their handles.
    assert.deepEqual(await Array.fromAsync(Deno.readDir(backlogDir)), []);
  } finally {
    pool.close();
  }
});

Deno.test("with lanes, every share's batches come as made, each with its share: placed by lane, one thread's rows", async () => {
  await using home = await engineHome();
  const { pool, workers } = await logsOnWorkers(home, 20000, 7000);
  try {
    const { one, write, run } = await renderedRuns(home, workers, "/shared/r/*.log", true);
    const byLane: string[][] = [];
    for await (const part of run.parts!) {
      assert.ok(part instanceof RenderedRows);
      assert.ok(part.lane !== undefined && part.lane >= 0 && part.lane < 3, `lane ${part.lane}`);
      let start = 0;
      for (const end of part.ends) {
        (byLane[part.lane] ??= []).push(decoder.decode(part.bytes.subarray(start, end)));
        start = end;
      }
    }
    assert.ok(byLane.filter((l) => l?.length > 0).length > 1, "more than one share");
    const texts = byLane.flatMap((l) => l ?? []);
    assert.equal(texts.length, one.rows.length);
    one.rows.forEach((row, i) => assert.equal(texts[i], write(row), `row ${i}`));
  } finally {
    pool.close();
  }
});

Deno.test("with lanes, a scan is cut finer than its workers (laneBytes), run a worker's worth at a time: each lane ended once, after its rows", async () => {
  await using home = await engineHome();
  await home.write("/shared/r/a.log", log(20000));
  await home.write("/shared/r/b.log", log(7000));
  const pool = createScanWorkers({ count: 2, dataDir: home.tree.root, grants: () => [] });
  let running = 0;
  let most = 0;
  let started = 0;
  const workers: ScanWorkers = {
    count: pool.count,
    minShareBytes: 1,
    laneBytes: 64 << 10,
    start(task, listen) {
      started++;
      most = Math.max(most, ++running);
      let last = false;
      return pool.start(task, (m) => {
        if (!last && (m.kind === "done" || m.kind === "failed")) {
          last = true;
          running--;
        }
        listen(m);
      });
    },
  };
  try {
    const { one, write, run } = await renderedRuns(home, workers, "/shared/r/*.log", true);
    const byLane: string[][] = [];
    const ended = new Set<number>();
    for await (const part of run.parts!) {
      assert.ok(part instanceof RenderedRows && part.lane !== undefined);
      assert.ok(!ended.has(part.lane), `lane ${part.lane}: rows or an end after its end`);
      if (part.laneEnds) {
        assert.equal(part.count, 0);
        ended.add(part.lane);
        continue;
      }
      let start = 0;
      for (const end of part.ends) {
        (byLane[part.lane] ??= []).push(decoder.decode(part.bytes.subarray(start, end)));
        start = end;
      }
    }
    assert.ok(started >= 8, `${started} shares for 2 workers`);
    assert.equal(most, 2, "at most a share per worker at once");
    assert.equal(ended.size, started, "every lane ended once");
    const texts = byLane.flatMap((l) => l ?? []);
    assert.equal(texts.length, one.rows.length);
    one.rows.forEach((row, i) => assert.equal(texts[i], write(row), `row ${i}`));
  } finally {
    pool.close();
  }
});

/** The rows of `script` rendered as `format` asks (in the query's thread or on workers). */
async function renderedTexts(
  home: Awaited<ReturnType<typeof engineHome>>,
  script: string,
  overrides: Parameters<typeof home.context>[0],
  format: RowTextFormat,
  options: RenderOptions,
) {
  const compiled = await compile({ text: script }, home.context(overrides));
  assert.ok(compiled.ok);
  const warnings: Warning[] = [];
  const run = execute(compiled.plan, {
    signal: new AbortController().signal,
    onWarning: (w) => warnings.push(w),
    render: { format, options },
  });
  const texts: string[] = [];
  for await (const part of run.parts!) {
    assert.ok(part instanceof RenderedRows, "every batch comes rendered");
    let start = 0;
    for (const end of part.ends) {
      texts.push(decoder.decode(part.bytes.subarray(start, end)));
      start = end;
    }
  }
  return { texts, warnings, schema: run.schema() };
}

Deno.test("a result of the source's fields is written from its columns: one thread's rows, with and without the cache, on workers or not", async () => {
  await using home = await engineHome();
  const { pool, workers } = await logsOnWorkers(home, 4000, 1500);
  const columnCache = { dir: `${home.dir}/cache`, maxBytes: 1 << 30, blockBytes: 8192 };
  const src = `PARSE(pattern: '''${PATTERN}''', src: '/shared/r/*.log')`;
  try {
    const scripts = [
      `${src} | select(time, ip, status, bytes, path, agent)`,
      // Renamed, in another order, a field twice, a field the pattern has not: still fields.
      `${src} | select(agent as a, time, ip as client, time as t2)`,
      // A pushed filter: picked from a cached block's columns, rows without the cache.
      `${src} | filter(status = 201 and bytes > 1000) | select(path, bytes, time)`,
      // Fields, but of a sort's rows, not of the source's: the source must hand its rows to it.
      `${src} | sort(status desc, path) | select(path, status, time)`,
    ];
    const modes: [string, Parameters<typeof home.context>[0]][] = [
      ["one thread", {}],
      ["workers", { scanWorkers: workers }],
      ["cache, one thread (fill)", { columnCache }],
      ["cache, one thread (warm)", { columnCache }],
      ["cache, workers (fill)", {
        columnCache: { ...columnCache, dir: `${home.dir}/cache2` },
        scanWorkers: workers,
      }],
      ["cache, workers (warm)", {
        columnCache: { ...columnCache, dir: `${home.dir}/cache2` },
        scanWorkers: workers,
      }],
    ];
    const formats: [RowTextFormat, RenderOptions, Parameters<typeof formatSpec>[0]][] = [
      ["json", { timeZone: "Europe/Berlin" }, "application/x-ndjson"],
      ["csv", { timeZone: "UTC", timestampFormat: "dd/MMM/yyyy HH:mm:ss Z" }, "application/csv"],
    ];
    for (const script of scripts) {
      const one = await home.run(script);
      assert.ok(one.rows.length > 100, `${one.rows.length} rows: ${script}`);
      for (const [format, options, type] of formats) {
        const write = rowWriterOf(formatSpec(type))(one.schema.map((f) => f.name), options);
        const want = one.rows.map((row) => write(row));
        for (const [mode, overrides] of modes) {
          const got = await renderedTexts(home, script, overrides, format, options);
          assert.equal(got.texts.length, want.length, `${mode}, ${format}: ${script}`);
          got.texts.forEach((t, i) => assert.equal(t, want[i], `${mode}, ${format}, row ${i}`));
          assert.deepEqual(got.schema, one.schema, `schema (nulls seen), ${mode}`);
          assert.deepEqual(got.warnings, one.warnings, `warnings, ${mode}`);
        }
      }
    }
  } finally {
    pool.close();
  }
});
