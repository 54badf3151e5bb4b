/// <reference lib="deno.worker" />
/**
 * The compressor of one answer, in a worker of its own (routes/compress.ts): the server's thread
 * hands it the answer's chunks and gets the compressed bytes back, so compressing never holds
 * the thread that runs queries and answers other requests. Messages: compress_codec.ts.
 */

import type { Transform } from "node:stream";
import { type CompressIn, compressor, type CompressOut } from "./compress_codec.ts";

const post = (message: CompressOut, transfer: Transferable[] = []) =>
  self.postMessage(message, transfer);
let z: Transform | undefined;
self.onmessage = (event: MessageEvent<CompressIn>) => {
  const message = event.data;
  switch (message.kind) {
    case "open":
      z = compressor(message.encoding);
      z.on("data", (chunk: Uint8Array) => {
        // Copied (a Buffer's slice is a view): the compressor writes its next output into
        // the same buffer, which must not go with the message.
        const bytes = new Uint8Array(chunk);
        post({ kind: "out", bytes }, [bytes.buffer as ArrayBuffer]);
      });
      z.on("end", () => post({ kind: "done" }));
      z.on("error", (e: Error) => post({ kind: "error", message: e.message }));
      return;
    case "chunk":
      // Taken: its buffer goes back, to carry a later batch.
      z!.write(message.bytes, () => {
        const bytes = message.bytes;
        post({ kind: "ack", bytes }, [bytes.buffer as ArrayBuffer]);
      });
      return;
    case "end":
      z!.end();
      return;
  }
};
