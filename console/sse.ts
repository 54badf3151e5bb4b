/**
 * Server-sent events over fetch (EventSource cannot send the Authorization header): yields
 * `{id, event, data}` until the stream ends or `signal` aborts. `resumedEvents` follows a
 * stream across cuts (a proxy's or the server's idle timeout, a network change) the way
 * EventSource does: opened again with `Last-Event-ID`, the server sends what was missed.
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
        let id = "", event = "message", fields = 0;
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line === "" || line.startsWith(":")) continue; // a comment (a heartbeat)
          fields++;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "id") id = text;
          else if (field === "event") event = text;
          else if (field === "data") data.push(text);
        }
        if (fields === 0) continue; // comments only: no event
        yield { id, event, data: data.join("\n") };
      }
    }
  } finally {
    // A reader that stops early (the last event came, or the pane follows another query) is
    // done with the stream: the connection is let go rather than left to the server.
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

export interface ResumeOptions {
  /** The event after which the stream is complete (it then ends, and is not opened again). */
  readonly finished: (event: ServerEvent) => boolean;
  /** An error of opening that no retry mends (an HTTP answer such as 404): thrown at once. */
  readonly isFinal?: (error: unknown) => boolean;
  readonly signal?: AbortSignal;
  /** Openings in a row that bring no event before giving up (the last error is thrown). */
  readonly retries?: number;
  /** The pause before the first retry; each further one in a row waits one more such pause. */
  readonly retryMs?: number;
}

/**
 * The events of a stream opened by `open` (given the id of the last event seen, null at first,
 * to send as `Last-Event-ID`), opened again whenever it fails or ends before `finished`.
 *
 * @example resumedEvents((id) => openStream(id), { finished: (e) => e.event === "done" })
 */
export async function* resumedEvents(
  open: (lastEventId: string | null) => Promise<ReadableStream<Uint8Array>>,
  options: ResumeOptions,
): AsyncGenerator<ServerEvent> {
  const { retries = 5, retryMs = 1000, signal } = options;
  let lastEventId: string | null = null;
  let fruitless = 0;
  while (true) {
    let failure: unknown = new Error("the events stream ended before its last event");
    try {
      for await (const event of readEvents(await open(lastEventId))) {
        if (event.id !== "") lastEventId = event.id;
        fruitless = 0;
        yield event;
        if (options.finished(event)) return;
      }
    } catch (e) {
      if (signal?.aborted || options.isFinal?.(e)) throw e;
      failure = e;
    }
    if (signal?.aborted) return;
    if (++fruitless > retries) throw failure;
    await pause(retryMs * fruitless, signal);
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
