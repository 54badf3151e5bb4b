/**
 * Streamed result bodies: rows (or fragments serialised while the query ran) framed for the
 * media type, produced batch by batch as the client reads (a ReadableStream pulled by the
 * server), never as one big string.
 */

import { ByteSink, RenderedRows, type Row, sameFrame } from "../engine/mod.ts";
import type { StoredItem } from "../actors/result_store.ts";
import type { BatchWriter } from "./arrow.ts";
import {
  type FormatSpec,
  formatSpec,
  headerOf,
  type ResultFormat,
  rowWriterOf,
} from "./formats.ts";

/** How rows of one format become text: the framing of its entry in `FORMATS`. */
export type RowFraming = Pick<FormatSpec, "start" | "separator" | "before" | "after" | "end">;

/** Everything a body of `format` needs: its framing, its header and its row serialiser. */
export interface BodyShape {
  readonly framing: RowFraming;
  readonly header: string;
  readonly write: (row: Row) => string;
}

/**
 * The shape of a body of `format` for the result's columns; timestamps in `opt.timezone`, else
 * `defaultZone` (the query's zone).
 */
export function bodyShape(
  format: ResultFormat,
  columns: readonly string[],
  defaultZone: string,
): BodyShape {
  const spec = formatSpec(format.mediaType);
  // Compiled when a row is first written: rows stored as rendered bytes (the usual way for a
  // format fixed at POST) never need it, and compiling it cost a trivial query a few percent.
  let write: ((row: Row) => string) | undefined;
  return {
    framing: spec,
    header: format.options.omitHeader ? "" : headerOf(spec, columns),
    write: (row) => (write ??= rowWriter(format, columns, defaultZone))(row),
  };
}

/** The serialiser of one row for a format, given the result's columns and the zone in force. */
export function rowWriter(
  format: ResultFormat,
  columns: readonly string[],
  defaultZone: string,
): (row: Row) => string {
  return rowWriterOf(formatSpec(format.mediaType))(columns, {
    timeZone: format.options.timeZone ?? defaultZone,
    timestampFormat: format.options.timestampFormat,
  });
}

/** Bytes gathered before a chunk goes out: big enough to be cheap, small enough to stream. */
const CHUNK_CHARS = 64 * 1024;

/**
 * A body of `items` (rows, serialised with `write`, fragments as stored, or rendered rows as
 * their bytes: ResultStore.readParts) framed for the format. `onClose` runs once the body is
 * done or the client went away. With `live` (items of a query still running: the next may be
 * long in coming), what a part brought goes out at once rather than waiting for a full chunk.
 * An error of `items` breaks the body: the bytes gathered are not sent, nor the framing's end.
 */
export function resultBody(
  items: AsyncIterable<readonly StoredItem[] | RenderedRows>,
  options: BodyShape & {
    readonly onClose?: (() => void) | undefined;
    readonly live?: boolean;
  },
): ReadableStream<Uint8Array> {
  const { framing, write } = options;
  const encoder = new TextEncoder();
  const iterator = items[Symbol.asyncIterator]();
  // Framing as bytes, for rendered rows: before the first, between two, after the last.
  const head = encoder.encode(framing.before);
  const mid = encoder.encode(framing.after + framing.separator + framing.before);
  const tail = encoder.encode(framing.after);
  const separatorBytes = encoder.encode(framing.separator).length;
  const sink = new ByteSink(2 * CHUNK_CHARS);
  let text = "";
  /** Moves the text gathered into the bytes. */
  const flush = () => {
    if (text === "") return;
    sink.room(3 * text.length);
    sink.at += encoder.encodeInto(text, sink.bytes.subarray(sink.at)).written;
    text = "";
  };
  let first = true;
  let started = false;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    options.onClose?.();
  };
  const take = () => {
    flush();
    const out = sink.bytes.slice(0, sink.at);
    sink.at = 0;
    return out;
  };
  /** The rest of a large framed part, sent a chunk a pull. */
  let large: Uint8Array | undefined;
  /** Sends the next chunk of `large`, after what the sink holds. */
  const sendLarge = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    const n = Math.min(large!.length, CHUNK_CHARS - sink.at);
    const out = new Uint8Array(sink.at + n);
    out.set(sink.bytes.subarray(0, sink.at));
    out.set(large!.subarray(0, n), sink.at);
    sink.at = 0;
    large = n === large!.length ? undefined : large!.subarray(n);
    controller.enqueue(out);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (large) return sendLarge(controller);
        if (!started) text = options.header + framing.start;
        started = true;
        while (sink.at + text.length < CHUNK_CHARS) {
          const next = await iterator.next();
          if (next.done) {
            text += framing.end;
            flush();
            if (sink.at > 0) controller.enqueue(take());
            controller.close();
            close();
            return;
          }
          const part = next.value;
          if (part instanceof RenderedRows) {
            if (part.count === 0) continue;
            flush();
            if (sameFrame(part.frame, framing)) {
              // Stored with this body's framing: the bytes as they are, but for the separator
              // of the body's first row.
              const bytes = part.bytes.subarray(first ? separatorBytes : 0, part.ends.at(-1)!);
              first = false;
              if (sink.at + bytes.length < CHUNK_CHARS) {
                sink.room(bytes.length);
                sink.bytes.set(bytes, sink.at);
                sink.at += bytes.length;
                if (options.live && (sink.at > 0 || text !== "")) break;
                continue;
              }
              // A large part (a run read back from the spill file) goes out in chunks of
              // CHUNK_CHARS, copied once, one a pull: its buffer is not asked for the next part
              // before it is done. (Chunks of a megabyte left ~45 MB more garbage behind.)
              large = bytes;
              return sendLarge(controller);
            }
            if (!first) text += framing.separator;
            first = false;
            writeRendered(sink, part, head, mid, tail, text);
            text = "";
            if (options.live && (sink.at > 0 || text !== "")) break;
            continue;
          }
          for (const item of part) {
            if (!first) text += framing.separator;
            first = false;
            text += framing.before + (typeof item === "string" ? item : write(item)) +
              framing.after;
          }
          if (options.live && (sink.at > 0 || text !== "")) break;
        }
        controller.enqueue(take());
      } catch (e) {
        controller.error(e);
        close();
      }
    },
    async cancel() {
      close();
      await iterator.return?.();
    },
  }, { highWaterMark: 0 });
}

