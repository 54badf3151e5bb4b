import assert from "node:assert/strict";
import { engineHome } from "../../../tests/support/engine_home.ts";
import type { ScanWorkers } from "../../contracts/scan_workers.ts";
import { compile, explain } from "../../engine.ts";

const LOG = "200 512 /a\n404 128 /b\n200 2048 /c\n500 64 /d\n";
const PARSE = (src: string) =>
  `PARSE(pattern: '''INT:status ' ' INT:bytes ' ' NSPACE:path''', src: '${src}')`;

/** Workers that compiling never starts: the split is decided before anything runs. */
const WORKERS: ScanWorkers = {
  count: 2,
  minShareBytes: 0,
  start() {
    throw new Error("compile() started a worker");
  },
};

async function logHome() {
  const home = await engineHome();
  await home.write("/shared/a.log", LOG);
  await home.write("/shared/b.log", LOG);
  return home;
}

async function explained(
  home: Awaited<ReturnType<typeof logHome>>,
  text: string,
  workers: ScanWorkers | null = WORKERS,
): Promise<string[]> {
  const compiled = await compile({ text }, home.context(workers ? { scanWorkers: workers } : {}));
  assert.ok(compiled.ok, JSON.stringify(!compiled.ok && compiled.diagnostics));
  // Without the schemas: the lines say which operator runs where.
  return explain(compiled.plan).split("\n").map((line) => line.replace(/ {2}\[.*\]$/, ""));
}

Deno.test("explain() shows an aggregate over a PARSE of files as the part workers run", async () => {
  await using home = await logHome();
  assert.deepEqual(
    await explained(
      home,
      `${PARSE("/shared/a.log")} | select(status, count(*) as n) | group(status)`,
    ),
    [
      "aggregate keys(status) aggs(count(*)) in workers #0",
      "  source PARSE(src: '/shared/a.log') reads(status)",
    ],
  );
});

Deno.test("explain() numbers the parts in walk order and leaves the merge above them here", async () => {
  await using home = await logHome();
  const a = `${PARSE("/shared/a.log")} | select(status, count(*) as n) | group(status)`;
  const b = `${PARSE("/shared/b.log")} | filter(bytes > 100) | sort(bytes desc) | limit(2)`;
  const lines = await explained(
    home,
    `@a = ${a};\n@b = ${b};\n@a | join(@b on left.status = right.status)`,
  );
  assert.deepEqual(lines.filter((l) => l.includes("in workers")).map((l) => l.trim()), [
    "aggregate keys(status) aggs(count(*)) in workers #0",
    "sort bytes desc (top 2) in workers #1",
  ]);
  assert.match(lines[0]!, /^(left)?join on /);
});

Deno.test("explain() shows a pipeline that filters nothing in workers only when its rows are rendered", async () => {
  await using home = await logHome();
  assert.deepEqual(await explained(home, `${PARSE("/shared/a.log")} | select(path)`), [
    "project path as path in workers #0 (when its rows are rendered)",
    "  source PARSE(src: '/shared/a.log') reads(path)",
  ]);
});

Deno.test("explain() shows no split for a query without workers", async () => {
  await using home = await logHome();
  const text = `${PARSE("/shared/a.log")} | select(status, count(*) as n) | group(status)`;
  const lines = await explained(home, text, null);
  assert.ok(lines.every((l) => !l.includes("workers")), lines.join("\n"));
});
