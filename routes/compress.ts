/**
 * `Accept-Encoding: zstd` / `gzip` / `br` compress every answer over 1 KiB (docs/api.md,
 * "Formats and transport") at a fast level, streamed: a large result is compressed as it is
 * written, never held whole, by a worker (off the thread that runs queries). Event streams are
 * left alone (each event must reach the client when it is sent).
 */

import type { MiddlewareHandler } from "hono";
import zlib from "node:zlib";
import type { CompressIn, CompressOut } from "./compress_codec.ts";

/** Answers smaller than this (when their length is known) go as they are. */
export const COMPRESS_MIN_BYTES = 1024;

type Encoding = "zstd" | "gzip" | "br";

/**
 * On a tie of q: zstd (at level 1 the fastest of the three here, and the smallest output), then
 * gzip, then brotli (even at quality 1 about twice gzip's work per byte). `*` gives gzip first:
 * every client knows it.
 */
const PREFERENCE: readonly Encoding[] = ["zstd", "gzip", "br"];
const FOR_STAR: readonly Encoding[] = ["gzip", "zstd", "br"];

/** Batches handed to a compressing worker and not yet taken by it. */
const IN_FLIGHT = 4;

/**
 * The most bytes of the answer sent to the worker in one message: the chunks at hand (a 64 KiB
 * part of a result each) go together. One message, one answer and one flush per chunk cost the
 * server's thread more than the compressing cost the worker (bench/compress_probe.ts: 100 MB
 * of rows took the thread 150 ms plain and 610 ms gzipped).
 */
const BATCH_BYTES = 1 << 20;

/** Microtasks a read may take and still count as at hand (its chunk was queued or made at once). */
const AT_HAND_TICKS = 4;

/** The encoding to use for an `Accept-Encoding` header: the highest q, PREFERENCE on a tie. */
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
    const encoding = PREFERENCE.find((e) => e === token);
    if (encoding && q > 0) {
      const before = best && PREFERENCE.indexOf(encoding) < PREFERENCE.indexOf(best.name);
      if (!best || q > best.q || (q === best.q && before)) best = { name: encoding, q };
    }
  }
  if (!best && star !== null && star > 0) {
    const open = FOR_STAR.find((e) => !named.has(e));
    if (open) best = { name: open, q: star };
  }
  return best?.name ?? null;
}

/**
 * Compresses answers for clients that accept it, at a fast level (docs/api.md, "Formats and
 * transport"): a body whole within its first read (a JSON answer, a small result) on the
 * server's thread at once, a longer one streamed through a worker of its own
 * (compress_worker.ts), which flushes each chunk so that a streamed answer's rows still leave
 * as they come.
 */
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
    const { body, whole, head } = await peek(res.body, COMPRESS_MIN_BYTES);
    const headers = new Headers(res.headers);
    if (whole < COMPRESS_MIN_BYTES) {
      c.res = new Response(body, { status: res.status, statusText: res.statusText, headers });
      return;
    }
    headers.delete("Content-Length");
    headers.set("Content-Encoding", encoding);
    const compressed = whole === Infinity
      ? inWorker(body, encoding)
      : compressWhole(encoding, head);
    c.res = new Response(compressed, { status: res.status, statusText: res.statusText, headers });
  };
}

/** A body already whole (one read, usually), compressed at once at the fast level. */
function compressWhole(encoding: Encoding, chunks: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const bytes = chunks.length === 1 ? chunks[0]! : concat(chunks);
  const { constants } = zlib;
  const out = encoding === "gzip"
    ? zlib.gzipSync(bytes, { level: 1 })
    : encoding === "br"
    ? zlib.brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } })
    : zlib.zstdCompressSync(bytes, { params: { [constants.ZSTD_c_compressionLevel]: 1 } });
  return new Uint8Array(out);
}

/** `read`'s result if it comes within AT_HAND_TICKS microtasks, else undefined (still running). */
async function atHand(
  read: Promise<ReadableStreamReadResult<Uint8Array>>,
): Promise<ReadableStreamReadResult<Uint8Array> | undefined> {
  let ticks: Promise<undefined> = Promise.resolve(undefined);
  for (let i = 1; i < AT_HAND_TICKS; i++) ticks = ticks.then(() => undefined);
  return await Promise.race([read, ticks]);
}

/**
 * A view of `size` bytes for the next batch: in a buffer the worker gave back when one is large
 * enough, else in a new one with room for a full batch. Buffers going back and forth keep the
 * worker's heap from growing by the size of the answer: each batch received in a new buffer is
 * freed only when the worker's collector comes to it (streaming 200 MB grew the worker by 77 MB;
 * the wide task's peak went from about 350 MB plain to 428 gzipped).
 */
function batchBuffer(spare: ArrayBuffer[], size: number): Uint8Array<ArrayBuffer> {
  while (spare.length > 0) {
    const buffer = spare.pop()!;
    if (buffer.byteLength >= size) return new Uint8Array(buffer, 0, size);
  }
  return new Uint8Array(new ArrayBuffer(Math.max(size, BATCH_BYTES + 64 * 1024)), 0, size);
}

