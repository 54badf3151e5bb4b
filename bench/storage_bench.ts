// deno-lint-ignore-file no-console
/**
 * The API with `storage=files` against `storage=kv:<file>` (by hand, not in CI):
 *
 *   deno run -A bench/storage_bench.ts [--seconds 5] [--concurrency 8]
 *
 * Starts a real `main.ts serve` for each storage and measures, for each: GET whoami (every request
 * authenticates: with KV one KV read for the users' version), the synchronous API with a small
 * query, and the asynchronous API (submit, then read the result). Prints req/s, p50 and p99.
 */

import { join } from "node:path";
import { startServerProcess } from "../tests/foundation/server_process.ts";
import { sleep } from "../engine/util/sleep.ts";

function arg(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}

const SECONDS = arg("seconds", 5);
const CONCURRENCY = arg("concurrency", 8);
const SCRIPT = "VALUES((x: 1), (x: 2), (x: 3)) | select(count(*) as n)";

async function measure(name: string, once: () => Promise<void>): Promise<void> {
  const times: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const start = performance.now();
        await once();
        times.push(performance.now() - start);
      }
    }),
  );
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  console.log(
    `${name.padEnd(28)} ${(times.length / SECONDS).toFixed(0).padStart(6)} req/s  p50 ${
      at(0.5).toFixed(2)
    } ms  p99 ${at(0.99).toFixed(2)} ms`,
  );
}

async function bench(label: string, args: string[]): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "trawl-bench-" });
  try {
    await using server = await startServerProcess(join(root, "home"), [
      ...args.flatMap((a) => ["--set", a.replace("$ROOT", root)]),
      "--set",
      "query.maxQueued=10000",
      "--set",
      "query.maxResultsPerUser=100000",
    ]);
    const headers = { Authorization: `Bearer ${server.firstToken}` };
    const ok = async (res: Response) => {
      if (!res.ok) throw new Error(`${res.status}: ${await res.text()}`);
      return res;
    };
    await measure(`${label} whoami`, async () => {
      await (await ok(await fetch(`${server.url}/API/v1.0/whoami`, { headers }))).arrayBuffer();
    });
    await measure(`${label} sync query`, async () => {
      const res = await fetch(`${server.url}/API/v1.0/?scriptPath=/shared`, {
        method: "POST",
        headers: { ...headers, "Content-Type": "text/vnd.engine.script" },
        body: SCRIPT,
      });
      await (await ok(res)).arrayBuffer();
    });
    await measure(`${label} async submit+result`, async () => {
      const submitted = await ok(
        await fetch(`${server.url}/API/v1.0/queries?scriptPath=/shared`, {
          method: "POST",
          headers: { ...headers, "Content-Type": "text/vnd.engine.script" },
          body: SCRIPT,
        }),
      );
      const { queryId: id } = await submitted.json();
      while (true) {
        const res = await fetch(`${server.url}/API/v1.0/queries/${id}/result`, { headers });
        if (res.status === 200) {
          await res.arrayBuffer();
          // Freed at once, so the user's result quota never fills.
          const freed = await fetch(`${server.url}/API/v1.0/queries/${id}`, {
            method: "DELETE",
            headers,
          });
          await freed.body?.cancel();
          return;
        }
        await res.body?.cancel();
        await sleep(1);
      }
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

await bench("files", []);
await bench("kv", ["storage=kv:$ROOT/state.kv"]);
