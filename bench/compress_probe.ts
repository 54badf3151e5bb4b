// deno-lint-ignore-file no-console
/**
 * Throughput of routes/compress.ts on a long streamed body, in process (no socket): identity,
 * gzip, zstd, br, with the CPU of this process's threads by kind (Linux: main, the compressing
 * worker, V8's helpers, the runtime's). The body is rows of JSON like the wide task's answer, in
 * 64 KiB chunks drawn from 256 different ones (16 MiB, more than a fast level's window), so that
 * the compressors see text as varied as a real answer's.
 *
 *   deno run -A bench/compress_probe.ts [MB, default 100]
 */
import { Hono } from "hono";
import { compression } from "../routes/compress.ts";

const MB = Number(Deno.args[0] ?? 100);
const CHUNK = 64 * 1024;
const encoder = new TextEncoder();
const chunks: Uint8Array[] = [];
for (let c = 0, i = 0; c < 256; c++) {
  let text = "";
  while (text.length < CHUNK) {
    text += JSON.stringify({
      time: `2024-05-0${1 + (i % 7)}T${String(i % 24).padStart(2, "0")}:${
        String((i * 7) % 60).padStart(2, "0")
      }:${String((i * 13) % 60).padStart(2, "0")}Z`,
      ip: `10.${(i * 31) % 256}.${(i * 17) % 250}.${i % 253}`,
      status: [200, 404, 500, 301, 200][i % 5],
      bytes: (i * 7919) % 100000,
      path: `/api/v${i % 5}/items/${(i * 104729) % 1000003}`,
    }) + ",\n";
    i++;
  }
  chunks.push(encoder.encode(text.slice(0, CHUNK)));
}
const app = new Hono();
app.use(compression());
app.get("/", () => {
  let n = Math.ceil(MB * 1e6 / CHUNK);
  let k = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(c) {
        if (n-- <= 0) c.close();
        else c.enqueue(chunks[k++ % chunks.length]!.slice());
      },
    }, { highWaterMark: 0 }),
    { headers: { "Content-Type": "application/json" } },
  );
});

/** CPU ms of each of this process's threads (by id) and its kind (empty where /proc is not there). */
function threads(): Map<string, { kind: string; ms: number }> {
  const by = new Map<string, { kind: string; ms: number }>();
  try {
    for (const t of Deno.readDirSync("/proc/self/task")) {
      try {
        const stat = Deno.readTextFileSync(`/proc/self/task/${t.name}/stat`);
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const kind = name.startsWith("worker")
          ? "worker"
          : name.startsWith("V8")
          ? "v8"
          : name.startsWith("tokio")
          ? "runtime"
          : name === "deno" || name === "main"
          ? "main"
          : "other";
        by.set(t.name, { kind, ms: (Number(f[11]) + Number(f[12])) * 10 });
      } catch { /* the thread ended */ }
    }
  } catch { /* no /proc */ }
  return by;
}

/** The CPU each kind of thread spent from `before` to `after` (a new thread: all of its own). */
function spent(
  before: Map<string, { kind: string; ms: number }>,
  after: Map<string, { kind: string; ms: number }>,
): string {
  const by = new Map<string, number>();
  for (const [id, t] of after) {
    const was = before.get(id);
    const ms = was && was.kind === t.kind ? t.ms - was.ms : t.ms;
    by.set(t.kind, (by.get(t.kind) ?? 0) + ms);
  }
  return [...by].map(([k, v]) => `${k} ${v}`).join(", ");
}

for (const enc of ["identity", "gzip", "zstd", "br", "identity", "gzip", "zstd"]) {
  const before = threads();
  const t = performance.now();
  const res = await app.request("/", { headers: { "Accept-Encoding": enc } });
  let bytes = 0;
  // The worker's thread is sampled before the body ends (it exits then).
  let during = new Map<string, { kind: string; ms: number }>();
  for await (const c of res.body!) {
    bytes += c.length;
    during = threads();
  }
  const ms = performance.now() - t;
  const cpu = spent(before, during);
  console.log(
    `${enc.padEnd(8)} ${ms.toFixed(0)} ms, ${(MB / (ms / 1000)).toFixed(0)} MB/s in, ${
      (bytes / 1e6).toFixed(1)
    } MB out; CPU ms: ${cpu}`,
  );
}
