import assert from "node:assert/strict";
import { Hono } from "hono";
import { chooseEncoding, compression } from "./compress.ts";

Deno.test("chooseEncoding() takes the highest q, gzip on a tie, nothing for identity only", () => {
  assert.equal(chooseEncoding("gzip, br"), "gzip");
  assert.equal(chooseEncoding("br, gzip"), "gzip");
  assert.equal(chooseEncoding("gzip;q=0.5, br"), "br");
  assert.equal(chooseEncoding("gzip;q=1, br;q=0.5"), "gzip");
  assert.equal(chooseEncoding("br;q=0, gzip"), "gzip");
  assert.equal(chooseEncoding("identity"), null);
  assert.equal(chooseEncoding("*"), "gzip");
  assert.equal(chooseEncoding("br;q=0, *"), "gzip");
  assert.equal(chooseEncoding("gzip;q=0, *"), "br");
  assert.equal(chooseEncoding(undefined), null);
});

function app(body: string, type = "application/json") {
  const a = new Hono();
  a.use(compression());
  a.get("/", (c) => c.body(body, 200, { "Content-Type": type }));
  return a;
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
  a.get("/", () => {
    let n = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (n++ < 3) controller.enqueue(new TextEncoder().encode("x".repeat(2000)));
        else controller.error(new Error("freed mid-read"));
      },
    });
    return new Response(body, { headers: { "Content-Type": "application/json" } });
  });
  const res = await a.request("/", { headers: { "Accept-Encoding": "gzip" } });
  assert.equal(res.headers.get("Content-Encoding"), "gzip");
  await assert.rejects(() => res.arrayBuffer());
});
