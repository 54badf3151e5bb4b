import assert from "node:assert/strict";
import { Hono } from "hono";
import zlib from "node:zlib";
import { chooseEncoding, compression } from "./compress.ts";

Deno.test("chooseEncoding() takes the highest q, zstd then gzip then br on a tie, gzip for *, nothing for identity only", () => {
  assert.equal(chooseEncoding("gzip, deflate, br, zstd"), "zstd");
  assert.equal(chooseEncoding("zstd;q=0.5, gzip"), "gzip");
  assert.equal(chooseEncoding("zstd;q=0, *"), "gzip");
  assert.equal(chooseEncoding("gzip;q=0, *"), "zstd");
  assert.equal(chooseEncoding("gzip, br"), "gzip");
  assert.equal(chooseEncoding("br, gzip"), "gzip");
  assert.equal(chooseEncoding("gzip;q=0.5, br"), "br");
  assert.equal(chooseEncoding("gzip;q=1, br;q=0.5"), "gzip");
  assert.equal(chooseEncoding("br;q=0, gzip"), "gzip");
  assert.equal(chooseEncoding("identity"), null);
  assert.equal(chooseEncoding("*"), "gzip");
  assert.equal(chooseEncoding("br;q=0, *"), "gzip");
  assert.equal(chooseEncoding("gzip;q=0, zstd;q=0, *"), "br");
  assert.equal(chooseEncoding(undefined), null);
});

function app(body: string, type = "application/json") {
  const a = new Hono();
  a.use(compression());
  a.get("/", (c) => c.body(body, 200, { "Content-Type": type }));
  return a;
}

type Pull = (controller: ReadableStreamDefaultController<Uint8Array>) => void | Promise<void>;

/** A streamed answer of what `pull` gives (one chunk a pull, none ahead, with `highWaterMark` 0). */
function streamed(
  pull: Pull,
  type = "application/json",
  highWaterMark = 1,
): Response {
  return new Response(new ReadableStream<Uint8Array>({ pull }, { highWaterMark }), {
    headers: { "Content-Type": type },
  });
}

/** A pull giving `lines`, `per` a chunk, waiting 1 ms before each chunk that `pause` names. */
function linesPull(
  lines: readonly string[],
  per: number,
  pause: (chunk: number) => boolean = () => false,
): Pull {
  const encoder = new TextEncoder();
  let at = 0;
  const give = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (at >= lines.length) return controller.close();
    controller.enqueue(encoder.encode(lines.slice(at, at + per).join("")));
    at += per;
  };
  return (controller) =>
    at < lines.length && pause(at / per)
      ? new Promise<void>((resolve) => setTimeout(resolve, 1)).then(() => give(controller))
      : give(controller);
}

/** A pull giving `count` chunks of `piece(n)`, each `delayMs` after the last, then failing. */
function failingPull(
  count: number,
  piece: (n: number) => string,
  message: string,
  delayMs = 0,
): Pull {
  let n = 0;
  const give = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (n++ < count) controller.enqueue(new TextEncoder().encode(piece(n)));
    else controller.error(new Error(message));
  };
  return (controller) =>
    delayMs > 0
      ? new Promise<void>((resolve) => setTimeout(resolve, delayMs)).then(() => give(controller))
      : give(controller);
}

async function decode(res: Response, format: "gzip" | "brotli"): Promise<string> {
  return await new Response(res.body!.pipeThrough(new DecompressionStream(format))).text();
}

Deno.test("answers over 1 KiB are compressed as asked, smaller ones go as they are", async () => {
  const big = JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ i, s: "row" })));
  for (const [asked, format] of [["gzip", "gzip"], ["br", "brotli"]] as const) {
    const res = await app(big).request("/", { headers: { "Accept-Encoding": asked } });
    assert.equal(res.headers.get("Content-Encoding"), asked);
    assert.match(res.headers.get("Vary") ?? "", /Accept-Encoding/);
    assert.equal(await decode(res, format), big);
  }
  const small = await app('{"a":1}').request("/", { headers: { "Accept-Encoding": "gzip" } });
  assert.equal(small.headers.get("Content-Encoding"), null);
  assert.equal(await small.text(), '{"a":1}');
  const none = await app(big).request("/");
  assert.equal(none.headers.get("Content-Encoding"), null);
  assert.equal(await none.text(), big);
});

Deno.test("event streams are never compressed", async () => {
  const res = await app("data: x\n\n".repeat(300), "text/event-stream").request("/", {
    headers: { "Accept-Encoding": "gzip" },
  });
  assert.equal(res.headers.get("Content-Encoding"), null);
  await res.body?.cancel();
});

Deno.test("a body that fails midway still fails after compression, never ending cleanly", async () => {
  const a = new Hono();
  a.use(compression());
  a.get("/", () => streamed(failingPull(3, () => "x".repeat(2000), "freed mid-read")));
  const res = await a.request("/", { headers: { "Accept-Encoding": "gzip" } });
  assert.equal(res.headers.get("Content-Encoding"), "gzip");
  await assert.rejects(() => res.arrayBuffer());
});

