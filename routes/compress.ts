/**
 * `Accept-Encoding: gzip` / `br` compress every answer over 1 KiB (docs/api.md, "Formats and
 * transport"), streamed: a large result is compressed as it is written, never held whole.
 * Event streams are left alone (each event must reach the client when it is sent).
 */

import type { MiddlewareHandler } from "hono";

/** Answers smaller than this (when their length is known) go as they are. */
export const COMPRESS_MIN_BYTES = 1024;

const ENCODINGS = { br: "brotli", gzip: "gzip" } as const;
type Encoding = keyof typeof ENCODINGS;

/**
 * Bytes handed to a brotli compressor at a time. Compression runs on the server's thread, and
 * Deno's brotli takes about 15 ms per 64 KiB (gzip under 1 ms): fed 8 KiB at a time with a turn
 * of the event loop between pieces, it never holds the server for more than a few ms.
 */
const BROTLI_PIECE_BYTES = 8 * 1024;

/**
 * The encoding to use for an `Accept-Encoding` header: the highest q, `gzip` on a tie (brotli
 * costs the server twenty times as much work per byte).
 */
export function chooseEncoding(header: string | undefined): Encoding | null {
  if (!header) return null;
  let best: { name: Encoding; q: number } | null = null;
  let star: number | null = null;
  const named = new Set<string>();
  for (const part of header.split(",")) {
    const [token, ...params] = part.trim().split(";").map((s) => s.trim().toLowerCase());
    if (token === "") continue;
    let q = 1;
    for (const p of params) {
      if (p.startsWith("q=")) q = Number(p.slice(2)) || 0;
    }
    named.add(token!);
    if (token === "*") star = q;
    if ((token === "br" || token === "gzip") && q > 0) {
      if (!best || q > best.q || (q === best.q && token === "gzip")) best = { name: token, q };
    }
  }
  if (!best && star !== null && star > 0) {
    const open = (["gzip", "br"] as const).find((e) => !named.has(e));
    if (open) best = { name: open, q: star };
  }
  return best?.name ?? null;
}

export function compression(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const encoding = chooseEncoding(c.req.header("Accept-Encoding"));
    const res = c.res;
    c.res.headers.append("Vary", "Accept-Encoding");
    if (!encoding || !res.body || res.headers.has("Content-Encoding")) return;
    if (c.req.method === "HEAD" || res.status === 204 || res.status === 304) return;
    const type = res.headers.get("Content-Type") ?? "";
    if (type.startsWith("text/event-stream")) return;
    const length = res.headers.get("Content-Length");
    if (length !== null && Number(length) < COMPRESS_MIN_BYTES) return;
    // The length of a body made from a string is not in its headers: look at its first KiB.
    const { body, whole } = await peek(res.body, COMPRESS_MIN_BYTES);
    const headers = new Headers(res.headers);
    if (whole < COMPRESS_MIN_BYTES) {
      c.res = new Response(body, { status: res.status, statusText: res.statusText, headers });
      return;
    }
    headers.delete("Content-Length");
    headers.set("Content-Encoding", encoding);
    const compressor = new CompressionStream(ENCODINGS[encoding]) as unknown as TransformStream<
      Uint8Array,
      Uint8Array<ArrayBuffer>
    >;
    const compressed = (encoding === "br" ? body.pipeThrough(inPieces(BROTLI_PIECE_BYTES)) : body)
      .pipeThrough(compressor);
    c.res = new Response(compressed, { status: res.status, statusText: res.statusText, headers });
  };
}

/**
 * Cuts chunks into pieces of at most `bytes`, with a turn of the event loop (a macrotask) after
 * each: what consumes the pieces synchronously (a compressor) does so a piece per turn.
 */
function inPieces(bytes: number): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream({
    async transform(chunk, controller) {
      for (let i = 0; i < chunk.length; i += bytes) {
        controller.enqueue(chunk.subarray(i, Math.min(chunk.length, i + bytes)));
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    },
  });
}

/**
 * Reads at least `bytes` of a stream (or all of a shorter one) and gives back a stream of the
 * whole, with `whole` the size when it ended within that (else Infinity). Errors and
 * cancellation pass through.
 */
async function peek(
  stream: ReadableStream<Uint8Array>,
  bytes: number,
): Promise<{ body: ReadableStream<Uint8Array>; whole: number }> {
  const reader = stream.getReader();
  const head: Uint8Array[] = [];
  let size = 0;
  let ended = false;
  while (size < bytes) {
    const r = await reader.read();
    if (r.done) {
      ended = true;
      break;
    }
    head.push(r.value);
    size += r.value.length;
  }
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of head) controller.enqueue(chunk);
      if (ended) controller.close();
    },
    async pull(controller) {
      const r = await reader.read();
      if (r.done) controller.close();
      else controller.enqueue(r.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { body, whole: ended ? size : Infinity };
}
