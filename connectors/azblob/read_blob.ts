/**
 * Reads a blob as a stream of ranges (`Range` + `If-Match` on the listed ETag), each asked for
 * only when the consumer wants more, each retried on its own (blob_request.ts), so a cut
 * connection costs one range, not the blob.
 *
 * A blob deleted (404) or replaced (412) while it is read is a warning that names it: the
 * stream ends with the whole lines read so far, and drops the unfinished one rather than
 * hand on half a record. A blob gone before its first range rejects `open`, which the engine
 * reports as a file it cannot read.
 */

import type { Warning } from "../../engine/contracts/datastore.ts";
import { blobRequest, type BlobRequestContext } from "./blob_request.ts";
import { type BlobItem, blobUrl } from "./list_blobs.ts";
import { BlobServiceRefusal, credentialsError } from "./service_refusal.ts";

/** Bytes per ranged request. */
export const RANGE_BYTES = 4 << 20;

const NL = 0x0a;

export interface ReadBlobOptions {
  readonly container: string;
  /** The URI the user wrote for the blob, for the warning. */
  readonly uri: string;
  readonly onWarning: (w: Warning) => void;
  readonly rangeBytes?: number | undefined;
}

/** Opens `blob` for reading; rejects when its first range cannot be had. */
export async function readBlob(
  ctx: BlobRequestContext,
  blob: BlobItem,
  options: ReadBlobOptions,
): Promise<ReadableStream<Uint8Array>> {
  const rangeBytes = options.rangeBytes ?? RANGE_BYTES;
  const url = blobUrl(ctx.def.endpoint, options.container, blob.name);
  let offset = 0;
  /** The bytes after the last line end, held until the next range completes the line. */
  let tail = new Uint8Array(0);

  async function range(): Promise<Uint8Array | "gone" | "end"> {
    const res = await blobRequest(ctx, url, {
      "Range": `bytes=${offset}-${offset + rangeBytes - 1}`,
      // List Blobs gives the ETag bare; a header wants it quoted.
      ...(blob.etag
        ? { "If-Match": blob.etag.startsWith('"') ? blob.etag : `"${blob.etag}"` }
        : {}),
    });
    if (res.status === 404 || res.status === 412) return "gone";
    // 416: the range starts at the end (a blob whose size was a multiple of the range).
    if (res.status === 416) return "end";
    if (res.status !== 200 && res.status !== 206) {
      const refusal = new BlobServiceRefusal(res.status, res.code);
      // A token that may list but not read fails the query as a wrong definition would.
      throw refusal.credentialsRefused ? credentialsError(ctx.def, refusal) : refusal;
    }
    offset += res.body.length;
    return res.body;
  }

  const first = await range();
  if (first === "gone") throw new Deno.errors.NotFound(`'${options.uri}' no longer exists`);
  let pending: Uint8Array | "gone" | "end" | null = first;

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const got = pending ?? await range();
        pending = null;
        if (got === "gone") {
          options.onWarning({
            level: "WARN",
            message: `blob '${options.uri}' vanished or changed while it was read (after ` +
              `${offset} of ${blob.size} bytes); the rows read so far are kept` +
              (tail.length > 0 ? ", its unfinished last line is dropped" : ""),
          });
          controller.close();
          return;
        }
        if (got === "end" || got.length === 0) {
          if (tail.length > 0) controller.enqueue(tail);
          controller.close();
          return;
        }
        const joined = tail.length > 0 ? concat(tail, got) : got;
        if (got.length < rangeBytes) {
          tail = new Uint8Array(0);
          controller.enqueue(joined);
          controller.close();
          return;
        }
        // A line longer than a range goes on as it is: the engine's line limit, not this
        // buffer, decides how long a line may be.
        const cut = joined.lastIndexOf(NL) + 1 || joined.length;
        tail = joined.slice(cut);
        controller.enqueue(joined.subarray(0, cut));
      } catch (e) {
        controller.error(e);
      }
    },
  }, { highWaterMark: 0 });
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
