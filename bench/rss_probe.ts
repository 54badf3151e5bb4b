// deno-lint-ignore-file no-console
/**
 * The wide task's peak memory by kind of answer (issue 23's < 400 MB): one server (2 workers),
 * the wide query answered plain, asynchronously, gzipped and in zstd, in turn; before each, the
 * server's peak (VmHWM) is reset (`/proc/PID/clear_refs`, Linux), so each line's peak is that
 * query's alone, beside its RSS before and after. engine_bench.ts prints the peak over all its
 * runs; this says which answer makes it. By hand, never in CI:
 *
 *   deno run -A bench/rss_probe.ts [--modes identity,gzip,zstd,async,...] [--ref DIR]
 *     [--rounds 1] [--v8 FLAGS]
 *
 * `--ref DIR`: a second build (a checkout, its `bench/data` a link to this one's), its own
 * server, the two taking turns for `--rounds` rounds, so that both meet the same moments of a
 * shared machine. `--v8 FLAGS` replaces both builds' start-task V8 flags.
 */
import { parseArgs } from "node:util";
import { makeHome, startServer, trawlAsync, trawlQuery } from "./engine_bench.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    modes: { type: "string", default: "identity,identity,async,identity,gzip,zstd,gzip" },
    ref: { type: "string" },
    rounds: { type: "string", default: "1" },
    // engine_bench.ts's own option, read by startServer.
    v8: { type: "string" },
  },
});

const mb = (pid: number, field: "VmHWM" | "VmRSS") =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(Deno.readTextFileSync(`/proc/${pid}/status`))![1]) /
  1024;

/** The sequence of answers on a fresh server of the build at `root` (this one: undefined). */
async function probe(name: string, root?: string): Promise<void> {
  const { home, token } = await makeHome();
  const server = await startServer(home, ["query.workers=2"], root);
  let highest = 0;
  try {
    for (const mode of values.modes.split(",")) {
      Deno.writeTextFileSync(`/proc/${server.pid}/clear_refs`, "5");
      const before = mb(server.pid, "VmRSS");
      const run = mode === "async"
        ? await trawlAsync(server, token, "wide")
        : await trawlQuery(server, token, "wide", mode);
      const peak = mb(server.pid, "VmHWM");
      highest = Math.max(highest, peak);
      console.log(
        `${name} ${mode.padEnd(8)} ${run.ms.toFixed(0)} ms; RSS before ${
          before.toFixed(0)
        } MB, peak ${peak.toFixed(0)} MB, after ${
          mb(server.pid, "VmRSS").toFixed(0)
        } MB (target < 400)`,
      );
    }
    console.log(`${name}: highest peak ${highest.toFixed(0)} MB; load ${Deno.loadavg().join(" ")}`);
  } finally {
    await server.stop();
    await Deno.remove(home, { recursive: true });
  }
}

for (let round = 0; round < Number(values.rounds); round++) {
  if (values.ref) await probe("ref ", values.ref);
  await probe("this");
}
