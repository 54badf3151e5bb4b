// deno-lint-ignore-file no-console
/** Throughput of routes/compress.ts on a long streamed body, in process (no socket): identity, gzip, zstd, br. */
import { Hono } from "hono";
import { compression } from "../routes/compress.ts";

const MB = Number(Deno.args[0] ?? 100);
const rows: string[] = [];
for (let i = 0; i < 2000; i++) {
  rows.push(
    JSON.stringify({
      time: `2024-05-01T13:${String(i % 60).padStart(2, "0")}:00Z`,
      ip: `10.0.${i % 250}.${i % 7}`,
      status: [200, 404, 500][i % 3],
      bytes: i * 7 % 10000,
      path: `/api/v${i % 5}/items/${i}`,
    }),
  );
}
const chunk = new TextEncoder().encode(rows.join(",\n").slice(0, 64 * 1024));
const app = new Hono();
app.use(compression());
app.get("/", () => {
  let n = Math.ceil(MB * 1e6 / chunk.length);
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(c) {
        if (n-- <= 0) c.close();
        else c.enqueue(chunk.slice());
      },
    }, { highWaterMark: 0 }),
    { headers: { "Content-Type": "application/json" } },
  );
});
for (const enc of ["identity", "gzip", "zstd", "br", "identity", "gzip", "zstd"]) {
  const t = performance.now();
  const res = await app.request("/", { headers: { "Accept-Encoding": enc } });
  let bytes = 0;
  for await (const c of res.body!) bytes += c.length;
  const ms = performance.now() - t;
  console.log(
    `${enc.padEnd(8)} ${ms.toFixed(0)} ms, ${(MB / (ms / 1000)).toFixed(0)} MB/s in, ${
      (bytes / 1e6).toFixed(1)
    } MB out`,
  );
}
