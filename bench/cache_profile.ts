// deno-lint-ignore-file no-console
/**
 * The column cache in process, for profiling (bench/cache_bench.ts times it through a server):
 * one task of bench/cache_bench.ts run without the cache, then filling it, then from it, each
 * `--runs` times, with the query's stats. `--workers N` runs the scans on N scan workers as the
 * server does (0: in this thread).
 *
 *   deno run -A [--cpu-prof --cpu-prof-dir=DIR] bench/cache_profile.ts access|json|nested|hour
 *     [--workers 2] [--runs 2] [--only plain|first|warm] [--alternate]
 *
 * `--alternate`: `--runs` rounds of one read without the cache then one filling it (the cache
 * emptied before), taken in turn so that the load meets both alike; prints the medians and the
 * first read's cost over no cache, by time and by CPU (getrusage of the process, all threads),
 * and (Linux) the medians of the CPU by kind of thread: main, the scan workers, V8's helpers (the
 * collector, the compiler), the runtime's threads (file and network calls).
 */

import { join } from "node:path";
import { DATA_DIR } from "./gen_data.ts";
import process from "node:process";
import { CACHE_TASKS, type CacheName } from "./cache_bench.ts";
import { compile, execute } from "../engine/engine.ts";
import { newQueryStats } from "../engine/plan/context.ts";
import { FsResourceTree } from "../home/resource_tree.ts";
import { createDatastoreRegistry } from "../connectors/file/registry.ts";
import { createScanWorkers } from "../actors/scan_workers.ts";
import type { ColumnCacheConfig } from "../engine/contracts/column_cache.ts";

function option(name: string): string | undefined {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}

const name = Deno.args[0] as CacheName;
const task = CACHE_TASKS[name];
if (!task) {
  console.error("usage: cache_profile.ts access|json|nested|hour|wide [--workers N] [--runs N]");
  Deno.exit(2);
}
// Without its data the task reads nothing, and its figures would say nothing.
try {
  await Deno.stat(task.file);
} catch {
  console.error(
    `no ${task.file}: run bench/gen_data.ts first (the hour's week.log: bench/cache_bench.ts)`,
  );
  Deno.exit(2);
}
const runs = Number(option("runs") ?? 2);
const count = Number(option("workers") ?? 2);
const only = option("only");
const home = await Deno.makeTempDir({ prefix: "trawl-cache-profile-" });
const data = join(home, "data");
await Deno.mkdir(join(data, "system", "datastores"), { recursive: true });
await Deno.mkdir(join(data, "users", "bench"), { recursive: true });
await Deno.writeTextFile(
  join(data, "system", "datastores", "bench.json"),
  JSON.stringify({ type: "FILE", fileStore: { root: DATA_DIR } }),
);
const tree = new FsResourceTree(data);
const workers = count > 0
  ? createScanWorkers({ count, dataDir: data, grants: () => [], warm: true })
  : undefined;
const cache: ColumnCacheConfig = { dir: join(home, "cache"), maxBytes: 4 * 2 ** 30 };

/** The process's CPU (all threads, getrusage), in ms. */
function cpuMs(u: { user: number; system: number }): number {
  return (u.user + u.system) / 1000;
}

/** The kinds of this process's threads, by their names (Linux's /proc/self/task/<tid>/comm). */
type ThreadKind = "main" | "workers" | "v8" | "runtime" | "other";
const KINDS: readonly ThreadKind[] = ["main", "workers", "v8", "runtime", "other"];

function kindOf(comm: string): ThreadKind {
  if (comm === "deno") return "main";
  if (comm.startsWith("worker-")) return "workers"; // the scan workers' isolates
  if (comm.startsWith("V8 ")) return "v8"; // the collector's and the compiler's helpers
  if (comm.startsWith("tokio-")) return "runtime"; // Deno's runtime: file and network calls
  return "other";
}

/**
 * CPU by thread (ns on the CPU, /proc/self/task/<tid>/schedstat), keyed by thread id; empty where
 * there is no /proc. A thread that ended between two readings is missed (the scan workers stay).
 */
function threadCpu(): Map<string, { kind: ThreadKind; ns: number }> {
  const out = new Map<string, { kind: ThreadKind; ns: number }>();
  try {
    for (const entry of Deno.readDirSync("/proc/self/task")) {
      try {
        const dir = `/proc/self/task/${entry.name}`;
        const ns = Number(Deno.readTextFileSync(`${dir}/schedstat`).split(" ")[0]);
        out.set(entry.name, { kind: kindOf(Deno.readTextFileSync(`${dir}/comm`).trim()), ns });
      } catch { /* ended meanwhile */ }
    }
  } catch { /* no /proc */ }
  return out;
}

/** CPU ms by kind of thread between two readings of threadCpu(). */
function threadCpuSince(
  before: Map<string, { kind: ThreadKind; ns: number }>,
): Record<ThreadKind, number> {
  const out = { main: 0, workers: 0, v8: 0, runtime: 0, other: 0 };
  for (const [tid, now] of threadCpu()) {
    out[now.kind] += (now.ns - (before.get(tid)?.ns ?? 0)) / 1e6;
  }
  return out;
}

