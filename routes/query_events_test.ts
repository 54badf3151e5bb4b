import assert from "node:assert/strict";
import type { QueryEvent } from "../actors/query_event_feed.ts";
import { sseStream } from "./query_events.ts";

const decoder = new TextDecoder();

/** The next chunk as text; fails rather than hangs when none comes in 10 s (none would). */
async function next(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const never = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("nothing came on the stream in 10 s")), 10_000);
  });
  try {
    const read = await Promise.race([reader.read(), never]);
    return read.done ? null : decoder.decode(read.value);
  } finally {
    clearTimeout(timer);
  }
}

/** A stream of events the test pushes by hand. */
function events() {
  let controller!: ReadableStreamDefaultController<QueryEvent>;
  const stream = new ReadableStream<QueryEvent>({ start: (c) => void (controller = c) });
  return { stream, controller };
}

Deno.test("a silent events stream gets a comment heartbeat, and an event puts the next one off", async () => {
  const { stream, controller } = events();
  const reader = sseStream(stream, 20).getReader();
  // Nothing happens to the query: a comment comes anyway.
  assert.equal(await next(reader), ": keep-alive\n\n");
  assert.equal(await next(reader), ": keep-alive\n\n");
  controller.enqueue({ id: "1.0", event: "state", data: { to: "RUNNING" } });
  assert.equal(
    await next(reader),
    'id: 1.0\nevent: state\ndata: {"to":"RUNNING"}\n\n',
  );
  assert.equal(await next(reader), ": keep-alive\n\n");
  controller.close();
  assert.equal(await next(reader), null);
});

Deno.test("an events stream whose reader goes away cancels its events and stops its heartbeat", async () => {
  let cancelled = false;
  const stream = new ReadableStream<QueryEvent>({ cancel: () => void (cancelled = true) });
  const reader = sseStream(stream, 10).getReader();
  await next(reader);
  await reader.cancel();
  assert.equal(cancelled, true);
  // No timer is left behind (the test sanitizer fails on one).
});

Deno.test("events come framed as server-sent events, in order, and the stream ends with them", async () => {
  const { stream, controller } = events();
  controller.enqueue({ id: "0.0", event: "status", data: { state: "QUEUED" } });
  controller.enqueue({ id: "1.0", event: "state", data: { to: "SCHEDULED" } });
  controller.close();
  const text = await new Response(sseStream(stream, 60_000)).text();
  assert.equal(
    text,
    'id: 0.0\nevent: status\ndata: {"state":"QUEUED"}\n\n' +
      'id: 1.0\nevent: state\ndata: {"to":"SCHEDULED"}\n\n',
  );
});
