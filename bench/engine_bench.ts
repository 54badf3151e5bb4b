/**
 * The engine benchmark, side by side in one run (not part of CI):
 *
 * 1. access log: PARSE → filter(status = 200) → top 10 clients by total bytes;
 *    Trawl vs DuckDB (`regexp_extract`, one thread) vs a hand-written Deno script;
 * 2. JSON lines: count per status; Trawl vs DuckDB `read_json` (one thread) vs a hand-written
 *    Deno script with `JSON.parse` per line.
 *
 * Each run is its own process (its peak memory is its own); the best of `--runs` (default 2)
 * counts. DuckDB runs under Node (`bench/node/`; `npm install` there first).
 *
 *   deno run --allow-write --allow-read bench/gen_data.ts --mb 50
 *   deno run --allow-all bench/engine_bench.ts [--runs 3] [--direct]
 *
 * Trawl's figures are always those of the engine's entry point; `--direct` adds a diagnostic
 * row that drives the source functions by hand (not a Trawl figure, never a verdict).
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ACCESS_LOG, EVENTS_JSONL } from "./gen_data.ts";

const HERE = dirname(fileURLToPath(import.meta.url));

interface Run {
  readonly ms: number;
  readonly peakRssMb?: number;
  readonly via?: string;
  readonly result: unknown;
}

async function spawn(cmd: string, args: string[]): Promise<Run> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const stdout = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")} failed:\n${new TextDecoder().decode(out.stderr)}`);
  }
  return JSON.parse(stdout.split("\n").pop()!);
}

/** The fastest of `runs` runs, with the highest peak memory of them. */
async function best(runs: number, make: () => Promise<Run>): Promise<Run> {
  const all: Run[] = [];
  for (let i = 0; i < runs; i++) all.push(await make());
  const fastest = all.reduce((a, b) => (b.ms < a.ms ? b : a));
  const peaks = all.map((r) => r.peakRssMb ?? 0);
  return { ...fastest, peakRssMb: Math.max(...peaks) || undefined };
}

function row(name: string, r: Run, bytes: number, trawl: Run): string {
  const mbs = bytes / 1e6 / (r.ms / 1000);
  const ratio = trawl.ms === r.ms ? "1.00" : (r.ms / trawl.ms).toFixed(2);
  const rss = r.peakRssMb ? `${r.peakRssMb} MB` : "";
  return `| ${name.padEnd(24)} | ${r.ms.toFixed(0).padStart(7)} | ${mbs.toFixed(1).padStart(7)} | ${
    ratio.padStart(12)
  } | ${rss.padStart(8)} |`;
}

const HEADER = [
  "| system                   |      ms |    MB/s | Trawl speedup | peak RSS |",
  "|--------------------------|---------|---------|--------------|----------|",
];

async function main() {
  const runsAt = Deno.args.indexOf("--runs");
  const runs = runsAt >= 0 ? Number(Deno.args[runsAt + 1]) : 2;
  const direct = Deno.args.includes("--direct");
  const deno = Deno.execPath();
  const node = "node";
  const duckdb = join(HERE, "node", "duckdb_run.mjs");
  const sizes = {
    access: (await Deno.stat(ACCESS_LOG)).size,
    json: (await Deno.stat(EVENTS_JSONL)).size,
  };
  const verdicts: string[] = [];

  for (const task of ["access", "json"] as const) {
    const file = task === "access" ? ACCESS_LOG : EVENTS_JSONL;
    const trawl = await best(
      runs,
      () => spawn(deno, ["run", "--allow-all", join(HERE, "trawl_run.ts"), task]),
    );
    const sources = direct
      ? await best(
        runs,
        () => spawn(deno, ["run", "--allow-all", join(HERE, "trawl_run.ts"), task, "--direct"]),
      )
      : null;
    const duck = await best(runs, () => spawn(node, [duckdb, task, file]));
    const plain = await best(
      runs,
      () => spawn(deno, ["run", "--allow-read", join(HERE, "plain_run.ts"), task]),
    );
    const same = JSON.stringify(trawl.result) === JSON.stringify(duck.result) &&
      JSON.stringify(trawl.result) === JSON.stringify(plain.result);
    console.log(
      `\n## ${
        task === "access" ? "1. access log, top 10 clients" : "2. JSON lines, count per status"
      } (${(sizes[task] / 1e6).toFixed(0)} MB, Trawl via ${trawl.via})`,
    );
    console.log("Speedup column: the system's time over Trawl's (above 1: Trawl is faster).\n");
    console.log(
      [
        ...HEADER,
        row("Trawl", trawl, sizes[task], trawl),
        row("DuckDB (1 thread)", duck, sizes[task], trawl),
        row("hand-written Deno", plain, sizes[task], trawl),
        ...(sources ? [row("sources only (diag.)", sources, sizes[task], trawl)] : []),
      ].join("\n"),
    );
    console.log(
      same
        ? "results agree"
        : `RESULTS DIFFER:\n${JSON.stringify([trawl.result, duck.result, plain.result])}`,
    );
    const vsDuck = duck.ms / trawl.ms;
    const vsPlain = plain.ms / trawl.ms;
    if (task === "access") {
      verdicts.push(
        `task 1: ${vsDuck.toFixed(2)}× DuckDB (target ≥ 2) ${vsDuck >= 2 ? "MET" : "MISSED"}`,
      );
      verdicts.push(
        `task 1: ${vsPlain.toFixed(2)}× hand-written (target ≥ 0.8) ${
          vsPlain >= 0.8 ? "MET" : "MISSED"
        }`,
      );
    } else {
      verdicts.push(
        `task 2: ${vsDuck.toFixed(2)}× DuckDB (target ≥ 1.0) ${vsDuck >= 1 ? "MET" : "MISSED"}`,
      );
    }
    verdicts.push(
      `${task}: Trawl peak RSS ${trawl.peakRssMb} MB (target < 200) ${
        (trawl.peakRssMb ?? 0) < 200 ? "MET" : "MISSED"
      }`,
    );
  }
  console.log("\n## Targets\n");
  for (const v of verdicts) console.log(`- ${v}`);
}

if (import.meta.main) await main();
