// deno-lint-ignore-file no-console
/**
 * The wide task's peak memory by kind of answer (issue 23's < 400 MB): one server (2 workers),
 * the wide query answered plain, asynchronously, gzipped and in zstd, in turn; before each, the
 * server's peak (VmHWM) is reset (`/proc/PID/clear_refs`, Linux), so each line's peak is that
 * query's alone, beside its RSS before and after. engine_bench.ts prints the peak over all its
 * runs; this says which answer makes it.
 *
 *   deno run -A bench/rss_probe.ts
 */
import { makeHome, startServer, trawlAsync, trawlQuery } from "./engine_bench.ts";

const mb = (pid: number, field: "VmHWM" | "VmRSS") =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(Deno.readTextFileSync(`/proc/${pid}/status`))![1]) /
  1024;

const { home, token } = await makeHome();
const server = await startServer(home, ["query.workers=2"]);
try {
  for (const mode of ["identity", "identity", "async", "identity", "gzip", "zstd", "gzip"]) {
    Deno.writeTextFileSync(`/proc/${server.pid}/clear_refs`, "5");
    const before = mb(server.pid, "VmRSS");
    const run = mode === "async"
      ? await trawlAsync(server, token, "wide")
      : await trawlQuery(server, token, "wide", mode);
    console.log(
      `${mode.padEnd(8)} ${run.ms.toFixed(0)} ms; RSS before ${before.toFixed(0)} MB, peak ${
        mb(server.pid, "VmHWM").toFixed(0)
      } MB, after ${mb(server.pid, "VmRSS").toFixed(0)} MB (target < 400)`,
    );
  }
} finally {
  await server.stop();
  await Deno.remove(home, { recursive: true });
}
