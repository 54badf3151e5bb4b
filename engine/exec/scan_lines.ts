/**
 * Reads a file in 1 MiB chunks (the next one read while this one is used), decodes each in
 * pieces of at most DECODE_BYTES and hands out whole lines, a piece at a time: the
 * consumer loops over the lines of `text[start, end)` itself, so there is one await per
 * piece, never one per line. A line cut by a piece boundary is carried to the next piece.
 *
 *   for await (const { text, start, end } of scanLines(file, ctx)) {
 *     // text.slice(start, end) is one or more whole lines, each ended by "\n"
 *     // (the last line of a file may lack it)
 *   }
 */

import type { FileEntry } from "../../connectors/datastore.ts";
import { QueryError } from "../diagnostics.ts";
import { checkCancelled, type ExecContext } from "./context.ts";

export interface LineChunk {
  readonly text: string;
  /** Offset of the first line in `text`. */
  readonly start: number;
  /** Offset just past the last whole line: after its `\n`, or the end of the file. */
  readonly end: number;
}

/**
 * Bytes decoded into one text. A read is decoded in pieces this small because V8 puts larger
 * strings in its large-object space, which only a full collection frees: texts of a whole
 * 1 MiB read piled up there and raised the peak memory of a long scan by over 100 MB.
 */
export const DECODE_BYTES = 96 * 1024;

/** A text that a line longer than this cannot be held in; fails plainly instead. */
const MAX_LINE_CHARS = 256 * 1024 * 1024;

/**
 * The lines of `file` in chunks. Reports the bytes it consumes to `ctx.progress` (the caller
 * `expect`s the size), checks `ctx.signal` between chunks and closes the file however the
 * loop ends. A file that cannot be opened (gone since it was listed) is warned about and
 * yields nothing; a failure while reading fails the query. A UTF-8 byte order mark is
 * dropped; invalid bytes become U+FFFD.
 */
export async function* scanLines(
  file: FileEntry,
  ctx: Pick<ExecContext, "signal" | "progress" | "warn">,
): AsyncGenerator<LineChunk> {
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
  const reader = stream.getReader();
  const decoder = new TextDecoder("utf-8");
  let carry = "";
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
      for (let at = 0; at < value.byteLength; at += DECODE_BYTES) {
        checkCancelled(ctx.signal);
        const piece = value.subarray(at, Math.min(at + DECODE_BYTES, value.byteLength));
        const text = carry + decoder.decode(piece, { stream: true });
        const end = text.lastIndexOf("\n") + 1;
        if (end === 0) {
          if (text.length > MAX_LINE_CHARS) {
            throw new QueryError({
              code: "RUNTIME_ERROR",
              message: `a line of '${file.uri}' is longer than ${MAX_LINE_CHARS} characters`,
            });
          }
          carry = text;
          continue;
        }
        carry = end === text.length ? "" : text.slice(end);
        yield { text, start: 0, end };
      }
    }
    const rest = carry + decoder.decode();
    if (rest.length > 0) yield { text: rest, start: 0, end: rest.length };
  } finally {
    // The read ahead finishes first, so that the file is closed when this returns.
    await next.catch(() => {});
    // Cancelling closes the file; it rejects only when the stream already failed.
    await reader.cancel().catch(() => {});
  }
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
