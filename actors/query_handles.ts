/**
 * The three kinds of QueryHandle (actors/query_handle.ts): a query actor of this server, the
 * kept status of an answered synchronous query, and another server's query (its record in the
 * shared KV, actors/shared_queries.ts).
 */

import { waitFor } from "xstate";
import {
  actorFeed,
  type EventPosition,
  type QueryEvent,
  queryEvents,
  recordFeed,
} from "./query_event_feed.ts";
import { isFinished, queryStatus, type QueryWarning, topState } from "./query_machine.ts";
import type { QueryRef, SupervisorEvent } from "./supervisor.ts";
import type { SharedQueries } from "./shared_queries.ts";
import type { SharedRecord } from "./shared/records.ts";
import type {
  LiveItems,
  PartialItems,
  QueryHandle,
  QueryStatus,
  ResultOutcome,
} from "./query_handle.ts";
import type { ResultStore } from "./result_store.ts";
import { type Diagnostic, schemaFromJson, type User } from "../engine/mod.ts";

/** How a handle frees its query: the supervisor drops it, and a shared record is tombstoned. */
export interface Freeing {
  free(): Promise<void>;
}

/** A query actor of this server. */
export class LiveHandle implements QueryHandle {
  readonly kept = true;

  constructor(
    readonly queryId: string,
    readonly owner: string,
    readonly ref: QueryRef,
    readonly supervisor: { send(event: SupervisorEvent): void },
    readonly freeing: Freeing,
  ) {}

  status(): QueryStatus {
    return queryStatus(this.ref.getSnapshot());
  }

  finished(): boolean {
    return isFinished(topState(this.ref.getSnapshot().value));
  }

  result(): ResultOutcome {
    const { context, value } = this.ref.getSnapshot();
    const state = topState(value);
    if (state !== "SUCCEEDED") {
      return { ok: false, why: "state", state, ...(context.error ? { error: context.error } : {}) };
    }
    const { store } = context;
    return {
      ok: true,
      items: {
        count: store.count,
        schema: context.schema ?? [],
        fixed: context.fixedFormat,
        owner: context.owner,
        inMemory: (first, last) => store.inMemory(first, last),
        read: (first, last) => store.read(first, last),
        readParts: (first, last) => store.readParts(first, last),
      },
    };
  }

  events(resume: EventPosition | undefined): ReadableStream<QueryEvent> {
    return queryEvents(actorFeed(this.ref), resume);
  }

  partial(): PartialItems | undefined {
    const { context, value } = this.ref.getSnapshot();
    const state = topState(value);
    if (state !== "RUNNING" || !context.run) return undefined;
    const { store, run } = context;
    return {
      state,
      count: store.placed,
      schema: run.schema(),
      fixed: context.fixedFormat,
      owner: context.owner,
      inMemory: (first, last) => store.inMemory(first, last),
      read: (first, last) => store.readPlacedItems(first, last),
      readParts: (first, last) => store.readPlaced(first, last),
    };
  }

  async stop(): Promise<{ stopped: "cancelled" | "freed"; status: QueryStatus }> {
    if (this.finished()) {
      const status = this.status();
      await this.freeing.free();
      return { stopped: "freed", status };
    }
    this.supervisor.send({ type: "CANCEL", queryId: this.queryId });
    return { stopped: "cancelled", status: this.status() };
  }

  touch(): void {
    this.supervisor.send({ type: "TOUCH", queryId: this.queryId });
  }

  /** Whether it is (or gets) finished within `millis`; false early if `signal` aborts. */
  async settled(millis: number, signal: AbortSignal): Promise<boolean> {
    const done = () => this.finished();
    if (done() || millis === 0) return done();
    const { promise, resolve } = Promise.withResolvers<boolean>();
    const timer = setTimeout(() => resolve(false), millis);
    const gone = () => resolve(false);
    signal.addEventListener("abort", gone, { once: true });
    const subscription = this.ref.subscribe((s) => {
      if (isFinished(topState(s.value))) resolve(true);
    });
    try {
      return await promise;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", gone);
      subscription.unsubscribe();
    }
  }

  /** Resolves once it has finished, whatever its end. */
  whenFinished(): Promise<void> {
    if (this.finished()) return Promise.resolve();
    return waitFor(this.ref, (s) => isFinished(topState(s.value)), { timeout: Infinity })
      .then(() => {});
  }

  /**
   * Its result while it runs, once `items` items are stored (ResultStore.grown): for rows
   * stored as text of a format fixed at POST, while RUNNING (or SCHEDULED, about to run; with
   * `queued`, also while it waits for its turn); undefined otherwise or when it finished first.
   * `ended` (default `whenFinished()`) is when it is over. With `once` (a synchronous answer,
   * after which only the status is kept) the result is read once: what the reader has taken is
   * let go of (ResultStore.follow), and no other read may give it.
   */
  async following(
    items: number,
    { ended = this.whenFinished(), queued = false, once = false }: {
      readonly ended?: Promise<void>;
      readonly queued?: boolean;
      readonly once?: boolean;
    } = {},
  ): Promise<LiveItems | undefined> {
    const { context, value } = this.ref.getSnapshot();
    const state = topState(value);
    const runs = state === "RUNNING" || state === "SCHEDULED" ||
      (queued && (state === "NEW" || state === "QUEUED"));
    // A query that fails on a warning is answered once it has finished (its status line says).
    if (!context.encoder || !runs || context.failOnWarning) return undefined;
    await context.store.grown(items, ended);
    // Sealed: it is about to finish, and a result that was whole then is answered whole (a small
    // one without a stream, its status line telling how it ended).
    if (this.finished() || context.store.sealed) return undefined;
    return {
      fixed: context.fixedFormat,
      owner: context.owner,
      follow: () => this.#follow(context.store, ended, once),
    };
  }

