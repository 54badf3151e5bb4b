/**
 * What routes/compress.ts and its worker (compress_worker.ts) share: the compressor of each
 * encoding, and the messages between them.
 *
 * Messages in: `{ kind: "open", encoding }` once, then `{ kind: "chunk", bytes }` (a batch of the
 * answer's chunks, transferred) and finally `{ kind: "end" }`. Out: `{ kind: "out", bytes }` as
 * compressed bytes come (each batch flushed: its bytes leave even while the next is long in
 * coming), `{ kind: "ack", bytes }` per batch taken (its buffer given back, for a later batch),
 * `{ kind: "done" }` after the last bytes, `{ kind: "error", message }`.
 */

import zlib from "node:zlib";
import type { Transform } from "node:stream";

/** What the server's side sends (compress.ts). */
export type CompressIn =
  | { readonly kind: "open"; readonly encoding: "gzip" | "br" | "zstd" }
  | { readonly kind: "chunk"; readonly bytes: Uint8Array }
  | { readonly kind: "end" };

/** What the worker answers. */
export type CompressOut =
  | { readonly kind: "out"; readonly bytes: Uint8Array }
  | { readonly kind: "ack"; readonly bytes: Uint8Array }
  | { readonly kind: "done" }
  | { readonly kind: "error"; readonly message: string };

const { constants } = zlib;

/**
 * Output pieces of up to this many bytes (node:zlib's 16 KiB would be a message each): a batch of
 * 1 MiB of rows (compress.ts's BATCH_BYTES) comes out in one or two.
 */
const OUT_CHUNK_BYTES = 256 * 1024;

/** The compressor of an encoding at the level docs/api.md names, flushing each write. */
export function compressor(encoding: "gzip" | "br" | "zstd"): Transform {
  switch (encoding) {
    case "gzip":
      return zlib.createGzip({
        level: 1,
        flush: constants.Z_SYNC_FLUSH,
        chunkSize: OUT_CHUNK_BYTES,
      });
    case "br":
      return zlib.createBrotliCompress({
        chunkSize: OUT_CHUNK_BYTES,
        flush: constants.BROTLI_OPERATION_FLUSH,
        params: { [constants.BROTLI_PARAM_QUALITY]: 1 },
      });
    case "zstd":
      return zlib.createZstdCompress({
        chunkSize: OUT_CHUNK_BYTES,
        flush: constants.ZSTD_e_flush,
        params: { [constants.ZSTD_c_compressionLevel]: 1 },
      });
  }
}
