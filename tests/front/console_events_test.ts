/**
 * The console's events stream across cuts (console/sse.ts `resumedEvents`, which the run pane
 * follows a query with): a stream cut before the query's last event is opened again with
 * `Last-Event-ID`, against a real HTTP server over a real socket that cuts its first stream.
 */

import assert from "node:assert/strict";
import { resumedEvents, type ServerEvent } from "../../console/sse.ts";

const encoder = new TextEncoder();
const finished = (ev: ServerEvent) =>
  ev.event === "state" && JSON.parse(ev.data).to === "SUCCEEDED";

/** A server whose n-th stream (from 0) `streams[n]` writes; what each request's header was. */
async function eventServer(
  streams: readonly ((controller: ReadableStreamDefaultController<Uint8Array>) => void)[],
) {
  const lastIds: (string | null)[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const n = lastIds.length;
    lastIds.push(req.headers.get("Last-Event-ID"));
    if (n >= streams.length) return new Response("gone", { status: 410 });
    return new Response(
      new ReadableStream<Uint8Array>({ start: (controller) => streams[n](controller) }),
      { headers: { "Content-Type": "text/event-stream" } },
    );
  });
  const url = `http://127.0.0.1:${server.addr.port}/events`;
  const open = async (lastEventId: string | null) => {
    const res = await fetch(url, {
      headers: lastEventId === null ? {} : { "Last-Event-ID": lastEventId },
    });
    if (!res.ok) {
      await res.body?.cancel();
      throw new RangeError(`HTTP ${res.status}`);
    }
    return res.body!;
  };
  return { lastIds, open, [Symbol.asyncDispose]: () => server.shutdown() };
}

function send(controller: ReadableStreamDefaultController<Uint8Array>, text: string): void {
  controller.enqueue(encoder.encode(text));
}

async function collect(events: AsyncGenerator<ServerEvent>): Promise<string[]> {
  const seen: string[] = [];
  for await (const ev of events) seen.push(`${ev.id} ${ev.event} ${ev.data}`);
  return seen;
}

Deno.test("resumedEvents() opens a cut stream again with Last-Event-ID and ends at the last event", async () => {
  await using s = await eventServer([
    (c) => {
      send(c, 'id: 0.0\nevent: status\ndata: {"state":"RUNNING"}\n\n');
      send(c, ": heartbeat\n\n");
      send(c, 'id: 0.0\nevent: progress\ndata: {"progress":0.5}\n\n');
      // Cut mid-stream, as a proxy's idle timeout would.
      setTimeout(() => c.error(new Error("cut")), 50);
    },
    (c) => {
      send(c, 'id: 1.0\nevent: state\ndata: {"from":"RUNNING","to":"SUCCEEDED"}\n\n');
      c.close();
    },
  ]);
  const seen = await collect(resumedEvents(s.open, { finished, retryMs: 10 }));
  assert.deepEqual(seen, [
    '0.0 status {"state":"RUNNING"}',
    '0.0 progress {"progress":0.5}',
    '1.0 state {"from":"RUNNING","to":"SUCCEEDED"}',
  ]);
  assert.deepEqual(s.lastIds, [null, "0.0"]);
});

Deno.test("resumedEvents() resumes a stream that ends before the last event, from the newest id", async () => {
  await using s = await eventServer([
    (c) => {
      send(c, 'id: 0.0\nevent: status\ndata: {"state":"QUEUED"}\n\n');
      c.close();
    },
    (c) => {
      send(c, 'id: 1.0\nevent: state\ndata: {"from":"QUEUED","to":"RUNNING"}\n\n');
      c.close();
    },
    (c) => {
      send(c, 'id: 2.0\nevent: state\ndata: {"from":"RUNNING","to":"SUCCEEDED"}\n\n');
      // Anything after the last event is not read: the stream is done.
      send(c, 'id: 3.0\nevent: state\ndata: {"to":"NEVER"}\n\n');
    },
  ]);
  const seen = await collect(resumedEvents(s.open, { finished, retryMs: 10 }));
  assert.equal(seen.length, 3);
  assert.deepEqual(s.lastIds, [null, "0.0", "1.0"]);
});

Deno.test("resumedEvents() gives up after its retries without an event, and at once on a final error", async () => {
  await using s = await eventServer([]);
  // Every opening answers 410: not final here, so retried, then the last error thrown.
  await assert.rejects(
    collect(resumedEvents(s.open, { finished, retries: 2, retryMs: 10 })),
    /HTTP 410/,
  );
  assert.equal(s.lastIds.length, 3);
  await assert.rejects(
    collect(
      resumedEvents(s.open, { finished, retryMs: 10, isFinal: (e) => e instanceof RangeError }),
    ),
    /HTTP 410/,
  );
  assert.equal(s.lastIds.length, 4, "a final error is not retried");
});
