/**
 * Reads a file in 1 MiB chunks (the next one read while this one is used) and hands out whole
 * lines a piece at a time, as bytes (`scanByteLines`) or decoded (`scanLines`): the consumer
 * loops over the lines of a piece itself, so there is one await per piece, never one per line.
 * A line cut by a chunk boundary is carried, as bytes, to the front of the next piece.
 *
 *   for await (const { text, start, end } of scanLines(file, ctx)) {
 *     // text.slice(start, end) is one or more whole lines, each ended by "\n"
 *     // (the last line of a file may lack it)
 *   }
 *   for await (const { bytes, start, end } of scanByteLines(file, ctx)) { ... } // same, bytes
 *
 * Pieces end at line ends, so each decodes on its own into a flat string (no carried text
 * joined to it: V8 reads characters of such a joined string several times slower).
 *
 * The scan never holds the event loop for long: between pieces, it asks the query's TimeSlicer
 * (context.ts: a turn once 10 ms went by without the loop turning), or without one (a scan
 * worker, a test) its own EventLoopTurns (YIELD_AFTER_MS), so that a query whose operators pass
 * no rows for a long stretch (a filter that drops nearly everything) does not stop the server
 * from answering other requests.
 */

import type { FileEntry } from "../contracts/datastore.ts";
import { QueryError } from "../front/diagnostics.ts";
import { checkCancelled, type ExecContext } from "../plan/context.ts";

export interface LineChunk {
  readonly text: string;
  /** Offset of the first line in `text`. */
  readonly start: number;
  /** Offset just past the last whole line: after its `\n`, or the end of the file. */
  readonly end: number;
}

export interface ByteLineChunk {
  readonly bytes: Uint8Array;
  /** Offset of the first line in `bytes`. */
  readonly start: number;
  /** Offset just past the last whole line: after its `\n`, or the end of the file. */
  readonly end: number;
}

/**
 * Bytes handed out (and decoded into one text) at a time. Kept this small because V8 puts
 * larger strings in its large-object space, which only a full collection frees: texts of a
 * whole 1 MiB read piled up there and raised the peak memory of a long scan by over 100 MB.
 */
export const DECODE_BYTES = 96 * 1024;

/** Work between two turns of the event loop at most (one piece may overrun it). */
export const YIELD_AFTER_MS = 20;

/** Scanning between two sleeps of the scan at most (a sleep costs about 2 ms). */
export const SLEEP_AFTER_MS = 100;

/** A line longer than this cannot be held in a text; fails plainly instead. */
const MAX_LINE_CHARS = 256 * 1024 * 1024;

const NL = 0x0a;

/**
 * Makes sure the event loop turns (timers, I/O callbacks: a macrotask, not just the microtask
 * queue) at least every YIELD_AFTER_MS of scanning. A timer armed at each check tells whether
 * the loop turned since: reads of a file usually let it, and then the scan goes on at once;
 * otherwise (data arriving in large buffered chunks, a slow consumer) it sleeps on a new
 * `setTimeout(0)`, a millisecond or two in which the server serves what is waiting. It also
 * sleeps every SLEEP_AFTER_MS. Sleeping at every check would cost ten per cent of a scan.
 */
export class EventLoopTurns {
  #checked = performance.now();
  #turned = true;
  #timer: ReturnType<typeof setTimeout> | undefined;

  #slept = performance.now();

  /** Undefined at once, or a promise of a macrotask turn when the loop did not turn lately. */
  check(): Promise<void> | undefined {
    const now = performance.now();
    if (now - this.#checked < YIELD_AFTER_MS) return undefined;
    this.#checked = now;
    // A turn of the loop runs what is ready; a request takes several (accept, read, answer),
    // so the scan also sleeps now and then even when reads keep the loop turning.
    if (this.#turned && now - this.#slept < SLEEP_AFTER_MS) {
      this.#arm();
      return undefined;
    }
    this.stop();
    return new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => {
      this.#checked = this.#slept = performance.now();
      this.#arm();
    });
  }

