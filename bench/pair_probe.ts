// deno-lint-ignore-file no-console
/**
 * One task of the engine bench on two builds of Trawl, queried in turn, run after run: this
 * working tree against `--ref DIR` (a checkout of the revision to compare with, its `bench/data`
 * a link to this one's, as `engine_bench.ts --ref` wants it), each on a home of its own. Lighter
 * than `engine_bench.ts --ref` (no peers, no compressed answers): the asynchronous query not read
 * (`async`) or the synchronous answer read whole (`sync`), with the server's CPU, and the medians.
 * On a shared machine only pairs taken in turn resolve a change of 10-20%. By hand, never in CI:
 *
 *   deno run -A bench/pair_probe.ts --ref DIR [--task wide] [--modes async,sync] [--runs 5]
 *     [--set K=V]... [--env K=V]...   (--env: this build's server only)
 */

import { parseArgs } from "node:util";
import {
  loadAverage,
  makeHome,
  median,
  serverEnv,
  startServer,
  type TaskName,
  trawlAsync,
  trawlQuery,
} from "./engine_bench.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    ref: { type: "string" },
    task: { type: "string", default: "wide" },
    modes: { type: "string", default: "async,sync" },
    runs: { type: "string", default: "5" },
    set: { type: "string", multiple: true, default: [] },
    // engine_bench.ts's own options, read by startServer and serverEnv (--env K=V: a variable
    // of this build's server only).
    env: { type: "string", multiple: true, default: [] },
    profile: { type: "string" },
    v8: { type: "string" },
  },
});
if (!values.ref) throw new Error("--ref DIR: the build to compare with");
const task = values.task as TaskName;
const sets = ["query.workers=2", ...values.set];
const homes = [await makeHome(), await makeHome()];
const servers = [
  { name: "ref", server: await startServer(homes[0]!.home, sets, values.ref) },
  { name: "this", server: await startServer(homes[1]!.home, sets, undefined, serverEnv()) },
];
const figures = new Map<string, number[]>();
const note = (key: string, v: number) => figures.set(key, [...figures.get(key) ?? [], v]);
console.log(
  `# ${task}, ${values.modes}, ${values.runs} pairs (${sets.join(" ")}); ${loadAverage()}`,
);
try {
  // Each server's workers warmed up once, untimed.
  for (const [k, { server }] of servers.entries()) await trawlAsync(server, homes[k]!.token, task);
  for (let run = 0; run < Number(values.runs); run++) {
    for (const mode of values.modes.split(",")) {
      for (const [k, { name, server }] of servers.entries()) {
        const token = homes[k]!.token;
        const r = mode === "async"
          ? await trawlAsync(server, token, task)
          : await trawlQuery(server, token, task);
        note(`${name} ${mode} ms`, r.ms);
        note(`${name} ${mode} CPU ms`, r.cpuMs ?? NaN);
      }
    }
  }
} finally {
  for (const { server } of servers) await server.stop();
  for (const { home } of homes) await Deno.remove(home, { recursive: true });
}
for (const [key, xs] of figures) {
  console.log(
    `${key.padEnd(18)} median ${median(xs).toFixed(0).padStart(6)}  runs ${
      xs.map((x) => x.toFixed(0)).join(", ")
    }`,
  );
}
console.log(loadAverage());
