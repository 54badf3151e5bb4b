/**
 * The owner's side of a shared query: follows the actor of a query this server runs and
 * publishes its record as it changes (an unfinished state at most every PROGRESS_WRITE_MS, and
 * only once it lasted PUBLISH_DELAY_MS), then its end: the result stored as pages when it
 * SUCCEEDED, the final record and the freed slot in one commit. A record changed by another
 * server means this server was taken for dead: the query is cancelled here.
 */

import { isFinished, type QueryState, queryStatus, topState } from "../query_machine.ts";
import type { QueryRef } from "../supervisor.ts";
import type { Records, SharedRecord, SharedResult } from "./records.ts";
import type { ResultPages } from "./result_pages.ts";
import type { HandOver, SlotOutcome } from "./slots.ts";
import type { CommitEntry } from "../../engine/mod.ts";
import { schemaToJson } from "../../engine/mod.ts";

/** A record is written at most this often for progress alone. */
const PROGRESS_WRITE_MS = 1_000;
/** An unfinished state is written this long after it is entered (a quick query's never are). */
const PUBLISH_DELAY_MS = 150;
/** A finish whose commit failed is tried again after this long. */
const FINISH_RETRY_MS = 1_000;

/** What the publisher needs of the facade (actors/shared_queries.ts). */
export interface PublisherHost {
  readonly records: Records;
  readonly pages: ResultPages;
  readonly retentionMs: number;
  /** The query's result is being stored: its running slot is freed (`next` moved in). */
  storing(queryId: string, next: HandOver | undefined): Promise<void>;
  /**
   * The query ends: its slot or place goes (`next` moved in), `entries` written with it in one
   * commit (`applied: false`: an entry's expected version did not hold, nothing written).
   */
  end(
    queryId: string,
    entries: readonly CommitEntry[],
    next: HandOver | undefined,
  ): Promise<SlotOutcome>;
  now(): number;
  stopping(): boolean;
  /** Whether this server holds a running slot for the query. */
  holds(queryId: string): boolean;
  /** The query no longer waits for or holds a slot here. */
  forgetLocal(queryId: string): void;
  /** This server's next queued query, moved into the slot `queryId` held (see handOver). */
  handOver(queryId: string, held: boolean): Promise<HandOver | undefined>;
  /** Marks the query FAILED and frees its slot. */
  fail(queryId: string, message: string): Promise<void>;
  warn(doing: string, e: unknown): void;
  /** Another server marked the query FAILED (it took this one for dead): cancel it here. */
  lost(queryId: string): void;
}

export interface Tracked {
  ref: QueryRef | undefined;
  readonly shareResult: boolean;
  /** The record's version as this server last wrote it; a change by another means it lost it. */
  version: string | null;
  /** The record as last written. */
  record: SharedRecord;
  /** Writes of this query's record, one after another. */
  chain: Promise<void>;
  /** A write is queued on the chain (later changes ride on it). */
  queued: boolean;
  /** A write of an unfinished state waits for PUBLISH_DELAY_MS (a quick query skips it). */
  timer: ReturnType<typeof setTimeout> | undefined;
  lastState: QueryState;
  lastWrite: number;
  /** The final record has been written (or given up). */
  finished: boolean;
  /** Another server failed it (this server's lease was taken for dead): stop writing. */
  lost: boolean;
}

export class Publisher {
  readonly tracked = new Map<string, Tracked>();

  constructor(readonly host: PublisherHost) {}

  /** Notes an admitted query (its record as created, at `version`). */
  admitted(record: SharedRecord, version: string | null, shareResult: boolean): void {
    this.tracked.set(record.queryId, {
      ref: undefined,
      shareResult,
      version,
      record,
      chain: Promise.resolve(),
      queued: false,
      timer: undefined,
      lastState: "QUEUED",
      lastWrite: this.host.now(),
      finished: false,
      lost: false,
    });
  }

  /** Follows the query's actor. */
  follow(queryId: string, ref: QueryRef): void {
    const entry = this.tracked.get(queryId);
    if (!entry) return;
    entry.ref = ref;
    const changed = () => this.#changed(queryId, entry);
    ref.subscribe({
      next: changed,
      error: changed,
      complete: () => this.#dropped(queryId, entry),
    });
    changed();
  }

  /** Whether the query has not ended here (still followed and its end not written). */
  unfinished(queryId: string): boolean {
    return this.tracked.get(queryId)?.finished === false;
  }

  /** The unfinished queries, once their writes are done (the server stops). */
  async *open(): AsyncGenerator<string> {
    for (const [id, entry] of [...this.tracked].filter(([, t]) => !t.finished)) {
      await entry.chain;
      entry.finished = true;
      yield id;
    }
  }

