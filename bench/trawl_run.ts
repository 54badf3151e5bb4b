// deno-lint-ignore-file no-console
/**
 * One Trawl run of a benchmark task in process (no server), for profiling:
 * `deno run --allow-all --cpu-prof bench/trawl_run.ts nested`. Prints one JSON line:
 * `{ ms, peakRssMb, via, result }`. bench/engine_bench.ts measures through the HTTP API instead.
 *
 *   deno run --allow-all bench/trawl_run.ts access|json|nested|wide [--direct]
 *
 * The script runs through the engine's entry point (compile/execute) over a FILE datastore
 * rooted at bench/data; a script the engine cannot run fails the run. `--direct` is a
 * diagnostic only, labelled as such: it drives the source functions and does the filter and
 * aggregation by hand, to tell the sources' cost from the operators'.
 */

import { join } from "node:path";
import { ACCESS_LOG, DATA_DIR, EVENTS_JSONL } from "./gen_data.ts";
import { ACCESS_PATTERN, type TaskName, TASKS } from "./engine_bench.ts";
import { compilePattern } from "../engine/pattern/compile_pattern.ts";
import { parseSource } from "../engine/exec/parse_source.ts";
import { readJsonSource } from "../engine/exec/read_json_source.ts";
import { MemoryBudget, ProgressMeter } from "../engine/plan/context.ts";
import { compile, execute } from "../engine/engine.ts";
import { FsResourceTree } from "../home/resource_tree.ts";
import { createDatastoreRegistry } from "../connectors/file/registry.ts";
import type { FileEntry } from "../engine/contracts/datastore.ts";
import type { IpAddr, Row } from "../engine/values/values.ts";
import { openFile } from "../connectors/file/open_file.ts";

const SCRIPTS = Object.fromEntries(
  Object.entries(TASKS).map(([name, task]) => [name, task.script]),
) as Record<TaskName, string>;

type Task = TaskName;

function peakRssMb(): number {
  const status = Deno.readTextFileSync("/proc/self/status");
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

function context() {
  return {
    signal: new AbortController().signal,
    timeZone: "UTC",
    now: Date.now(),
    warn: (w: { message: string }) => console.error(`warning: ${w.message}`),
    progress: new ProgressMeter(),
    memory: new MemoryBudget(1 << 30),
  };
}

async function entry(path: string): Promise<FileEntry> {
  const info = await Deno.stat(path);
  return {
    uri: path,
    size: info.size,
    modified: 0,
    pathTime: null,
    open: (s) => openFile(path, s),
  };
}

async function direct(task: Task): Promise<unknown> {
  const ctx = context();
  if (task === "access") {
    const compiled = compilePattern(ACCESS_PATTERN, { timeZone: "UTC" });
    if (!compiled.ok) throw new Error(compiled.message);
    const totals = new Map<number | string, { client: IpAddr; total: number }>();
    const rows = parseSource([await entry(ACCESS_LOG)], compiled.pattern, [
      "client",
      "status",
      "bytes",
    ], ctx);
    for await (const batch of rows) {
      for (const r of batch) {
        if (r.status !== 200) continue;
        const ip = r.client as IpAddr;
        const t = totals.get(ip.key);
        if (t) t.total += (r.bytes as number | null) ?? 0;
        else totals.set(ip.key, { client: ip, total: (r.bytes as number | null) ?? 0 });
      }
    }
    return [...totals.values()].sort((a, b) => b.total - a.total).slice(0, 10)
      .map((t) => [formatIp(t.client), t.total]);
  }
  const counts = new Map<unknown, number>();
  for await (const batch of readJsonSource([await entry(EVENTS_JSONL)], ["status"], ctx)) {
    for (const r of batch) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => Number(a[0]) - Number(b[0]));
}

function formatIp(ip: IpAddr): string {
  const b = ip.bits as number;
  return [b >>> 24, (b >>> 16) & 255, (b >>> 8) & 255, b & 255].join(".");
}

/** Runs the task's script through compile/execute; throws when the engine cannot run it. */
async function viaEngine(task: Task): Promise<Row[]> {
  const home = await Deno.makeTempDir({ prefix: "trawl-bench-" });
  try {
    const data = join(home, "data");
    await Deno.mkdir(join(data, "system", "datastores"), { recursive: true });
    await Deno.mkdir(join(data, "users", "bench"), { recursive: true });
    await Deno.writeTextFile(
      join(data, "system", "datastores", "bench.json"),
      JSON.stringify({ type: "FILE", fileStore: { root: DATA_DIR } }),
    );
    const tree = new FsResourceTree(data);
    const compiled = await compile({ text: SCRIPTS[task] }, {
      user: { name: "bench", groups: [], admin: true },
      workDir: "/users/bench",
      timeZone: "UTC",
      args: {},
      datastores: createDatastoreRegistry(tree),
      tree,
      limits: { memoryLimit: 1 << 30 },
    });
    if (!compiled.ok) {
      throw new Error(`engine: ${compiled.diagnostics.map((d) => d.message).join("; ")}`);
    }
    const run = execute(compiled.plan, {
      signal: new AbortController().signal,
      onWarning: (w) => console.error(`warning: ${w.message}`),
    });
    const out: Row[] = [];
    for await (const batch of run.batches) out.push(...batch);
    return out;
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

if (import.meta.main) {
  const task = Deno.args[0] as Task;
  if (!(task in SCRIPTS)) {
    console.error("usage: trawl_run.ts access|json|nested|wide [--direct]");
    Deno.exit(2);
  }
  const started = performance.now();
  const diagnostic = Deno.args.includes("--direct") && (task === "access" || task === "json");
  const via = diagnostic ? "sources (--direct diagnostic, not the engine)" : "engine";
  const result: unknown = diagnostic
    ? await direct(task)
    : (await viaEngine(task)).map((r) =>
      Object.values(r).map((v) =>
        typeof v === "object" && v !== null && "version" in v ? formatIp(v as IpAddr) : v
      )
    );
  const ms = performance.now() - started;
  console.log(JSON.stringify({ ms, peakRssMb: peakRssMb(), via, result }));
}