Deno.test("a body that fails while the client is not reading fails the answer once read, and nothing is left unhandled", async () => {
  // Each chunk comes 20 ms after the last (a batch of its own); the client reads nothing, so
  // after four answers the compressor waits, a read in flight, which is the one that fails.
  const a = new Hono();
  a.use(compression());
  a.get(
    "/",
    () =>
      streamed(
        failingPull(5, (n) => `${n}`.repeat(3000), "the query failed", 20),
        "application/json",
        0,
      ),
  );
  const res = await a.request("/", { headers: { "Accept-Encoding": "zstd" } });
  assert.equal(res.headers.get("Content-Encoding"), "zstd");
  // A stray rejection would end the test's process meanwhile.
  await new Promise((resolve) => setTimeout(resolve, 400));
  await assert.rejects(() => res.arrayBuffer(), /the query failed/);
});

/** Decodes any of the three encodings (zstd through node:zlib: no DecompressionStream). */
function decodeAny(encoding: string, bytes: Uint8Array): string {
  const out = encoding === "gzip"
    ? zlib.gunzipSync(bytes)
    : encoding === "br"
    ? zlib.brotliDecompressSync(bytes)
    : zlib.zstdDecompressSync(bytes);
  return new TextDecoder().decode(out);
}

Deno.test("a long streamed body is compressed by a worker, chunk by chunk, in every encoding; a whole one at once", async () => {
  const chunk = (i: number) => JSON.stringify({ i, s: "row ".repeat(i % 50) }) + "\n";
  const lines = Array.from({ length: 20_000 }, (_, i) => chunk(i));
  const a = new Hono();
  a.use(compression());
  a.get("/stream", () => streamed(linesPull(lines, 700), "application/x-ndjson"));
  a.get("/whole", (c) => c.body(lines.join(""), 200, { "Content-Type": "application/x-ndjson" }));
  // Chunks made now at once, now after a pause (the worker gets batches of one and of several).
  a.get(
    "/paced",
    () => streamed(linesPull(lines, 300, (k) => k % 3 === 1), "application/x-ndjson", 0),
  );
  for (const encoding of ["zstd", "gzip", "br"]) {
    for (const path of ["/stream", "/whole", "/paced"]) {
      const res = await a.request(path, { headers: { "Accept-Encoding": encoding } });
      assert.equal(res.headers.get("Content-Encoding"), encoding, path);
      const bytes = new Uint8Array(await res.arrayBuffer());
      assert.ok(bytes.length < lines.join("").length / 3, `${encoding} ${path} compresses`);
      assert.equal(decodeAny(encoding, bytes), lines.join(""), `${encoding} ${path}`);
    }
  }
});

Deno.test("a streamed body's chunks leave compressed before the next is made (each chunk flushed)", async () => {
  const next = Promise.withResolvers<void>();
  const a = new Hono();
  a.use(compression());
  a.get("/", () => {
    let step = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (step === 0) controller.enqueue(new TextEncoder().encode("a".repeat(1000)));
        else if (step === 1) controller.enqueue(new TextEncoder().encode("b".repeat(5000)));
        else {
          await next.promise;
          controller.close();
        }
        step++;
      },
    }, { highWaterMark: 0 });
    return new Response(body, { headers: { "Content-Type": "application/json" } });
  });
  const res = await a.request("/", { headers: { "Accept-Encoding": "gzip" } });
  const reader = res.body!.getReader();
  // The first bytes come while the body's end still waits: the 6000 bytes so far, decodable.
  const got: Uint8Array[] = [];
  let text = "";
  while (text.length < 6000) {
    const r = await reader.read();
    assert.ok(!r.done);
    got.push(r.value);
    const all = new Uint8Array(got.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of got) {
      all.set(c, at);
      at += c.length;
    }
    text = new TextDecoder().decode(
      zlib.gunzipSync(all, { finishFlush: zlib.constants.Z_SYNC_FLUSH }),
    );
  }
  assert.equal(text, "a".repeat(1000) + "b".repeat(5000));
  next.resolve();
  while (!(await reader.read()).done);
});

Deno.test("gzip answers are whole gzip members: the web's DecompressionStream and Node's own zlib read them, checking their CRC-32 and size", async () => {
  // Over 1 MiB of rows, and the trailer's size past what one byte holds: streamed and whole.
  const lines = Array.from(
    { length: 30_000 },
    (_, i) => `{"i":${i},"s":"${"x".repeat(i % 70)}"}\n`,
  );
  const text = lines.join("");
  const a = new Hono();
  a.use(compression());
  a.get("/stream", () => streamed(linesPull(lines, 997), "application/x-ndjson"));
  a.get("/whole", (c) => c.body(text, 200, { "Content-Type": "application/x-ndjson" }));
  for (const path of ["/stream", "/whole"]) {
    const res = await a.request(path, { headers: { "Accept-Encoding": "gzip" } });
    assert.equal(res.headers.get("Content-Encoding"), "gzip");
    const gz = new Uint8Array(await res.arrayBuffer());
    const web = await new Response(
      new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip")),
    ).text();
    assert.equal(web, text, `${path}: DecompressionStream`);
    // Node's zlib (C) fails on a wrong CRC-32 or size in the trailer.
    const node = new Deno.Command("node", {
      args: [
        "-e",
        "process.stdout.write(require('zlib').gunzipSync(require('fs').readFileSync(0)))",
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = node.stdin.getWriter();
    await writer.write(gz);
    await writer.close();
    const out = await node.output();
    assert.equal(new TextDecoder().decode(out.stderr), "", path);
    assert.equal(new TextDecoder().decode(out.stdout), text, `${path}: node`);
    // A bit changed in the CRC-32: refused (the check is real).
    const bad = gz.slice();
    bad[bad.length - 8]! ^= 1;
    assert.throws(() => zlib.gunzipSync(bad));
  }
});
