/**
 * Reads a file as text in 1 MiB chunks and hands out whole lines, a chunk at a time: the
 * consumer loops over the lines of `text[start, end)` itself, so there is one await per
 * chunk, never one per line. A line cut by a chunk boundary is carried to the next chunk.
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
  try {
    while (true) {
      checkCancelled(ctx.signal);
      const { done, value } = await readChunk(reader, file.uri, ctx.signal);
      if (done) break;
      ctx.progress.consume(value.byteLength);
      const text = carry + decoder.decode(value, { stream: true });
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
    const rest = carry + decoder.decode();
    if (rest.length > 0) yield { text: rest, start: 0, end: rest.length };
  } finally {
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
