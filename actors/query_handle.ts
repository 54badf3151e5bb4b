/**
 * A handle on one query, whatever holds it: an actor of this server (live), the status of an
 * answered synchronous query, or another server's record (remote). The query directory
 * (actors/query_directory.ts) gives them; the routes use nothing else of a query.
 */

import type { EventPosition, QueryEvent } from "./query_event_feed.ts";
import type { QueryState } from "./query_machine.ts";
import type { StoredItem } from "./result_store.ts";
import { type Diagnostic, type RenderedRows, type Schema, type User } from "../engine/mod.ts";

/** The status object as the API shows it (`state` inside). */
export type QueryStatus = Record<string, unknown> & { readonly state: QueryState };

/** The items of a result, wherever they are: a local store or the shared storage. */
export interface ResultItems {
  readonly count: number;
  readonly schema: Schema;
  /** The format fixed at POST (the routes' FixedFormat), opaque here. */
  readonly fixed: unknown;
  /** Whose query: its zone renders the times. */
  readonly owner: User;
  /** The items when they are all at hand (a small result), else undefined. */
  inMemory(first: number, last: number): readonly StoredItem[] | undefined;
  read(first: number, last: number): AsyncIterable<readonly StoredItem[]>;
  /** As `read`, rows stored rendered as their bytes (ResultStore.readParts); absent: `read`. */
  readParts?(first: number, last: number): AsyncIterable<readonly StoredItem[] | RenderedRows>;
}

/**
 * The items of a result while the query still runs, read as they are stored
 * (ResultStore.follow): only for rows stored as text of a format fixed at POST.
 */
export interface LiveItems {
  /** The format fixed at POST (the routes' FixedFormat, its columns known), opaque here. */
  readonly fixed: unknown;
  readonly owner: User;
  /**
   * Every item in order; ends once the query has SUCCEEDED and all were given, throws when it
   * ends otherwise (FAILED, CANCELLED, freed): a body made from it breaks, never ends short.
   */
  follow(): AsyncIterable<readonly StoredItem[] | RenderedRows>;
}

/**
 * The rows of a RUNNING query so far (ResultStore.readPlaced): `count` is how many have their
 * place in the result fixed now, `schema` the columns seen so far. Read by range like a finished
 * result; the next read may give more.
 */
export interface PartialItems extends ResultItems {
  readonly state: QueryState;
}

/** A query's result, or why it has none. */
export type ResultOutcome =
  | { readonly ok: true; readonly items: ResultItems }
  /** Answered synchronously: only its status is kept. */
  | { readonly ok: false; readonly why: "not-kept" }
  /** SUCCEEDED on another server, which could not store its result for the others. */
  | { readonly ok: false; readonly why: "not-stored" }
  /** Not SUCCEEDED (yet). */
  | {
    readonly ok: false;
    readonly why: "state";
    readonly state: QueryState;
    readonly error?: Diagnostic;
  };

export interface QueryHandle {
  readonly queryId: string;
  /** The owner's name. */
  readonly owner: string;
  /** Whether its result, schema and events are kept (not for an answered synchronous query). */
  readonly kept: boolean;
  /** The status object as the API shows it. */
  status(): QueryStatus;
  /** Whether it has reached a finished state. */
  finished(): boolean;
  /** Its result once SUCCEEDED (items read by range), or why there is none. */
  result(): ResultOutcome;
  /** Its events from `resume` on (see actors/query_event_feed.ts); only when `kept`. */
  events(resume: EventPosition | undefined): ReadableStream<QueryEvent>;
  /** Cancels it while it is unfinished, frees it (everywhere) once finished. */
  stop(): Promise<{ readonly stopped: "cancelled" | "freed"; readonly status: QueryStatus }>;
  /** Restarts its retention (a read of its result ended). */
  touch(): void;
  /**
   * Its result while it runs (LiveItems), once `items` items are stored; undefined when it is
   * not RUNNING here with rows stored as text, or finished first (then `result`). Only a
   * query of this server has it.
   */
  following?(items: number): Promise<LiveItems | undefined>;
  /**
   * Its rows so far while it is RUNNING (a ranged read that does not wait for the end);
   * undefined in any other state. Only a query of this server has it.
   */
  partial?(): PartialItems | undefined;
}
