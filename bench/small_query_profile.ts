// deno-lint-ignore-file no-console
/**
 * Profiles a trivial synchronous query (`VALUES((a: 1))`) end to end in process: the app main.ts
 * serves, `app.fetch` without a socket, 16 in flight, `--n` requests (default 20 000) after a
 * warm-up. Prints CPU µs per request for it and for GET whoami (auth alone); with
 * `deno run -A --cpu-prof --cpu-prof-dir=DIR`, the profile says where the time goes
 * (`deno run -A bench/profile_top.ts DIR/*.cpuprofile` lists the top functions).
 */

import { inProcessServer, perRequest } from "./in_process.ts";

const i = Deno.args.indexOf("--n");
const N = i >= 0 ? Number(Deno.args[i + 1]) : 20_000;

const dir = await Deno.makeTempDir({ prefix: "trawl-small-query-" });
try {
  await using s = await inProcessServer(dir);
  for (const [name, make] of s.kinds) {
    await perRequest(s.app, make, 2000, 16);
    const r = await perRequest(s.app, make, N, 16);
    // One at a time: the latency of a request alone (waits, not only work).
    const alone: number[] = [];
    for (let k = 0; k < 300; k++) {
      const t = performance.now();
      const res = await s.app.fetch(make());
      await res.arrayBuffer();
      alone.push(performance.now() - t);
    }
    alone.sort((a, b) => a - b);
    console.log(
      `${name}: ${r.cpu.toFixed(0)} CPU µs/request, ${r.wall.toFixed(0)} wall µs/request ` +
        `(16 in flight); alone p50 ${(alone[150]! * 1000).toFixed(0)} µs`,
    );
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
