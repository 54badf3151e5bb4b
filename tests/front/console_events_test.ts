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

/**
 * A raw HTTP/1.1 server over a real socket whose n-th stream (from 0) `streams[n]` writes, then
 * cuts (closes the socket without the last chunk: a read error for the client) or ends; past
 * them, `410`. `lastIds` has each request's `Last-Event-ID`.
 */
function eventServer(streams: readonly (readonly string[])[]) {
  const lastIds: (string | null)[] = [];
  const conns: Deno.Conn[] = [];
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const serving = (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      const n = lastIds.length;
      let head = "";
      const buffer = new Uint8Array(4096);
      while (!head.includes("\r\n\r\n")) {
        const got = await conn.read(buffer);
        if (got === null) break;
        head += new TextDecoder().decode(buffer.subarray(0, got));
      }
      lastIds.push(/\r\nLast-Event-ID: *([^\r]*)/i.exec(head)?.[1] ?? null);
      const write = (text: string) => conn.write(encoder.encode(text)).catch(() => 0);
      if (n >= streams.length) {
        await write("HTTP/1.1 410 Gone\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        conn.close();
        continue;
      }
      await write(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n" +
          "Connection: close\r\n\r\n",
      );
      for (const part of streams[n]!) {
        if (part === "END") await write("0\r\n\r\n");
        if (part === "CUT" || part === "END") break;
        const bytes = encoder.encode(part);
        await write(`${bytes.length.toString(16)}\r\n${part}\r\n`);
      }
      // A stream with neither stays open until the client lets it go.
      if (streams[n]!.at(-1) === "CUT" || streams[n]!.at(-1) === "END") conn.close();
    }
  })();
  const url = `http://127.0.0.1:${listener.addr.port}/events`;
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
  return {
    lastIds,
    open,
    [Symbol.asyncDispose]: async () => {
      listener.close();
      await serving.catch(() => {});
      for (const conn of conns) {
        try {
          conn.close();
        } catch { /* closed */ }
      }
    },
  };
}

async function collect(events: AsyncGenerator<ServerEvent>): Promise<string[]> {
  const seen: string[] = [];
  for await (const ev of events) seen.push(`${ev.id} ${ev.event} ${ev.data}`);
  return seen;
}

Deno.test("resumedEvents() opens a cut stream again with Last-Event-ID and ends at the last event", async () => {
  await using s = eventServer([
    [
      'id: 0.0\nevent: status\ndata: {"state":"RUNNING"}\n\n',
      ": heartbeat\n\n",
      'id: 0.0\nevent: progress\ndata: {"progress":0.5}\n\n',
      // Cut mid-stream, as a proxy's idle timeout or a network change would.
      "CUT",
    ],
    ['id: 1.0\nevent: state\ndata: {"from":"RUNNING","to":"SUCCEEDED"}\n\n', "END"],
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
  await using s = eventServer([
    ['id: 0.0\nevent: status\ndata: {"state":"QUEUED"}\n\n', "END"],
    ['id: 1.0\nevent: state\ndata: {"from":"QUEUED","to":"RUNNING"}\n\n', "END"],
    [
      'id: 2.0\nevent: state\ndata: {"from":"RUNNING","to":"SUCCEEDED"}\n\n',
      // Anything after the last event is not read: the stream is let go.
      'id: 3.0\nevent: state\ndata: {"to":"NEVER"}\n\n',
    ],
  ]);
  const seen = await collect(resumedEvents(s.open, { finished, retryMs: 10 }));
  assert.equal(seen.length, 3);
  assert.deepEqual(s.lastIds, [null, "0.0", "1.0"]);
});

Deno.test("resumedEvents() gives up after its retries without an event, and at once on a final error", async () => {
  await using s = eventServer([]);
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
