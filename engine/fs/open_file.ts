/**
 * Opens a host file as a stream of 1 MiB chunks, read only when the consumer asks (no
 * read-ahead), closed at the end, on cancel and on abort.
 */

/** Bytes a source reads at a time. */
export const READ_CHUNK_BYTES = 1 << 20;

/**
 * The buffers of chunks these streams made, each for one chunk alone: the reader of the chunk
 * may free one (`ArrayBuffer.transfer(0)`) once it is done with it, instead of leaving it to the
 * collector (parse_source.ts). Buffers from other streams may be shared and are not in it.
 */
export const freeableChunks = new WeakSet<ArrayBuffer>();

/**
 * For a reader of pieces that keeps no view of a piece once it has the next (it copies what it
 * carries, and makes texts and numbers of the rest): `behind(buffer)` with each piece's buffer
 * frees the one before when it was made for one chunk alone; `behind(null)` frees the last. A
 * scan makes so little garbage that the collector runs seldom: read buffers waiting for it took
 * tens of MB per worker, and fresh pages cost the reads (the access bench: peak RSS 350-390 MB
 * without, 330 with; `op_read` 14% of a worker's time without, 4.5% with).
 */
export function freeBehind(): (buffer: ArrayBufferLike | null) => void {
  let held: ArrayBuffer | null = null;
  return (buffer) => {
    if (buffer === held) return;
    if (held !== null && freeableChunks.has(held)) held.transfer(0);
    held = buffer as ArrayBuffer | null;
  };
}

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
