/**
 * A query's life as events (GET /queries/<id>/events; routes/query_events.ts frames them as
 * server-sent events), one implementation for a query of this server and for another server's:
 * each gives a `StatusFeed` (its state now, and a call on every change), and `queryEvents` makes
 * the same events of both:
 *
 *   status    the current status object, always first
 *   state     `{from, to, millis}` for each state change after it (or after the resumed position)
 *   progress  `{progress}`, at most every PROGRESS_EVERY_MS
 *   warning   the warning object
 *   stats     `{rowsOut, elapsedMillis, filesRead, bytesRead, recordsRead, etaMillis?}`, with
 *             progress, every TICK_EVERY_MS while RUNNING (the elapsed time ticks even when
 *             nothing else changes), and once more at the end
 *
 * The stream ends after the finished state. An event's id counts the state changes and warnings
 * sent up to it (`<changes>.<warnings>`), so a resumed stream repeats none: the missed changes
 * and warnings come first, then the status. A reader that goes away unsubscribes.
 */

import type { SharedQueries } from "./shared_queries.ts";
import type { SharedRecord } from "./shared/records.ts";
import { isFinished, queryStatus, statsOf, topState } from "./query_machine.ts";
import type { QueryRef } from "./supervisor.ts";

/** Progress events come at most this often. */
export const PROGRESS_EVERY_MS = 100;
/** While a query runs, a `stats` event comes at least this often. */
export const TICK_EVERY_MS = 1000;
/** How often the feed of another server's query reads its record. */
export const REMOTE_POLL_MS = 250;
/**
 * Reads of that record that may fail in a row before its stream ends: a storage busy for a
 * moment must not end a stream before the query's end was told.
 */
export const REMOTE_READ_ATTEMPTS = 8;

export interface QueryEvent {
  /** `<changes>.<warnings>` sent up to this event. */
  readonly id: string;
  readonly event: "status" | "state" | "progress" | "warning" | "stats";
  readonly data: unknown;
}

/** Where a resumed stream starts: the state changes and warnings the reader has. */
export interface EventPosition {
  readonly changes: number;
  readonly warnings: number;
}

/** A query as its events need it, at one moment. */
export interface FeedState {
  readonly status: Record<string, unknown>;
  readonly stateChanges: readonly unknown[];
  readonly warnings: readonly unknown[];
  readonly progress: unknown;
  readonly finished: boolean;
  readonly stats: EventStats;
}

/**
 * The `stats` event: the rows stored and the time since the query was submitted, what it has
 * read (files, bytes, records: the engine adds to them per chunk), and, while it runs with an
 * input of known size, an estimate of the time left (actors/query_progress.ts; absent otherwise).
 */
export interface EventStats {
  readonly rowsOut: number;
  readonly elapsedMillis: number;
  readonly filesRead: number;
  readonly bytesRead: number;
  readonly recordsRead: number;
  readonly etaMillis?: number;
}

/** A query's state now, and its changes until it ends or is gone. */
export interface StatusFeed {
  current(): FeedState;
  /** Calls `changed` on each change and `ended` once it is gone; returns the unsubscribe. */
  subscribe(changed: () => void, ended: () => void): () => void;
}

