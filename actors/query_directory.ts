/**
 * The query directory: the one place the routes ask about a query by its id. `find(user, id)`
 * says what the id is to that user (live on this server, answered synchronously, run by another
 * server sharing the KV, expired, or unknown) and gives a `QueryHandle` with the same methods
 * whatever holds the query; the routes never read an actor or a shared record themselves.
 *
 * A query's id has one home on each server: the supervisor (actors/supervisor.ts), which holds
 * the actors with what was submitted (for `GET /queries`) and Idempotency-Key, the statuses of
 * answered synchronous queries and the ids of expired ones; with a shared KV, the records of
 * every server (actors/shared_queries.ts). The directory is the one reader of both.
 */

import { topState } from "./query_machine.ts";
import {
  idempotentQuery,
  lookupQuery,
  type QueryRef,
  queryRef,
  type SupervisorRef,
} from "./supervisor.ts";
import type { SharedQueries } from "./shared_queries.ts";
import { compileAndSubmit, type Submission, type SubmissionDeps } from "./submission.ts";
import { AnsweredHandle, LiveHandle, RemoteHandle } from "./query_handles.ts";
import type { QueryHandle } from "./query_handle.ts";
import { type User } from "../engine/mod.ts";

export type { QueryHandle } from "./query_handle.ts";
export type { LiveHandle } from "./query_handles.ts";

/** What an id is to a user. */
export type Found =
  /** Held by this server: running, waiting or finished with its result. */
  | { readonly kind: "live"; readonly handle: LiveHandle }
  /** A synchronous query already answered: only its status is kept. */
  | { readonly kind: "answered"; readonly handle: QueryHandle }
  /** Held by another server sharing the KV. */
  | { readonly kind: "remote"; readonly handle: QueryHandle }
  /** Dropped, freed or expired: 410. */
  | { readonly kind: "expired" }
  /** Never known, or another user's: 404. */
  | { readonly kind: "unknown" };

/** One query of `GET /queries`. */
export interface QueryListItem {
  readonly queryId: string;
  readonly user: string;
  readonly state: string;
  readonly progress: number;
  /** ISO 8601 in UTC. */
  readonly submitted: string;
  readonly scriptPath: string;
  readonly excerpt: string;
}

export type SubmitOutcome =
  | { readonly ok: true; readonly queryId: string; readonly handle: LiveHandle }
  | Exclude<Awaited<ReturnType<typeof compileAndSubmit>>, { ok: true }>;

export class QueryDirectory {
  constructor(
    readonly supervisor: SupervisorRef,
    readonly shared?: SharedQueries,
    readonly now: () => number = Date.now,
  ) {}

  /**
   * What `queryId` is to `user`: their query (an admin: anyone's) wherever it is, or expired, or
   * unknown (also another user's, so that ids of others cannot be probed). Finding a live query
   * restarts its retention.
   */
  async find(user: User, queryId: string): Promise<Found> {
    const local = lookupQuery(this.supervisor, queryId, user);
    switch (local.kind) {
      case "found":
        this.supervisor.send({ type: "TOUCH", queryId });
        return { kind: "live", handle: this.#live(queryId, local.ref, local.owner) };
      case "answered":
        return {
          kind: "answered",
          handle: new AnsweredHandle(queryId, local.owner, local.status, this.#stops(queryId)),
        };
      case "expired":
        return { kind: "expired" };
    }
    if (!this.shared) return { kind: "unknown" };
    const found = await this.shared.record(queryId);
    // An admin may use every user's query, as on the server that runs it.
    if (!found || (found.record.owner !== user.name && !user.admin)) return { kind: "unknown" };
    if (found.record.freed) return { kind: "expired" };
    return { kind: "remote", handle: new RemoteHandle(found.record, user, this.shared) };
  }

  /** Compiles and submits a query; a handle on it, or why there is none. */
  async submit(deps: SubmissionDeps, submission: Submission): Promise<SubmitOutcome> {
    const submitted = await compileAndSubmit(deps, submission);
    if (!submitted.ok) return submitted;
    const { queryId } = submitted;
    return { ok: true, queryId, handle: this.#live(queryId, submitted.ref) };
  }

  /** The query `user` submitted with this Idempotency-Key, while it is held. */
  idempotent(user: User, idempotencyKey: string): LiveHandle | undefined {
    const held = idempotentQuery(this.supervisor, user, idempotencyKey);
    return held && this.#live(held.queryId, held.ref);
  }

  /**
   * The retained queries `user` may see (an admin: everyone's, or those of `only`), newest
   * first; with a shared KV those of every server.
   */
  async list(user: User, only?: string): Promise<QueryListItem[]> {
    const visible = (owner: string) =>
      user.admin ? only === undefined || owner === only : owner === user.name;
    const items: QueryListItem[] = [];
    for (const [queryId, entry] of this.supervisor.getSnapshot().context.queries) {
      if (!visible(entry.owner)) continue;
      const { context, value } = entry.ref.getSnapshot();
      const { note } = entry;
      const submitted = note?.submitted ?? context.stateChanges[0]?.millis ?? this.now();
      items.push({
        queryId,
        user: entry.owner,
        state: topState(value),
        progress: context.progress,
        submitted: new Date(submitted).toISOString(),
        scriptPath: note?.scriptPath ?? "",
        excerpt: note?.excerpt ?? "",
      });
    }
    if (this.shared) {
      const known = new Set(items.map((item) => item.queryId));
      for (const record of await this.shared.list(visible)) {
        if (known.has(record.queryId)) continue;
        items.push({
          queryId: record.queryId,
          user: record.owner,
          state: record.status.state,
          progress: Number(record.status.progress ?? 0),
          submitted: new Date(record.submitted).toISOString(),
          scriptPath: record.scriptPath,
          excerpt: record.excerpt,
        });
      }
    }
    return items.sort((a, b) => b.submitted.localeCompare(a.submitted));
  }

  #live(queryId: string, ref: QueryRef, owner = ref.getSnapshot().context.owner.name): LiveHandle {
    return new LiveHandle(queryId, owner, ref, this.supervisor, this.#stops(queryId));
  }

  /** Freeing a finished query: here, and (a shared KV) its record, so others answer 410 at once. */
  #stops(queryId: string) {
    return {
      free: async () => {
        this.supervisor.send({ type: "FREE", queryId });
        await this.shared?.free(queryId);
      },
    };
  }

  /** The actor of a held query (tests). */
  refOf(queryId: string): QueryRef | undefined {
    return queryRef(this.supervisor, queryId);
  }
}
