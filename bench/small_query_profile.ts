// deno-lint-ignore-file no-console
/**
 * Profiles a trivial synchronous query (`VALUES((a: 1))`) end to end in process: the app main.ts
 * serves, `app.fetch` without a socket, 16 in flight, `--n` requests (default 20 000) after a
 * warm-up. Prints CPU µs per request for it and for GET whoami (auth alone); with
 * `deno run -A --cpu-prof --cpu-prof-dir=DIR`, the profile says where the time goes
 * (`deno run -A bench/profile_top.ts DIR/*.cpuprofile` lists the top functions).
 */

import { join } from "node:path";
import process from "node:process";
import { startServer } from "../main.ts";
import { createApp } from "../routes/app.ts";
import { batchedSink, createLogger } from "../home/log.ts";

const TOKEN_LINE = /^trawl_[A-Za-z0-9_-]{43}$/;
const i = Deno.args.indexOf("--n");
const N = i >= 0 ? Number(Deno.args[i + 1]) : 20_000;

const dir = await Deno.makeTempDir({ prefix: "trawl-small-query-" });
const lines: string[] = [];
const stop = new AbortController();
const devNull = await Deno.open("/dev/null", { write: true });
const server = await startServer({
  log: createLogger(batchedSink(devNull)),
  home: join(dir, "home"),
  overrides: { "wgui.port": "0", "wgui.host": "127.0.0.1", "query.maxQueued": "100000" },
  out: (line) => lines.push(line),
  signal: stop.signal,
});
try {
  const token = lines.find((l) => TOKEN_LINE.test(l))!;
  const app = createApp(server.deps);
  const auth = { Authorization: `Bearer ${token}` };
  const kinds: [string, () => Request][] = [
    ["sync VALUES((a: 1))", () =>
      new Request("http://in.process/API/v1.0/?scriptPath=/user", {
        method: "POST",
        // With its Content-Length, as an HTTP client sends it (a Request made here has none,
        // and the body would be read as a chunked stream).
        headers: { ...auth, "Content-Type": "text/vnd.engine.script", "Content-Length": "14" },
        body: "VALUES((a: 1))",
      })],
    ["GET whoami", () => new Request("http://in.process/API/v1.0/whoami", { headers: auth })],
  ];
  for (const [name, make] of kinds) {
    const run = async (n: number) => {
      let started = 0;
      const worker = async () => {
        while (started++ < n) {
          const res = await app.fetch(make());
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`${name}: ${res.status}`);
        }
      };
      const cpu = process.cpuUsage();
      const t = performance.now();
      await Promise.all(Array.from({ length: 16 }, worker));
      const used = process.cpuUsage(cpu);
      return { cpu: (used.user + used.system) / n, wall: (performance.now() - t) * 1000 / n };
    };
    await run(2000);
    const r = await run(N);
    // One at a time: the latency of a request alone (waits, not only work).
    const alone: number[] = [];
    for (let k = 0; k < 300; k++) {
      const t = performance.now();
      const res = await app.fetch(make());
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
  stop.abort();
  await server.finished;
  server.deps.supervisor?.stop();
  await server.deps.log.flush();
  devNull.close();
  await Deno.remove(dir, { recursive: true });
}