/** `chunks` one after the other in `out` (by default a new buffer of their size). */
function concat(
  chunks: readonly Uint8Array[],
  out: Uint8Array<ArrayBuffer> = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0)),
): Uint8Array<ArrayBuffer> {
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * `input` compressed by a worker of its own, streamed: at most IN_FLIGHT batches wait in the
 * worker, and none is read while the client has not taken what came out (the stream's queue is
 * full). An error of the input, or of the compressor, errors the output: the body breaks, never
 * ends as if whole. The worker is gone once the body has ended, failed or been cancelled.
 */
function inWorker(
  input: ReadableStream<Uint8Array>,
  encoding: Encoding,
): ReadableStream<Uint8Array> {
  const reader = input.getReader();
  const worker = new Worker(new URL("./compress_worker.ts", import.meta.url).href, {
    type: "module",
  });
  const send = (message: CompressIn) => worker.postMessage(message);
  let inFlight = 0;
  let finished = false;
  let wake: (() => void) | undefined;
  const nudge = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const stop = () => {
    if (finished) return false;
    finished = true;
    worker.terminate();
    nudge();
    return true;
  };
  let fail: (e: unknown) => void = () => {};
  /** Batch buffers the worker has given back, to be filled again. */
  const spare: ArrayBuffer[] = [];
  /** A read that was not at hand when its batch went: the next batch's first. */
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  const feed = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    try {
      for (;;) {
        while (!finished && (inFlight >= IN_FLIGHT || (controller.desiredSize ?? 1) <= 0)) {
          await new Promise<void>((resolve) => wake = resolve);
        }
        if (finished) return;
        const first = await (pending ?? reader.read());
        pending = undefined;
        if (finished) return;
        if (first.done) return send({ kind: "end" });
        // The chunks at hand join it, up to BATCH_BYTES; one that must wait for the query goes
        // in the next batch, so that what was made leaves at once (each batch is flushed).
        const batch = [first.value];
        let size = first.value.length;
        let ended = false;
        while (size < BATCH_BYTES) {
          const read = reader.read();
          const r = await atHand(read);
          if (r === undefined) {
            // Its failure is the body's, once awaited (the race above has handled it: never
            // a stray rejection, which would end the process).
            pending = read;
            break;
          }
          if (r.done) {
            ended = true;
            break;
          }
          batch.push(r.value);
          size += r.value.length;
        }
        if (finished) return;
        inFlight++;
        // A copy of its own, transferred (a chunk's buffer may be another's: never given away),
        // into a buffer the worker gave back when it can.
        const bytes = concat(batch, batchBuffer(spare, size));
        worker.postMessage({ kind: "chunk", bytes } satisfies CompressIn, [bytes.buffer]);
        if (ended) return send({ kind: "end" });
      }
    } catch (e) {
      fail(e);
    }
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      fail = (e) => {
        if (stop()) {
          controller.error(e);
          reader.cancel(e).catch(() => {});
        }
      };
      worker.onmessage = ({ data }: MessageEvent<CompressOut>) => {
        if (finished) return;
        switch (data.kind) {
          case "out":
            controller.enqueue(data.bytes);
            return;
          case "ack":
            inFlight--;
            spare.push(data.bytes.buffer as ArrayBuffer);
            return nudge();
          case "done":
            stop();
            controller.close();
            return;
          case "error":
            return fail(new Error(`compressing the answer failed: ${data.message}`));
        }
      };
      worker.onerror = (e) => {
        e.preventDefault();
        fail(new Error(`the compressing worker failed: ${e.message}`));
      };
      send({ kind: "open", encoding });
      void feed(controller);
    },
    pull: nudge,
    cancel(reason) {
      stop();
      return reader.cancel(reason);
    },
  }, { highWaterMark: IN_FLIGHT });
}

/**
 * Reads at least `bytes` of a stream (or all of a shorter one), and what else of it comes
 * within the same turn of the event loop (a body made from a string or bytes ends there), and
 * gives back a stream of the whole, with `whole` the size when it ended within that (else
 * Infinity) and `head` the chunks read. Errors and cancellation pass through.
 */
async function peek(
  stream: ReadableStream<Uint8Array>,
  bytes: number,
): Promise<{ body: ReadableStream<Uint8Array>; whole: number; head: Uint8Array[] }> {
  const reader = stream.getReader();
  const head: Uint8Array[] = [];
  let size = 0;
  let ended = false;
  /** A read not answered within the turn: the body's first pull takes it. */
  let waiting: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  // At most 64 KiB gathered: a long body whose chunks are all at hand is not read whole here.
  while (!ended && size < 64 * 1024) {
    const read = reader.read();
    let r: ReadableStreamReadResult<Uint8Array> | undefined;
    if (size < bytes) r = await read;
    else {
      // Past `bytes`: only what is there already (a macrotask runs after every microtask).
      let timer: ReturnType<typeof setTimeout> | undefined;
      const turn = new Promise<undefined>((resolve) =>
        timer = setTimeout(() => resolve(undefined), 0)
      );
      // A read that fails is the body's to fail, at its pull: the answer has begun.
      r = await Promise.race([read, turn]).catch(() => undefined);
      clearTimeout(timer);
      if (!r) {
        waiting = read;
        break;
      }
    }
    if (r.done) ended = true;
    else {
      head.push(r.value);
      size += r.value.length;
    }
  }
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of head) controller.enqueue(chunk);
      if (ended) controller.close();
    },
    async pull(controller) {
      const read = waiting ?? reader.read();
      waiting = undefined;
      const r = await read;
      if (r.done) controller.close();
      else controller.enqueue(r.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { body, whole: ended ? size : Infinity, head };
}