  /** The store's items as they come; ends only once the query has SUCCEEDED. */
  async *#follow(store: ResultStore, ended: Promise<void>, once: boolean) {
    yield* store.follow(ended, once);
    await ended;
    const state = topState(this.ref.getSnapshot().value);
    if (state !== "SUCCEEDED") {
      throw new Error(`query ${this.queryId} ended ${state} while its result was being sent`);
    }
  }

  /** Waits until it has finished; cancels it if `signal` aborts first (the client went away). */
  async finishedUnless(signal: AbortSignal): Promise<void> {
    const gone = () => this.supervisor.send({ type: "CANCEL", queryId: this.queryId });
    signal.addEventListener("abort", gone, { once: true });
    try {
      await waitFor(this.ref, (s) => isFinished(topState(s.value)), { timeout: Infinity });
    } finally {
      signal.removeEventListener("abort", gone);
    }
  }

  /** Its warnings and error, as its status has them. */
  outcome(): { readonly warnings: readonly QueryWarning[]; readonly error?: Diagnostic } {
    const { warnings, error } = this.ref.getSnapshot().context;
    return { warnings, ...(error ? { error } : {}) };
  }

  /** Answered synchronously: its status is kept for the retention, its actor and result go. */
  answered(): void {
    this.supervisor.send({ type: "ANSWERED", queryId: this.queryId, status: this.status() });
  }

  /** Drops it here at once (a synchronous query whose client went away). */
  drop(): void {
    this.supervisor.send({ type: "FREE", queryId: this.queryId });
  }
}

/** An answered synchronous query of this server: its status only. */
export class AnsweredHandle implements QueryHandle {
  readonly kept = false;

  constructor(
    readonly queryId: string,
    readonly owner: string,
    readonly answeredStatus: unknown,
    readonly freeing: Freeing,
  ) {}

  status(): QueryStatus {
    return this.answeredStatus as QueryStatus;
  }

  finished(): boolean {
    return true;
  }

  result(): ResultOutcome {
    return { ok: false, why: "not-kept" };
  }

  events(): ReadableStream<QueryEvent> {
    throw new Error(`query ${this.queryId} was answered synchronously: it has no events`);
  }

  async stop(): Promise<{ stopped: "freed"; status: QueryStatus }> {
    await this.freeing.free();
    return { stopped: "freed", status: this.status() };
  }

  touch(): void {}
}

/** Another server's query, from its record in the shared KV (read when it was found). */
export class RemoteHandle implements QueryHandle {
  readonly kept: boolean;

  constructor(
    readonly record: SharedRecord,
    /** Who asks: the result is read in their zone when it is their query. */
    readonly caller: User,
    readonly shared: SharedQueries,
  ) {
    this.kept = !(record.answered && this.finished());
  }

  get queryId(): string {
    return this.record.queryId;
  }

  get owner(): string {
    return this.record.owner;
  }

  status(): QueryStatus {
    return this.record.status;
  }

  finished(): boolean {
    return isFinished(this.record.status.state);
  }

  result(): ResultOutcome {
    const { record, shared } = this;
    const { state } = record.status;
    if (!this.kept) return { ok: false, why: "not-kept" };
    if (state === "SUCCEEDED" && !record.result) return { ok: false, why: "not-stored" };
    if (state !== "SUCCEEDED") {
      const error = record.status.error as Diagnostic | undefined;
      return { ok: false, why: "state", state, ...(error ? { error } : {}) };
    }
    const result = record.result!;
    return {
      ok: true,
      items: {
        count: result.count,
        schema: record.schema === undefined ? [] : schemaFromJson(record.schema),
        fixed: record.fixedFormat,
        // Read in the owner's zone, as the server that ran it reads it (an admin reads others').
        owner: ownerOf(this.caller, record),
        inMemory: () => undefined,
        read: (first, last) => shared.readResult(record.queryId, result, first, last),
      },
    };
  }

  events(resume: EventPosition | undefined): ReadableStream<QueryEvent> {
    return queryEvents(recordFeed(this.shared, this.record), resume);
  }

  async stop(): Promise<{ stopped: "cancelled" | "freed"; status: QueryStatus }> {
    if (this.finished()) {
      await this.shared.free(this.queryId);
      return { stopped: "freed", status: this.status() };
    }
    await this.shared.askCancel(this.queryId);
    return { stopped: "cancelled", status: this.status() };
  }

  touch(): void {}
}

/** The query's owner as far as reading its result goes: the caller, or who the record names. */
function ownerOf(caller: User, record: SharedRecord): User {
  if (record.owner === caller.name) return caller;
  return { name: record.owner, groups: [], admin: false, timeZone: record.ownerTimeZone };
}
