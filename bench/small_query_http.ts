// deno-lint-ignore-file no-console
/**
 * Where a trivial query's HTTP time goes: the same app served through the front
 * (routes/guarded_server.ts, as `main.ts serve` does) and by a bare `Deno.serve(app.fetch)`
 * (no front: no proxy hop, and none of its guards), beside a bare `Deno.serve` answering
 * `{"status":"ok"}` in its own process, each loaded by autocannon (bench/node) with 16
 * keep-alive clients for `--seconds` (5), alternated for `--rounds` (3), medians printed with
 * the load average. Not the figure (bench/api_bench.ts part 1 is); it says what the
 * front costs: `deno run -A --unstable-no-legacy-abort bench/small_query_http.ts`.
 */

import { join } from "node:path";
import { inProcessServer } from "./in_process.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const AUTOCANNON = Deno.env.get("AUTOCANNON") ??
  join(ROOT, "bench", "node", "node_modules", "autocannon", "autocannon.js");
const option = (name: string, fallback: number) => {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
};
const SECONDS = option("seconds", 5);
const ROUNDS = option("rounds", 3);

async function load(url: string, args: string[] = []): Promise<number> {
  const run = async (seconds: number) => {
    const out = await new Deno.Command("node", {
      args: [AUTOCANNON, "--json", "-c", "16", ...args, "-d", String(seconds), url],
      stdout: "piped",
      stderr: "null",
    }).output();
    const r = JSON.parse(new TextDecoder().decode(out.stdout));
    if (r.non2xx > 0 || r.errors > 0) {
      throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    }
    return r["2xx"] / r.duration;
  };
  await run(1);
  return await run(SECONDS);
}

const loadavg = async () =>
  (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");

const dir = await Deno.makeTempDir({ prefix: "trawl-small-http-" });
const { server, app, token, [Symbol.asyncDispose]: stopServer } = await inProcessServer(dir);
const direct = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
const hello = new Deno.Command(Deno.execPath(), {
  args: [
    "eval",
    `Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: (a) => console.log("port " + a.port) },
      () => Response.json({ status: "ok" }));`,
  ],
  stdout: "piped",
  stderr: "null",
}).spawn();
const helloPort = await (async () => {
  const reader = hello.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!/port \d+/.test(text)) text += (await reader.read()).value ?? "";
  reader.releaseLock();
  return Number(/port (\d+)/.exec(text)![1]);
})();
try {
  const sync = [
    "-m",
    "POST",
    "-H",
    `Authorization=Bearer ${token}`,
    "-H",
    "Content-Type=text/vnd.engine.script",
    "-b",
    "VALUES((a: 1))",
  ];
  const whoami = ["-H", `Authorization=Bearer ${token}`];
  const front = server.url.replace(/\/$/, "");
  const bare = `http://127.0.0.1:${direct.addr.port}`;
  const kinds: [string, string, string[]][] = [
    ["bare Deno.serve {status: ok}", `http://127.0.0.1:${helloPort}/`, []],
    ["sync VALUES, through the front", `${front}/API/v1.0/?scriptPath=/user`, sync],
    ["sync VALUES, Deno.serve(app.fetch)", `${bare}/API/v1.0/?scriptPath=/user`, sync],
    ["whoami, through the front", `${front}/API/v1.0/whoami`, whoami],
    ["whoami, Deno.serve(app.fetch)", `${bare}/API/v1.0/whoami`, whoami],
  ];
  const before = await loadavg();
  const rounds = kinds.map(() => [] as number[]);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, [, url, args]] of kinds.entries()) rounds[i]!.push(await load(url, args));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const bareRps = median(rounds[0]!);
  console.log(
    `16 keep-alive clients, ${SECONDS} s x ${ROUNDS} rounds; load ${before} -> ${await loadavg()}`,
  );
  for (const [i, [name]] of kinds.entries()) {
    const rps = median(rounds[i]!);
    console.log(
      `${name.padEnd(40)} ${rps.toFixed(0).padStart(7)} req/s = ${
        (rps / bareRps).toFixed(3)
      } x bare` +
        `  (rounds ${rounds[i]!.map((x) => x.toFixed(0)).join(", ")})`,
    );
  }
} finally {
  hello.kill("SIGTERM");
  await hello.status;
  await direct.shutdown();
  await stopServer();
  await Deno.remove(dir, { recursive: true });
}
