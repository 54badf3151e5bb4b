/**
 * Edges of the parallel paths (engine/exec/parallel/) that the wider scan tests do not reach:
 * each worker's part of the memory limit, which columns held a null when only some shares saw
 * one, and a rendering share's batches kept in order through its backlog.
 */

import assert from "node:assert/strict";
import { engineHome } from "./support/engine_home.ts";
import { createScanWorkers } from "../actors/scan_workers.ts";
import { compile } from "../engine/engine.ts";
import { RenderedRows } from "../engine/render/rendered.ts";
import type {
  ParallelContext,
  ScanWorkers,
  ShareMessage,
  ShareTask,
} from "../engine/contracts/scan_workers.ts";
import { type CompiledPlan } from "../engine/plan/plan.ts";
import { type ExecContext, MemoryBudget, ProgressMeter } from "../engine/plan/context.ts";
import { parallelRows } from "../engine/exec/parallel/parallel_aggregate.ts";
import { rowSourceOf } from "../engine/exec/parallel/parallel_plan.ts";
import { RowCredits, runShare } from "../engine/share_run.ts";
import { sleep } from "../engine/util/sleep.ts";

const PATTERN = `INT:i ' ' LONG:n? ' ' NSPACE:path`;
const decoder = new TextDecoder();

/** Lines `i n /p/i`, the value `-` (null) for n in the lines `nullAt` says. */
function lines(count: number, nullAt: (i: number) => boolean): string {
  let out = "";
  for (let i = 0; i < count; i++) out += `${i} ${nullAt(i) ? "-" : i * 3} /p/${i}\n`;
  return out;
}

/** The texts of rendered parts, one per row. */
function texts(parts: readonly RenderedRows[]): string[] {
  const out: string[] = [];
  for (const part of parts) {
    let start = 0;
    for (const end of part.ends) {
      out.push(decoder.decode(part.bytes.subarray(start, end)));
      start = end;
    }
  }
  return out;
}

Deno.test("each scan worker gets its share of the query's memory limit, together no more than the limit", async () => {
  const limit = 3 * 1024 * 1024 + 1;
  await using home = await engineHome({ memoryLimit: limit });
  await home.write("/shared/m.log", lines(6000, () => false));
  const pool = createScanWorkers({ count: 3, dataDir: home.tree.root, grants: () => [] });
  const given: number[] = [];
  const workers = {
    ...pool,
    minShareBytes: 1,
    isolateBytes: 0,
    start: (task: ShareTask, listen: (m: ShareMessage) => void) => {
      given.push(task.limits.memoryLimit);
      return pool.start(task, listen);
    },
  };
  try {
    const many = await home.run(
      `PARSE(pattern: '''${PATTERN}''', src: '/shared/m.log') | select(count(*) as c)`,
      { scanWorkers: workers },
    );
    assert.equal(many.rows[0]!.c, 6000);
    assert.equal(given.length, 3, `${given.length} workers`);
    for (const m of given) assert.equal(m, Math.floor(limit / 3));
    assert.ok(given.reduce((a, b) => a + b, 0) <= limit);
  } finally {
    pool.close();
  }
});

/** The first part of the script's split over workers, as the server describes it (ShareTask.part). */
async function partOf(home: Awaited<ReturnType<typeof engineHome>>, script: string) {
  const workers = { count: 2, minShareBytes: 1, isolateBytes: 0 } as unknown as ScanWorkers;
  const compiled = await compile({ text: script }, home.context({ scanWorkers: workers }));
  assert.ok(compiled.ok);
  const split = (compiled.plan as CompiledPlan).split;
  assert.ok(split?.parts[0], "the script is split over workers, its first part described");
  return split.parts[0];
}

/**
 * Runs the script's root on `workers` through parallelRows, rendered, and gives which columns
 * held a null as the shares told it (ParallelContext.render.nulls), with the rows' texts.
 */
async function nullsSeen(
  home: Awaited<ReturnType<typeof engineHome>>,
  workers: ScanWorkers,
  script: string,
): Promise<{ nulls: boolean[]; texts: string[] }> {
  const compiled = await compile({ text: script }, home.context({ scanWorkers: workers }));
  assert.ok(compiled.ok);
  const plan = compiled.plan as CompiledPlan;
  const columns = plan.root.schema.map((f) => f.name);
  const nulls = columns.map(() => false);
  const split = plan.split;
  assert.ok(split && split.nodes[0] === plan.root && split.parts[0], "the root runs in workers");
  const parallel: ParallelContext = {
    workers,
    query: { user: home.user, workDir: `/users/${home.user.name}`, timeZone: "UTC" },
    now: plan.now,
    limits: plan.limits,
    nodes: new Map([[plan.root, 0]]),
    parts: [split.parts[0]],
    render: { task: { format: "json", options: { timeZone: "UTC" }, columns }, nulls },
  };
  const ctx: ExecContext = {
    signal: new AbortController().signal,
    timeZone: "UTC",
    now: plan.now,
    warn: () => {},
    progress: new ProgressMeter(),
    memory: new MemoryBudget(plan.limits.memoryLimit),
    parallel,
  };
  const shared = await parallelRows(plan.root, rowSourceOf(plan.root)!, 0, ctx, parallel);
  assert.ok("rows" in shared, "the rows come from workers");
  const parts: RenderedRows[] = [];
  for await (const part of shared.rows) {
    assert.ok(part instanceof RenderedRows);
    parts.push(part);
  }
  return { nulls, texts: texts(parts) };
}

