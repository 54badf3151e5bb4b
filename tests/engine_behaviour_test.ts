/**
 * How a running query behaves, beyond its rows: cancellation, progress, warnings, the memory
 * budget, and files closed however a query ends (counted through /proc/self/fd).
 */

import assert from "node:assert/strict";
import { engineHome } from "./support/engine_home.ts";
import { compile, execute } from "../engine/engine.ts";
import { QueryError } from "../engine/front/diagnostics.ts";
import { openFilesUnder } from "./support/open_files.ts";
import { cpuStopwatch } from "./support/thread_cpu.ts";

const LINE = '10.0.0.5 - ann [01/May/2024:10:00:01 +0000] "GET /index.html HTTP/1.1" 200 5120\n';
const PATTERN =
  `'''IPV4:client ' - ' NSPACE:user ' [' HTTPDATE:time '] "' LD '" ' INT:status ' ' INT:bytes EOL'''`;

/** Files of `home` this process has open (other test modules run in the same process). */
function openFiles(home: { readonly dir: string }): number {
  return openFilesUnder(Deno.realPathSync(home.dir)).length;
}

async function bigLogHome(lines: number, files = 1) {
  const home = await engineHome();
  for (let i = 0; i < files; i++) await home.write(`/shared/big/part-${i}.log`, LINE.repeat(lines));
  return home;
}

Deno.test("cancelling a running query stops it within 100 ms and closes its files", async () => {
  await using home = await bigLogHome(200_000, 2);
  const compiled = await compile(
    { text: `PARSE(pattern: ${PATTERN}, src: '/shared/big/*.log') | filter(status = 200)` },
    home.context(),
  );
  assert.ok(compiled.ok);
  const before = openFiles(home);
  const controller = new AbortController();
  const run = execute(compiled.plan, { signal: controller.signal });
  const iterator = run.batches[Symbol.asyncIterator]();
  assert.equal((await iterator.next()).done, false);
  assert.ok(openFiles(home) > before, "a file is open while the query reads");
  const started = cpuStopwatch();
  controller.abort(new DOMException("stopped", "AbortError"));
  await assert.rejects(() => iterator.next(), (e: Error) => e.name === "AbortError");
  assert.ok(started() < 100, `the query stopped promptly, not after ${started()} ms of CPU`);
  assert.equal(openFiles(home), before);
});

Deno.test("limit stops reading early and closes the files", async () => {
  await using home = await bigLogHome(100_000);
  const before = openFiles(home);
  const { rows, progress } = await home.run(
    `PARSE(pattern: ${PATTERN}, src: '/shared/big/*.log') | limit(3)`,
  );
  assert.equal(rows.length, 3);
  assert.equal(openFiles(home), before);
  // Far less than the whole file was consumed before the end.
  assert.ok(progress.length <= 3, JSON.stringify(progress));
});

Deno.test("progress never decreases and is 1 at the end", async () => {
  await using home = await bigLogHome(30_000, 3);
  const { progress, rows } = await home.run(
    `PARSE(pattern: ${PATTERN}, src: '/shared/big/*.log') | select(count(*) as n)`,
  );
  assert.deepEqual(rows, [{ n: 90_000 }]);
  assert.ok(progress.length >= 3, JSON.stringify(progress));
  assert.ok(progress.some((p) => p > 0 && p < 1));
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i]! >= progress[i - 1]!);
  assert.equal(progress.at(-1), 1);
});

Deno.test("progress counts every file of a source from the start", async () => {
  // Four files of ~2.5 MB: read in 1 MiB chunks, progress climbs in steps of about a tenth.
  await using home = await bigLogHome(30_000, 4);
  const { progress } = await home.run(
    `PARSE(pattern: ${PATTERN}, src: '/shared/big/*.log') | select(count(*) as n)`,
  );
  const steps = progress.filter((p) => p > 0 && p < 1);
  assert.ok(steps[0]! < 0.2, `the first step is a share of all four files: ${steps[0]}`);
  assert.ok(steps.length >= 8, JSON.stringify(progress));
});

Deno.test("unmatched records and unreadable files are warnings, not failures", async () => {
  await using home = await engineHome();
  await home.write("/shared/logs/a.log", LINE + "not a record\n" + LINE);
  await home.write("/shared/logs/b.log", LINE);
  const outside = await Deno.makeTempFile();
  await Deno.symlink(outside, home.tree.resolve(home.user, "/shared/logs/c.log").real);
  try {
    const { rows, warnings } = await home.run(
      `PARSE(pattern: ${PATTERN}, src: '/shared/logs/*.log') | select(status)`,
    );
    assert.equal(rows.length, 3);
    assert.ok(warnings.some((w) => /skipped 1/.test(w.message)), JSON.stringify(warnings));
    assert.ok(warnings.some((w) => /c\.log/.test(w.message)), JSON.stringify(warnings));
  } finally {
    await Deno.remove(outside);
  }
});

Deno.test("group and join state past the memory budget fail with MEMORY_LIMIT too", async () => {
  await using home = await engineHome();
  const ids = Array.from({ length: 20_000 }, (_, i) => `${i}\n`).join("");
  await home.write("/shared/ids.log", ids);
  const ID = "'''INT:n EOL'''";
  const scripts = [
    // Every line is its own group: the group table grows with the input.
    `PARSE(pattern: ${ID}, src: '/shared/ids.log') | select(n, count(*) as c) | group(n)`,
    // The right side of a join is held in memory.
    `@r = PARSE(pattern: ${ID}, src: '/shared/ids.log');
     PARSE(pattern: ${ID}, src: '/shared/ids.log') | join(@r on left.n = right.n)`,
  ];
  for (const text of scripts) {
    const compiled = await compile({ text }, home.context({ limits: { memoryLimit: 64 * 1024 } }));
    assert.ok(compiled.ok, text);
    const run = execute(compiled.plan, { signal: new AbortController().signal });
    await assert.rejects(
      async () => {
        for await (const _ of run.batches) { /* drain */ }
      },
      (e: unknown) =>
        e instanceof QueryError && e.diagnostic.code === "MEMORY_LIMIT" &&
        /query\.memoryLimit/.test(e.message),
      text,
    );
  }
});

Deno.test("a sort past the memory budget fails with MEMORY_LIMIT naming the setting", async () => {
  await using home = await bigLogHome(20_000);
  const compiled = await compile(
    { text: `PARSE(pattern: ${PATTERN}, src: '/shared/big/*.log') | sort(bytes)` },
    home.context({ limits: { memoryLimit: 64 * 1024 } }),
  );
  assert.ok(compiled.ok);
  const run = execute(compiled.plan, { signal: new AbortController().signal });
  const before = openFiles(home);
  await assert.rejects(
    async () => {
      for await (const _ of run.batches) { /* drain */ }
    },
    (e: unknown) =>
      e instanceof QueryError && e.diagnostic.code === "MEMORY_LIMIT" &&
      /query\.memoryLimit/.test(e.message) && /64 KiB/.test(e.message),
  );
  assert.ok(openFiles(home) <= before);
});