/**
 * Rendered rows framed into `sink`: `lead` (text owed before them), then `head`, the rows
 * with `mid` between two, and `tail`.
 */
function writeRendered(
  sink: ByteSink,
  part: RenderedRows,
  head: Uint8Array,
  mid: Uint8Array,
  tail: Uint8Array,
  lead: string,
): void {
  const { bytes, ends } = part;
  const n = ends.length;
  if (n === 0) return;
  sink.text(lead);
  sink.room(head.length + bytes.length + (n - 1) * mid.length + tail.length);
  const out = sink.bytes;
  let at = sink.at;
  out.set(head, at);
  at += head.length;
  let start = 0;
  for (let i = 0; i < n; i++) {
    if (i > 0) {
      for (let k = 0; k < mid.length; k++) out[at++] = mid[k]!;
    }
    const end = ends[i]!;
    if (end - start > 64) {
      out.set(bytes.subarray(start, end), at);
      at += end - start;
    } else for (let k = start; k < end; k++) out[at++] = bytes[k]!;
    start = end;
  }
  out.set(tail, at);
  sink.at = at + tail.length;
}

/**
 * The whole body of a few items as one string: what `resultBody` would stream, for results
 * small enough that a stream (a ReadableStream, an async generator, a pull per chunk) costs
 * more than the rows. Throws what `write` throws.
 */
export function smallBody(
  items: readonly StoredItem[],
  options: BodyShape,
): string {
  const { framing, write } = options;
  let text = options.header + framing.start;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    if (i > 0) text += framing.separator;
    text += framing.before + (typeof item === "string" ? item : write(item)) + framing.after;
  }
  return text + framing.end;
}

/** Rows gathered into one record batch of a binary format (fewer at the end of the result). */
const BATCH_ROWS = 16 * 1024;

/**
 * A body of a binary format (`formatSpec(...).batches`): the stored rows, a batch at a time.
 * `onClose` runs once the body is done or the client went away.
 */
export function batchBody(
  items: AsyncIterable<readonly StoredItem[]>,
  writer: BatchWriter,
  onClose?: () => void,
): ReadableStream<Uint8Array> {
  const iterator = items[Symbol.asyncIterator]();
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    onClose?.();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const rows: Row[] = [];
        while (rows.length < BATCH_ROWS) {
          const next = await iterator.next();
          if (next.done) {
            if (rows.length > 0) controller.enqueue(writer.batch(rows));
            controller.enqueue(writer.end());
            controller.close();
            close();
            return;
          }
          for (const item of next.value) rows.push(item as Row);
        }
        controller.enqueue(writer.batch(rows));
      } catch (e) {
        controller.error(e);
        close();
      }
    },
    async cancel() {
      close();
      await iterator.return?.();
    },
  }, { highWaterMark: 0 });
}

/** The whole body of a few rows of a binary format, as `batchBody` would stream it. */
export function smallBatchBody(
  items: readonly StoredItem[],
  writer: BatchWriter,
): Uint8Array<ArrayBuffer> {
  const parts = items.length > 0 ? [writer.batch(items as Row[]), writer.end()] : [writer.end()];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