Deno.test("rendered on workers, a column held a null when any share saw one, earlier or later", async () => {
  await using home = await engineHome();
  const count = 8000;
  // Nulls in the first lines only (the first share's), in the second share's, in the last
  // only, and nowhere. Four shares: which share tells last is the machine's choice, and a merge
  // that let the last one's word stand would go unseen only if, in all three files, the share
  // with the nulls told last (1 in 64).
  await home.write("/shared/first.log", lines(count, (i) => i < 50 && i % 7 === 0));
  await home.write(
    "/shared/second.log",
    lines(count, (i) => i > count / 4 + 50 && i < count / 4 + 100 && i % 7 === 0),
  );
  await home.write("/shared/last.log", lines(count, (i) => i > count - 50 && i % 7 === 0));
  await home.write("/shared/none.log", lines(count, () => false));
  const pool = createScanWorkers({ count: 4, dataDir: home.tree.root, grants: () => [] });
  const workers = { ...pool, minShareBytes: 1 };
  try {
    for (
      const [file, expected] of [
        ["first", [false, true]],
        ["second", [false, true]],
        ["last", [false, true]],
        ["none", [false, false]],
      ] as const
    ) {
      const script = `PARSE(pattern: '''${PATTERN}''', src: '/shared/${file}.log') | select(i, n)`;
      const seen = await nullsSeen(home, workers, script);
      assert.equal(seen.texts.length, count);
      assert.deepEqual(seen.nulls, expected, file);
    }
  } finally {
    pool.close();
  }
});

Deno.test("a rendering share short of credits keeps its batches in order through its backlog", async () => {
  await using home = await engineHome();
  const count = 60_000;
  await home.write("/shared/b.log", lines(count, () => false));
  const script = `PARSE(pattern: '''${PATTERN}''', src: '/shared/b.log') | select(i, path, n)`;
  const context = home.context();
  const size = (await Deno.stat(`${home.tree.root}/shared/b.log`)).size;
  const task: ShareTask = {
    query: { user: home.user, workDir: context.workDir, timeZone: "UTC" },
    now: Date.now(),
    node: 0,
    shares: [{ uri: "/shared/b.log", start: 0, end: size, size }],
    part: await partOf(home, script),
    limits: { memoryLimit: 64 << 20 },
    render: { format: "tsv", columns: ["i", "path", "n"], options: { timeZone: "UTC" } },
  };
  /**
   * Runs the share with no credit at first; `burst` credits come back every few milliseconds
   * while it scans (0: none), and as many as it needs once it read its input. The batches
   * posted, and how many of them came after the input was read (from the backlog).
   */
  async function run(burst: number, scripted?: RowCredits) {
    const credits = scripted ?? new RowCredits();
    if (!scripted) { while (credits.tryTake()); }
    const parts: RenderedRows[] = [];
    let scanned = false;
    let afterScan = 0;
    let done = false;
    const post = (m: ShareMessage) => {
      if (m.kind === "failed") throw new Error(JSON.stringify(m));
      if (m.kind === "rendered") {
        parts.push(new RenderedRows(m.bytes, m.ends));
        if (scanned) afterScan++;
      }
      if (m.kind === "progress") scanned = true;
      if (m.kind === "done") done = true;
    };
    const running = runShare(
      task,
      { datastores: context.datastores },
      post,
      credits,
      new AbortController().signal,
      { backlogDir: `${home.dir}/results` },
    );
    while (!done) {
      credits.add(scanned ? 1000 : burst);
      await sleep(2);
    }
    await running;
    return { parts, afterScan };
  }
  for (const burst of [0, 3, 8]) {
    const { parts, afterScan } = await run(burst);
    assert.ok(parts.length > 10, `${parts.length} batches`);
    if (burst === 0) assert.equal(afterScan, parts.length, "all came from the backlog");
    const got = texts(parts);
    assert.equal(got.length, count, `burst ${burst}`);
    got.forEach((t, i) => assert.equal(t, `${i}\t/p/${i}\t${i * 3}`, `burst ${burst}, row ${i}`));
  }
  // Not left to timing: the backlog fills with five batches, then credits are plenty; each
  // older batch goes before the next fresh one.
  const { parts } = await run(0, new LateCredits(5));
  const got = texts(parts);
  assert.equal(got.length, count, "late credits");
  got.forEach((t, i) => assert.equal(t, `${i}\t/p/${i}\t${i * 3}`, `late credits, row ${i}`));
});

/** Credits refused to the first `refused` asks, then always given (and never waited for). */
class LateCredits extends RowCredits {
  #asked = 0;
  constructor(private readonly refused: number) {
    super();
  }
  override tryTake(): boolean {
    return ++this.#asked > this.refused;
  }
  override take(): Promise<void> {
    return Promise.resolve();
  }
}