  #changed(queryId: string, entry: Tracked): void {
    if (entry.finished || entry.lost || this.host.stopping() || entry.ref === undefined) return;
    const state = topState(entry.ref.getSnapshot().value);
    if (isFinished(state)) {
      clearTimeout(entry.timer);
      entry.timer = undefined;
      this.#write(queryId, entry);
      return;
    }
    const now = this.host.now();
    if (state === entry.lastState && now - entry.lastWrite < PROGRESS_WRITE_MS) return;
    // Later: a quick query's intermediate states are never written, only its end.
    entry.timer ??= setTimeout(() => {
      entry.timer = undefined;
      this.#write(queryId, entry);
    }, PUBLISH_DELAY_MS);
  }

  /** Queues a write of the query's record as its actor now is (one queued at a time). */
  #write(queryId: string, entry: Tracked): void {
    if (entry.queued) return; // the queued write takes the latest snapshot
    entry.queued = true;
    entry.chain = entry.chain.then(async () => {
      entry.queued = false;
      if (entry.finished || entry.lost || this.host.stopping()) return;
      const current = topState(entry.ref!.getSnapshot().value);
      entry.lastState = current;
      entry.lastWrite = this.host.now();
      try {
        if (isFinished(current)) await this.#finish(queryId, entry);
        else await this.#publish(queryId, entry);
      } catch (e) {
        this.host.warn(`writing the record of query ${queryId}`, e);
        if (isFinished(current) && !entry.lost && !this.host.stopping()) {
          // Its slot must be freed and its end told: tried again a little later.
          entry.finished = false;
          setTimeout(() => this.#write(queryId, entry), FINISH_RETRY_MS);
        }
      }
    });
  }

  async #publish(queryId: string, entry: Tracked): Promise<void> {
    const record: SharedRecord = { ...entry.record, status: queryStatus(entry.ref!.getSnapshot()) };
    const version = await this.host.records.update(record, entry.version);
    if (version === null) return this.#lose(queryId, entry);
    entry.version = version;
    entry.record = record;
  }

  /** The final record (with the result stored first when it SUCCEEDED), the slot freed. */
  async #finish(queryId: string, entry: Tracked): Promise<void> {
    const { host } = this;
    entry.finished = true;
    const held = host.holds(queryId);
    host.forgetLocal(queryId);
    const next = await host.handOver(queryId, held).catch(() => undefined);
    const snapshot = entry.ref!.getSnapshot();
    const { context } = snapshot;
    const status = queryStatus(snapshot);
    let result: SharedResult | undefined;
    if (status.state === "SUCCEEDED" && entry.shareResult) {
      // Its running slot is free while the result is stored (the next query need not wait).
      await host.storing(queryId, next);
      try {
        const columns = (context.schema ?? []).map((f) => f.name);
        // The pages outlive the record.
        result = await host.pages.write(queryId, context.store, columns, host.retentionMs + 60_000);
      } catch (e) {
        host.warn(`storing the result of query ${queryId}`, e);
      }
    }
    const record: SharedRecord = {
      ...entry.record,
      status,
      ...(context.schema ? { schema: schemaToJson(context.schema) } : {}),
      ...(context.fixedFormat === undefined ? {} : { fixedFormat: context.fixedFormat }),
      ...(result ? { result } : {}),
    };
    const handedOver = next && !entry.shareResult ? next : undefined;
    const outcome = await host.end(
      queryId,
      [host.records.final(record, entry.version)],
      handedOver,
    );
    if (outcome.applied) {
      entry.version = outcome.version;
      entry.record = record;
      return;
    }
    // Another server failed it meanwhile (and freed its slot): the result goes.
    entry.lost = true;
    await host.pages.drop(queryId, result);
    await host.end(queryId, [], undefined).catch(() => {});
  }

  /** The actor was dropped (freed, expired, crashed) or the supervisor stopped. */
  #dropped(queryId: string, entry: Tracked): void {
    const { host } = this;
    host.forgetLocal(queryId);
    if (host.stopping()) return;
    entry.chain = entry.chain.then(async () => {
      this.tracked.delete(queryId);
      try {
        if (!entry.finished && isFinished(topState(entry.ref!.getSnapshot().value))) {
          await this.#finish(queryId, entry); // its end was not written yet
        } else if (!entry.finished) {
          entry.finished = true;
          await host.fail(queryId, "the query stopped through an internal error");
        } else if (entry.shareResult && !entry.lost) {
          const found = await host.records.get(queryId);
          if (found && !found.record.freed) await host.records.tombstone(found);
          await host.pages.drop(queryId, found?.record.result);
        }
      } catch (e) {
        host.warn(`freeing query ${queryId}`, e);
      }
    });
  }

  /** Another server marked this query FAILED (it took this server for dead). */
  #lose(queryId: string, entry: Tracked): void {
    entry.lost = true;
    this.host.lost(queryId);
  }
}
