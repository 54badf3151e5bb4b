/**
 * `GET /queries/<id>/events`: a query's life as server-sent events (docs/api.md), read from the
 * query actor's snapshots through its public `subscribe`:
 *
 *   status    the current status object, always first
 *   state     `{from, to, millis}` for each state change after it (or after `Last-Event-ID`)
 *   progress  `{progress}`, at most every 100 ms
 *   warning   the warning object
 *   stats     `{rowsOut, elapsedMillis}`, with progress and once more at the end
 *
 * The stream ends after the finished state. An event's id counts the state changes and warnings
 * sent up to it (`<changes>.<warnings>`), so `Last-Event-ID` resumes without repeating one: the
 * missed changes and warnings come first, then the status. A client that goes away unsubscribes;
 * nothing is kept for it.
 */

import { Hono } from "hono";
import type { QueryRef } from "../actors/supervisor.ts";
import { isFinished, topState } from "../actors/query_machine.ts";
import type { AppEnv } from "./env.ts";
import type { QueryDeps } from "./query_request.ts";
import { findQuery, statusOf } from "./queries.ts";
import { remoteEvents, remoteQuery, requireKept } from "./shared_queries.ts";

/** Progress events come at most this often. */
export const PROGRESS_EVERY_MS = 100;

export function queryEventRoutes(deps: QueryDeps): Hono<AppEnv> {
  return new Hono<AppEnv>().get("/queries/:id/events", async (c) => {
    const resume = parseEventId(c.req.header("Last-Event-ID"));
    const headers = {
      "Content-Type": "text/event-stream; charset=UTF-8",
      "Cache-Control": "no-store",
      "X-Accel-Buffering": "no",
    };
    // Another server's query (servers sharing a KV): its record, read every so often.
    const remote = await remoteQuery(c, deps);
    if (remote) {
      requireKept(remote);
      return new Response(remoteEvents(deps, remote, resume), { headers });
    }
    const ref = findQuery(c, deps);
    return new Response(eventStream(ref, resume), { headers });
  });
}

interface Position {
  readonly changes: number;
  readonly warnings: number;
}

/** `<changes>.<warnings>` as this stream writes ids, or undefined. */
function parseEventId(id: string | undefined): Position | undefined {
  const m = /^(\d{1,6})\.(\d{1,6})$/.exec(id?.trim() ?? "");
  return m ? { changes: Number(m[1]), warnings: Number(m[2]) } : undefined;
}

function eventStream(ref: QueryRef, resume: Position | undefined): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let stop = () => {};
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const first = ref.getSnapshot().context;
      // A position past what the query has (an id this server never sent) resumes from now.
      let changes = Math.min(resume?.changes ?? Infinity, first.stateChanges.length);
      let warnings = Math.min(resume?.warnings ?? Infinity, first.warnings.length);
      let progress = first.progress;
      let progressSentAt = 0;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let closed = false;
      const subscription: { current?: { unsubscribe(): void } } = {};
      // Never throws: it runs inside the query actor's observer. A stream the server has
      // already closed (the client went away) stops the subscription instead.
      const send = (event: string, data: unknown) => {
        if (closed) return;
        const id = `${changes}.${warnings}`;
        try {
          controller.enqueue(
            encoder.encode(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`),
          );
        } catch {
          stop();
        }
      };
      const stats = () => {
        const { context } = ref.getSnapshot();
        const start = context.stateChanges[0]?.millis ?? context.now();
        const end = isFinished(topState(ref.getSnapshot().value))
          ? context.stateChanges.at(-1)!.millis
          : context.now();
        return { rowsOut: context.store.count, elapsedMillis: end - start };
      };
      const sendProgress = () => {
        timer = undefined;
        if (closed) return;
        progressSentAt = Date.now();
        send("progress", { progress });
        send("stats", stats());
      };
      const close = () => {
        if (closed) return;
        stop();
        try {
          controller.close();
        } catch {
          // already closed by the server: the client went away
        }
      };
      stop = () => {
        closed = true;
        clearTimeout(timer);
        subscription.current?.unsubscribe();
      };
      /** The state changes and warnings not sent yet, in their order. */
      const missed = () => {
        const { context } = ref.getSnapshot();
        while (changes < context.stateChanges.length) {
          send("state", context.stateChanges[changes++]);
        }
        while (warnings < context.warnings.length) send("warning", context.warnings[warnings++]);
      };
      const update = () => {
        if (closed) return;
        const snapshot = ref.getSnapshot();
        const { context } = snapshot;
        missed();
        if (context.progress !== progress) {
          progress = context.progress;
          const wait = progressSentAt + PROGRESS_EVERY_MS - Date.now();
          if (wait <= 0) sendProgress();
          else timer ??= setTimeout(sendProgress, wait);
        }
        if (isFinished(topState(snapshot.value)) || snapshot.status !== "active") {
          clearTimeout(timer);
          send("stats", stats());
          close();
        }
      };
      // Resumed, the changes the client missed come first, in order, and then the status they
      // lead to: a client applying events in turn never steps back.
      if (resume) missed();
      send("status", statusOf(ref));
      subscription.current = ref.subscribe({
        next: update,
        error: close,
        complete: close,
      });
      update();
    },
    cancel() {
      stop();
    },
  });
}
