/**
 * Opens a host file as a stream of 1 MiB chunks, read only when the consumer asks (no
 * read-ahead), closed at the end, on cancel and on abort.
 */

import { READ_CHUNK_BYTES } from "../exec/context.ts";

/**
 * The buffers of chunks these streams made, each for one chunk alone: the reader of the chunk
 * may free one (`ArrayBuffer.transfer(0)`) once it is done with it, instead of leaving it to the
 * collector (parse_source.ts). Buffers from other streams may be shared and are not in it.
 */
export const freeableChunks = new WeakSet<ArrayBuffer>();

/**
 * A pull stream over the file at `hostPath` from byte `from` on; rejects when the file cannot
 * be opened.
 */
export async function openFile(
  hostPath: string,
  signal: AbortSignal,
  from = 0,
): Promise<ReadableStream<Uint8Array>> {
  const file = await Deno.open(hostPath, { read: true });
  if (from > 0) {
    try {
      await file.seek(from, Deno.SeekMode.Start);
    } catch (e) {
      file.close();
      throw e;
    }
  }
  let closed = false;
  const close = () => {
    if (!closed) {
      closed = true;
      file.close();
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (signal.aborted) {
        close();
        controller.error(signal.reason ?? new DOMException("cancelled", "AbortError"));
        return;
      }
      try {
        const buf = new Uint8Array(READ_CHUNK_BYTES);
        freeableChunks.add(buf.buffer);
        let filled = 0;
        while (filled < buf.length) {
          const n = await file.read(buf.subarray(filled));
          if (n === null) break;
          filled += n;
        }
        if (filled > 0) controller.enqueue(filled === buf.length ? buf : buf.subarray(0, filled));
        if (filled < buf.length) {
          close();
          controller.close();
        }
      } catch (e) {
        close();
        controller.error(e);
      }
    },
    cancel() {
      close();
    },
  }, { highWaterMark: 0 });
}
