/**
 * `GET /queries/<id>/events`: a query's life as server-sent events (docs/api.md). The events
 * come from the query's handle (actors/query_event_feed.ts: the same for a query of this server
 * and another's); this route frames them and, while the stream is silent, writes a comment
 * (`: keep-alive`) every HEARTBEAT_MS, as the HTML standard advises, so that a proxy or the
 * server's own idle timeout does not cut a stream that waits for a long query.
 *
 * An event's id counts the state changes and warnings sent up to it (`<changes>.<warnings>`), so
 * `Last-Event-ID` resumes without repeating one. A client that goes away unsubscribes; nothing
 * is kept for it.
 */

import { Hono } from "hono";
import type { EventPosition, QueryEvent } from "../actors/query_event_feed.ts";
import type { AppEnv } from "./env.ts";
import type { QueryDeps } from "./query_request.ts";
import { findHandle, requireKept } from "./queries.ts";

export { PROGRESS_EVERY_MS } from "../actors/query_event_feed.ts";

/** A silent events stream gets a comment this often (the HTML standard: about every 15 s). */
export const HEARTBEAT_MS = 12_000;

const HEARTBEAT = new TextEncoder().encode(": keep-alive\n\n");

export function queryEventRoutes(
  deps: QueryDeps,
  options: { readonly heartbeatMs?: number | undefined } = {},
): Hono<AppEnv> {
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  return new Hono<AppEnv>().get("/queries/:id/events", async (c) => {
    const resume = parseEventId(c.req.header("Last-Event-ID"));
    const handle = await findHandle(c, deps);
    requireKept(handle);
    return new Response(sseStream(handle.events(resume), heartbeatMs), {
      headers: {
        "Content-Type": "text/event-stream; charset=UTF-8",
        "Cache-Control": "no-store",
        "X-Accel-Buffering": "no",
      },
    });
  });
}

/** `<changes>.<warnings>` as the streams write ids, or undefined. */
function parseEventId(id: string | undefined): EventPosition | undefined {
  const m = /^(\d{1,6})\.(\d{1,6})$/.exec(id?.trim() ?? "");
  return m ? { changes: Number(m[1]), warnings: Number(m[2]) } : undefined;
}

/**
 * The events as `text/event-stream`, with a `: keep-alive` comment after each `heartbeatMs`
 * without an event.
 */
export function sseStream(
  events: ReadableStream<QueryEvent>,
  heartbeatMs: number,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const reader = events.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let done = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const beat = () => {
        if (done) return;
        try {
          controller.enqueue(HEARTBEAT);
        } catch {
          return;
        }
        timer = setTimeout(beat, heartbeatMs);
      };
      const pump = async () => {
        try {
          while (true) {
            const next = await reader.read();
            clearTimeout(timer);
            if (next.done || done) break;
            const { id, event, data } = next.value;
            controller.enqueue(
              encoder.encode(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`),
            );
            timer = setTimeout(beat, heartbeatMs);
          }
          done = true;
          controller.close();
        } catch {
          // the client went away: cancel() stops the events
        }
      };
      timer = setTimeout(beat, heartbeatMs);
      pump();
    },
    cancel(reason) {
      done = true;
      clearTimeout(timer);
      reader.cancel(reason).catch(() => {});
    },
  });
}
