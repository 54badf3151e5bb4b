/**
 * A server started in this process as `main.ts serve` starts it (its request log written to
 * /dev/null in batches), for the benches that measure a small request's own cost
 * (api_bench.ts part 4, small_query_profile.ts, small_query_http.ts): its app, the first admin's
 * token, and the two trivial requests they compare.
 */

import { join } from "node:path";
import process from "node:process";
import { startServer } from "../main.ts";
import { createApp } from "../routes/app.ts";
import { batchedSink, createLogger } from "../home/log.ts";

const TOKEN_LINE = /^trawl_[A-Za-z0-9_-]{43}$/;

export interface InProcessServer extends AsyncDisposable {
  readonly server: Awaited<ReturnType<typeof startServer>>;
  readonly app: ReturnType<typeof createApp>;
  readonly token: string;
  /** The synchronous `VALUES((a: 1))` and `GET /whoami`, as fresh Requests. */
  readonly kinds: readonly (readonly [string, () => Request])[];
}

/** Starts a server with its home under `dir` (the caller removes `dir`). */
export async function inProcessServer(dir: string): Promise<InProcessServer> {
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
  const token = lines.find((l) => TOKEN_LINE.test(l))!;
  const auth = { Authorization: `Bearer ${token}` };
  return {
    server,
    app: createApp(server.deps),
    token,
    kinds: [
      ["sync VALUES((a: 1))", () =>
        new Request("http://in.process/API/v1.0/?scriptPath=/user", {
          method: "POST",
          // With its Content-Length, as an HTTP client sends it (a Request made here has none,
          // and the body would be read as a chunked stream).
          headers: { ...auth, "Content-Type": "text/vnd.engine.script", "Content-Length": "14" },
          body: "VALUES((a: 1))",
        })],
      ["GET whoami", () => new Request("http://in.process/API/v1.0/whoami", { headers: auth })],
    ],
    async [Symbol.asyncDispose]() {
      stop.abort();
      await server.finished;
      server.deps.supervisor?.stop();
      await server.deps.log.flush();
      devNull.close();
    },
  };
}

/** `n` requests made by `make`, `clients` in flight through `app.fetch`: CPU and wall µs each. */
export async function perRequest(
  app: InProcessServer["app"],
  make: () => Request,
  n: number,
  clients: number,
): Promise<{ cpu: number; wall: number }> {
  let started = 0;
  const client = async () => {
    while (started++ < n) {
      const res = await app.fetch(make());
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${new URL(make().url).pathname}: ${res.status}`);
    }
  };
  const cpu = process.cpuUsage();
  const t = performance.now();
  await Promise.all(Array.from({ length: clients }, client));
  const used = process.cpuUsage(cpu);
  return { cpu: (used.user + used.system) / n, wall: (performance.now() - t) * 1000 / n };
}