/** The events of the query `feed` follows, from `resume` on (or from now). */
export function queryEvents(
  feed: StatusFeed,
  resume: EventPosition | undefined,
  options: { readonly progressEveryMs?: number; readonly tickEveryMs?: number } = {},
): ReadableStream<QueryEvent> {
  const progressEveryMs = options.progressEveryMs ?? PROGRESS_EVERY_MS;
  const tickEveryMs = options.tickEveryMs ?? TICK_EVERY_MS;
  let stop = () => {};
  return new ReadableStream<QueryEvent>({
    start(controller) {
      const first = feed.current();
      // A position past what the query has (an id never sent) resumes from now.
      let changes = Math.min(resume?.changes ?? Infinity, first.stateChanges.length);
      let warnings = Math.min(resume?.warnings ?? Infinity, first.warnings.length);
      let progress = first.progress;
      let progressSentAt = 0;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let statsSentAt = 0;
      let closed = false;
      const subscription: { unsubscribe?: () => void } = {};
      // Never throws: it runs inside the query actor's observer. A stream already closed (the
      // reader went away) stops the subscription instead.
      const send = (event: QueryEvent["event"], data: unknown) => {
        if (closed) return;
        try {
          controller.enqueue({ id: `${changes}.${warnings}`, event, data });
        } catch {
          stop();
        }
      };
      const sendProgress = () => {
        timer = undefined;
        if (closed) return;
        progressSentAt = statsSentAt = Date.now();
        send("progress", { progress });
        send("stats", feed.current().stats);
      };
      // The elapsed time (and the bytes and records read, which move without the progress
      // when a source's size is unknown) ticks while the query runs.
      const ticker = setInterval(() => {
        if (closed || Date.now() - statsSentAt < tickEveryMs / 2) return;
        const now = feed.current();
        if (now.finished || now.status.state !== "RUNNING") return;
        statsSentAt = Date.now();
        send("stats", now.stats);
      }, tickEveryMs);
      const close = () => {
        if (closed) return;
        stop();
        try {
          controller.close();
        } catch {
          // already closed: the reader went away
        }
      };
      stop = () => {
        closed = true;
        clearTimeout(timer);
        clearInterval(ticker);
        subscription.unsubscribe?.();
      };
      /** The state changes and warnings not sent yet, in their order. */
      const missed = (now: FeedState) => {
        while (changes < now.stateChanges.length) send("state", now.stateChanges[changes++]);
        while (warnings < now.warnings.length) send("warning", now.warnings[warnings++]);
      };
      const update = () => {
        if (closed) return;
        const now = feed.current();
        missed(now);
        if (now.progress !== progress) {
          progress = now.progress;
          const wait = progressSentAt + progressEveryMs - Date.now();
          if (wait <= 0) sendProgress();
          else timer ??= setTimeout(sendProgress, wait);
        }
        if (now.finished) {
          clearTimeout(timer);
          send("stats", now.stats);
          close();
        }
      };
      // Resumed, the changes the reader missed come first, in order, and then the status they
      // lead to: a reader applying events in turn never steps back.
      if (resume) missed(first);
      send("status", first.status);
      subscription.unsubscribe = feed.subscribe(update, close);
      if (closed) subscription.unsubscribe();
      update();
    },
    cancel() {
      stop();
    },
  });
}

/** The feed of a query actor of this server. */
export function actorFeed(ref: QueryRef): StatusFeed {
  return {
    current() {
      const snapshot = ref.getSnapshot();
      const { context } = snapshot;
      const finished = isFinished(topState(snapshot.value));
      const start = context.stateChanges[0]?.millis ?? context.now();
      const end = finished ? context.stateChanges.at(-1)!.millis : context.now();
      return {
        status: queryStatus(snapshot),
        stateChanges: context.stateChanges,
        warnings: context.warnings,
        progress: context.progress,
        // An actor stopped (dropped) ends its stream as a finished one does.
        finished: finished || snapshot.status !== "active",
        stats: eventStats(
          { ...statsOf(context, context.now()), rowsOut: context.store.count },
          end - start,
        ),
      };
    },
    subscribe(changed, ended) {
      const subscription = ref.subscribe({ next: changed, error: ended, complete: ended });
      return () => subscription.unsubscribe();
    },
  };
}

/** The feed of another server's query: its record, read every `pollMs`. */
export function recordFeed(
  shared: Pick<SharedQueries, "record">,
  record: SharedRecord,
  pollMs = REMOTE_POLL_MS,
): StatusFeed {
  let last = record;
  return {
    current() {
      const { status } = last;
      const stats = status.stats as Partial<Record<keyof EventStats, number>> | undefined;
      return {
        status,
        stateChanges: status.stateChanges as unknown[],
        warnings: status.warnings as unknown[],
        progress: status.progress,
        finished: isFinished(status.state),
        stats: eventStats(stats ?? {}, stats?.elapsedMillis ?? 0),
      };
    },
    subscribe(changed, ended) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let done = false;
      let failures = 0;
      const poll = async () => {
        timer = undefined;
        if (done) return;
        try {
          const found = await shared.record(record.queryId);
          if (done) return;
          failures = 0;
          if (!found || found.record.freed) return ended();
          last = found.record;
          changed();
        } catch {
          if (++failures >= REMOTE_READ_ATTEMPTS) return ended();
        }
        if (!done) timer = setTimeout(poll, pollMs);
      };
      timer = setTimeout(poll, pollMs);
      return () => {
        done = true;
        clearTimeout(timer);
      };
    },
  };
}

/** The `stats` event of a status's stats (`elapsedMillis` as the events count it). */
function eventStats(
  stats: Partial<Record<keyof EventStats, number>>,
  elapsedMillis: number,
): EventStats {
  return {
    rowsOut: stats.rowsOut ?? 0,
    elapsedMillis,
    filesRead: stats.filesRead ?? 0,
    bytesRead: stats.bytesRead ?? 0,
    recordsRead: stats.recordsRead ?? 0,
    ...(stats.etaMillis === undefined ? {} : { etaMillis: stats.etaMillis }),
  };
}
