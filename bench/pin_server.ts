/**
 * A server as a machine of one core, for the benches' `--pin` (pg_scan_bench, pg_queries_bench):
 * every thread of the `main.ts serve` process whose home is `dir` pinned to CPU `cpu` with
 * `taskset -a` (the scan workers it starts later inherit it).
 */

export async function pinServer(dir: string, cpu: number): Promise<void> {
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`).catch(() => "");
    if (!cmdline.split("\0").includes(dir)) continue;
    const out = await new Deno.Command("taskset", {
      args: ["-a", "-p", "-c", String(cpu), entry.name],
      stdout: "null",
    }).output();
    if (!out.success) {
      throw new Error(`taskset of ${entry.name}: ${new TextDecoder().decode(out.stderr)}`);
    }
    return;
  }
  throw new Error(`no server process runs with home ${dir}`);
}