async function once(
  withCache: boolean,
): Promise<
  { ms: number; cpuMs: number; threads: Record<ThreadKind, number>; rows: number; stats: unknown }
> {
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  const threads0 = threadCpu();
  const compiled = await compile({ text: task.script }, {
    user: { name: "bench", groups: [], admin: true },
    workDir: "/users/bench",
    timeZone: "UTC",
    args: {},
    datastores: createDatastoreRegistry(tree),
    tree,
    limits: { memoryLimit: 1 << 30 },
    ...(workers ? { scanWorkers: workers } : {}),
    ...(withCache ? { columnCache: cache } : {}),
  });
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
  const stats = newQueryStats();
  const run = execute(compiled.plan, {
    signal: new AbortController().signal,
    onWarning: (w) => console.error(`warning: ${w.message}`),
    stats,
  });
  let rows = 0;
  for await (const batch of run.batches) rows += batch.length;
  return {
    ms: performance.now() - started,
    cpuMs: cpuMs(process.cpuUsage(cpu0)),
    threads: threadCpuSince(threads0),
    rows,
    stats,
  };
}

try {
  await once(false); // compilers warmed
  const show = (label: string, r: Awaited<ReturnType<typeof once>>) => {
    const s = r.stats as Record<string, number>;
    console.log(
      `${label.padEnd(6)} ${r.ms.toFixed(0).padStart(6)} ms  cpu ${
        r.cpuMs.toFixed(0).padStart(6)
      } ms  rows ${r.rows}  bytesRead ${s.bytesRead} cacheBytes ${s.cacheBytes} blocks ${s.cacheBlocks} skipped ${s.cacheBlocksSkipped}`,
    );
  };
  const least: string[] = [];
  const phase = async (label: string, run: () => Promise<Awaited<ReturnType<typeof once>>>) => {
    const all = [];
    for (let i = 0; i < runs; i++) {
      const r = await run();
      show(label, r);
      all.push(r);
    }
    least.push(
      `${label} least: ${Math.min(...all.map((r) => r.ms)).toFixed(0)} ms, cpu ${
        Math.min(...all.map((r) => r.cpuMs)).toFixed(0)
      } ms`,
    );
  };
  if (Deno.args.includes("--alternate")) {
    // Both ways warmed first (the fill's code too), then taken in turn.
    await Deno.remove(cache.dir, { recursive: true }).catch(() => {});
    await once(true);
    await Deno.remove(cache.dir, { recursive: true }).catch(() => {});
    await once(true);
    const plain: Awaited<ReturnType<typeof once>>[] = [];
    const first: Awaited<ReturnType<typeof once>>[] = [];
    for (let i = 0; i < runs; i++) {
      plain.push(await once(false));
      await Deno.remove(cache.dir, { recursive: true }).catch(() => {});
      first.push(await once(true));
    }
    const med = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
    };
    const pm = med(plain.map((r) => r.ms)), fm = med(first.map((r) => r.ms));
    const pc = med(plain.map((r) => r.cpuMs)), fc = med(first.map((r) => r.cpuMs));
    // Per round: the fill's CPU over the plain read's just before it.
    const pairs = first.map((r, i) => r.cpuMs / plain[i]!.cpuMs - 1);
    // Where the CPU went, by kind of thread: the fill's cost in the workers (scan into columns,
    // encoding, writes) told apart from the collector's helpers and the runtime's calls.
    console.log(
      `by thread, medians (ms of CPU), no cache -> first read: ${
        KINDS.map((k) =>
          `${k} ${med(plain.map((r) => r.threads[k])).toFixed(0)} -> ${
            med(first.map((r) => r.threads[k])).toFixed(0)
          }`
        ).join(", ")
      }`,
    );
    console.log(
      `${name}: no cache ${pm.toFixed(0)} ms cpu ${pc.toFixed(0)}; first ${fm.toFixed(0)} ms cpu ${
        fc.toFixed(0)
      }; first read cost: time ${((fm / pm - 1) * 100).toFixed(0)}%, cpu ${
        ((fc / pc - 1) * 100).toFixed(0)
      }% (per round median ${(med(pairs) * 100).toFixed(0)}%; ${
        pairs.map((x) => (x * 100).toFixed(0)).join(" ")
      }) (load ${Deno.loadavg().join(" ")})`,
    );
  } else if (!only || only === "plain") await phase("plain", () => once(false));
  const alternate = Deno.args.includes("--alternate");
  if (!alternate && (!only || only === "first")) {
    await phase("first", async () => {
      await Deno.remove(cache.dir, { recursive: true }).catch(() => {});
      return await once(true);
    });
  }
  if (!alternate && (!only || only === "warm")) {
    if (only === "warm") await once(true);
    await phase("warm", () => once(true));
  }
  if (!alternate) console.log(`${least.join("; ")} (load ${Deno.loadavg().join(" ")})`);
} finally {
  workers?.close();
  await Deno.remove(home, { recursive: true });
}