  /** Clears the pending timer (a scan that ends leaves none behind). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    this.#turned = false;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#turned = true;
    }, 0);
  }
}

/**
 * The lines of `file` in decoded pieces. Reports the bytes it consumes to `ctx.progress` (the
 * caller `expect`s the size), checks `ctx.signal` between pieces and closes the file however
 * the loop ends. A file that cannot be opened (gone since it was listed) is warned about and
 * yields nothing; a failure while reading fails the query. A UTF-8 byte order mark is
 * dropped; invalid bytes become U+FFFD.
 */
export async function* scanLines(
  file: FileEntry,
  ctx: Pick<ExecContext, "signal" | "progress" | "warn" | "stats" | "slicer">,
): AsyncGenerator<LineChunk> {
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  for await (const { bytes, start, end } of scanByteLines(file, ctx)) {
    const text = decoder.decode(bytes.subarray(start, end));
    yield { text, start: 0, end: text.length };
  }
}

/**
 * The lines of `file` as bytes, in pieces of about DECODE_BYTES (a longer line is one piece),
 * with the same reading, progress, cancellation and BOM handling as `scanLines`. A piece's
 * bytes are valid only until the next piece is asked for.
 */
export async function* scanByteLines(
  file: FileEntry,
  ctx: Pick<ExecContext, "signal" | "progress" | "warn" | "stats" | "slicer">,
): AsyncGenerator<ByteLineChunk> {
  checkCancelled(ctx.signal);
  let stream: ReadableStream<Uint8Array>;
  try {
    stream = await file.open(ctx.signal);
  } catch (e) {
    checkCancelled(ctx.signal);
    if (e instanceof QueryError) throw e;
    ctx.warn({ level: "WARN", message: `cannot read '${file.uri}' (${describe(e)}); skipped` });
    return;
  }
  if (ctx.stats) ctx.stats.filesRead++;
  const reader = stream.getReader();
  // The bytes of an unfinished line, carried to the next chunk.
  let carry: Uint8Array[] = [];
  let carried = 0;
  // Until 3 bytes were seen, a byte order mark may still be cut.
  let head = true;
  const turns = new EventLoopTurns();
  // The next chunk is asked for before this one is handed out, so that the file is read while
  // the consumer works (one chunk ahead; a failure surfaces when that chunk's turn comes).
  let next = readChunk(reader, file.uri, ctx.signal);
  next.catch(() => {});
  try {
    while (true) {
      checkCancelled(ctx.signal);
      const { done, value } = await next;
      if (done) break;
      next = readChunk(reader, file.uri, ctx.signal);
      next.catch(() => {});
      ctx.progress.consume(value.byteLength);
      if (ctx.stats) ctx.stats.bytesRead += value.byteLength;
      let bytes = value;
      if (head) {
        bytes = carried > 0 ? join(carry, carried, bytes, bytes.length) : bytes;
        carry = [];
        carried = 0;
        if (bytes.length < 3) {
          carry.push(bytes);
          carried = bytes.length;
          continue;
        }
        head = false;
        if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
      }
      const end = bytes.lastIndexOf(NL) + 1;
      if (end === 0) {
        carry.push(bytes.slice());
        carried += bytes.length;
        if (carried > MAX_LINE_CHARS) {
          throw new QueryError({
            code: "RUNTIME_ERROR",
            message: `a line of '${file.uri}' is longer than ${MAX_LINE_CHARS} characters`,
          });
        }
        continue;
      }
      // As many pieces as DECODE_BYTES asks for, each ending at the first line end past its
      // share; the carried line is copied in front of the first piece.
      const pieces = Math.ceil(end / DECODE_BYTES);
      const share = Math.ceil(end / pieces);
      let start = 0;
      while (start < end) {
        let stop = start + share >= end ? end : bytes.indexOf(NL, start + share - 1) + 1;
        if (stop === 0) stop = end;
        checkCancelled(ctx.signal);
        if (carried > 0) {
          const piece = join(carry, carried, bytes, stop);
          carry = [];
          carried = 0;
          yield { bytes: piece, start: 0, end: piece.length };
        } else yield { bytes, start, end: stop };
        start = stop;
        const turned = ctx.slicer ? ctx.slicer.check() : turns.check();
        if (turned !== undefined) await turned;
      }
      if (start < bytes.length) {
        carry.push(bytes.slice(start));
        carried = bytes.length - start;
      }
      chargeYoungGeneration(value.byteLength);
    }
    if (carried > 0) {
      let rest = join(carry, carried, new Uint8Array(0), 0);
      if (head && rest[0] === 0xef && rest[1] === 0xbb && rest[2] === 0xbf) {
        rest = rest.subarray(3);
      }
      if (rest.length > 0) yield { bytes: rest, start: 0, end: rest.length };
    }
  } finally {
    turns.stop();
    // The read ahead finishes first, so that the file is closed when this returns.
    await next.catch(() => {});
    // Cancelling closes the file; it rejects only when the stream already failed.
    await reader.cancel().catch(() => {});
  }
}

/** The last allocation of chargeYoungGeneration, kept so that it cannot be optimised away. */
const youngGeneration: { ballast: unknown } = { ballast: null };

/**
 * Allocates a quarter of `bytes` on the JavaScript heap, to be dropped at once. V8 frees the
 * buffer of a chunk that died young only when it collects the young generation, which runs as
 * that fills; a byte scan allocates so little on the heap that hundreds of dead 1 MiB chunks
 * piled up between two collections (the peak memory of a scan rose by 80 MB and more). This
 * brings a collection every few MB read, for about 1% of the scan's time.
 */
function chargeYoungGeneration(bytes: number): void {
  // Pointers take 4 bytes (compressed); small arrays stay out of the large-object space.
  for (let left = bytes >> 2; left > 0; left -= 16384) {
    youngGeneration.ballast = new Array(4096);
  }
}

/** The carried parts followed by `more[0, count)`, in one new array. */
function join(parts: Uint8Array[], length: number, more: Uint8Array, count: number): Uint8Array {
  const out = new Uint8Array(length + count);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  out.set(more.subarray(0, count), at);
  return out;
}

async function readChunk(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  uri: string,
  signal: AbortSignal,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  try {
    return await reader.read();
  } catch (e) {
    checkCancelled(signal);
    if (e instanceof QueryError) throw e;
    throw new QueryError({
      code: "RUNTIME_ERROR",
      message: `reading '${uri}' failed (${describe(e)})`,
    });
  }
}

/** The reason of an I/O error without the host path that Deno puts in its message. */
function describe(e: unknown): string {
  if (e instanceof Deno.errors.NotFound) return "it does not exist";
  if (e instanceof Deno.errors.PermissionDenied) return "permission denied";
  return e instanceof Error ? e.name : String(e);
}
