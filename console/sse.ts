/**
 * Server-sent events over fetch (EventSource cannot send the Authorization header): yields
 * `{id, event, data}` until the stream ends or `signal` aborts.
 */

export interface ServerEvent {
  readonly id: string;
  readonly event: string;
  readonly data: string;
}

export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerEvent> {
  const reader = body.pipeThrough(
    new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>,
  ).getReader();
  let buffer = "";
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id = "", event = "message";
        const data: string[] = [];
        for (const line of block.split("\n")) {
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "id") id = text;
          else if (field === "event") event = text;
          else if (field === "data") data.push(text);
        }
        yield { id, event, data: data.join("\n") };
      }
    }
  } finally {
    reader.releaseLock();
  }
}
