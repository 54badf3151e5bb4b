/**
 * The query routes for a query that another server runs (servers sharing a KV; see
 * actors/shared_queries.ts): status, DELETE, result, schema and events answered from the
 * query's record and its stored result. The owner check is the local one's: another user's
 * query answers 404, as an id that does not exist, except to an admin, who may use them all.
 */

import type { Context } from "hono";
import { lookupQuery } from "../actors/supervisor.ts";
import { isFinished } from "../actors/query_machine.ts";
import type { SharedRecord } from "../actors/shared_queries.ts";
import {
  type Diagnostic,
  formatDiagnostic,
  type Schema,
  schemaFromJson,
  type User,
} from "../engine/mod.ts";
import type { StoredItem } from "../actors/result_store.ts";
import type { QueryState } from "../actors/query_machine.ts";
import { ApiError } from "./errors.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";
import { type FixedFormat, QUERY_ID, type QueryDeps } from "./query_request.ts";

/** How often an event stream of another server's query reads its record. */
export const REMOTE_POLL_MS = 250;

export interface RemoteQuery {
  readonly record: SharedRecord;
}

/**
 * The caller's query (any user's for an admin) held by another server (its record in the
 * storage), or undefined when this server knows the id itself, there is no shared registry, or
 * the caller may not use it (the local route then answers as it would). A freed one is 410.
 */
export async function remoteQuery(
  c: Context<AppEnv>,
  deps: QueryDeps,
): Promise<RemoteQuery | undefined> {
  const shared = deps.sharedQueries;
  const queryId = c.req.param("id") ?? "";
  if (!shared || !QUERY_ID.test(queryId)) return undefined;
  const user = c.get("user");
  if (lookupQuery(deps.supervisor, queryId, user).kind !== "unknown") return undefined;
  const found = await shared.record(queryId);
  // An admin may use every user's query, as on the server that runs it (lookupQuery).
  if (!found || (found.record.owner !== user.name && !user.admin)) return undefined;
  if (found.record.freed) {
    throw new ApiError(
      410,
      "QUERY_EXPIRED",
      `query ${queryId} has expired or was freed; its result is gone`,
    );
  }
  return { record: found.record };
}

const resultLocation = (queryId: string) => `/API/v1.0/queries/${queryId}/result`;

export function remoteStatus(c: Context<AppEnv>, { record }: RemoteQuery): Response {
  const finished = isFinished(record.status.state);
  return sendJson(
    c,
    record.status,
    200,
    finished && !record.answered ? { Location: resultLocation(record.queryId) } : {},
  );
}

/** DELETE: a finished query is freed everywhere (204); an unfinished one is asked to cancel. */
export async function remoteDelete(
  c: Context<AppEnv>,
  deps: QueryDeps,
  { record }: RemoteQuery,
  /** Tells an admin's cancel or free of another user's query (as the local DELETE does). */
  said?: (finished: boolean, owner: string) => void,
): Promise<Response> {
  const shared = deps.sharedQueries!;
  said?.(isFinished(record.status.state), record.owner);
  if (isFinished(record.status.state)) {
    await shared.free(record.queryId);
    return c.body(null, 204);
  }
  await shared.askCancel(record.queryId);
  return sendJson(c, record.status);
}

/** 410 for a synchronous query already answered: only its status is kept (as findQuery). */
export function requireKept({ record }: RemoteQuery): void {
  if (record.answered && isFinished(record.status.state)) {
    throw new ApiError(
      410,
      "QUERY_EXPIRED",
      `query ${record.queryId} was answered synchronously: its result is not kept, only its status`,
    );
  }
}

/** 409 unless SUCCEEDED (as requireSucceeded); 410 when its result was not kept. */
export function requireRemoteResult(remote: RemoteQuery): void {
  const { record } = remote;
  const { state } = record.status;
  const queryId = record.queryId;
  requireKept(remote);
  if (state === "SUCCEEDED" && !record.result) {
    throw new ApiError(
      410,
      "QUERY_EXPIRED",
      `the result of query ${queryId} could not be stored for the other servers; the server that ran it has it`,
    );
  }
  requireSucceededState(queryId, state, record.status.error as Diagnostic | undefined);
}

/** The parts of a remote result the result writers need. */
export function remoteItems(
  deps: QueryDeps,
  c: Context<AppEnv>,
  { record }: RemoteQuery,
): {
  count: number;
  schema: Schema;
  fixed: FixedFormat | undefined;
  owner: User;
  inMemory(): undefined;
  read(first: number, last: number): AsyncIterable<readonly StoredItem[]>;
} {
  const result = record.result!;
  const shared = deps.sharedQueries!;
  return {
    count: result.count,
    schema: record.schema === undefined ? [] : schemaFromJson(record.schema),
    fixed: record.fixedFormat as FixedFormat | undefined,
    // Read in the owner's zone, as the server that ran it reads it (an admin may read another's).
    owner: ownerOf(c.get("user"), record),
    inMemory: () => undefined,
    read: (first: number, last: number) => shared.readResult(record.queryId, result, first, last),
  };
}

/** The query's owner as far as reading its result goes: the caller, or who the record names. */
function ownerOf(caller: User, record: SharedRecord): User {
  if (record.owner === caller.name) return caller;
  return { name: record.owner, groups: [], admin: false, timeZone: record.ownerTimeZone };
}

/**
 * The event stream of another server's query: its record read every REMOTE_POLL_MS, and the
 * same events as for a local one (routes/query_events.ts) made from the differences.
 */
export function remoteEvents(
  deps: QueryDeps,
  remote: RemoteQuery,
  resume: { readonly changes: number; readonly warnings: number } | undefined,
): ReadableStream<Uint8Array> {
  const shared = deps.sharedQueries!;
  const encoder = new TextEncoder();
  const queryId = remote.record.queryId;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const first = remote.record.status;
      // As the local stream (query_events.ts): a position past the query's resumes from now.
      let changes = Math.min(resume?.changes ?? Infinity, (first.stateChanges as unknown[]).length);
      let warnings = Math.min(resume?.warnings ?? Infinity, (first.warnings as unknown[]).length);
      let progress = first.progress;
      const send = (event: string, data: unknown) => {
        if (closed) return;
        try {
          controller.enqueue(
            encoder.encode(
              `id: ${changes}.${warnings}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`,
            ),
          );
        } catch {
          closed = true;
        }
      };
      const stats = (status: SharedRecord["status"]) => {
        const s = status.stats as { rowsOut?: number; elapsedMillis?: number } | undefined;
        return { rowsOut: s?.rowsOut ?? 0, elapsedMillis: s?.elapsedMillis ?? 0 };
      };
      const close = () => {
        if (closed) return;
        closed = true;
        clearTimeout(timer);
        try {
          controller.close();
        } catch {
          // the client went away
        }
      };
      const missed = (status: SharedRecord["status"]) => {
        const stateChanges = status.stateChanges as unknown[];
        const warningList = status.warnings as unknown[];
        while (changes < stateChanges.length) send("state", stateChanges[changes++]);
        while (warnings < warningList.length) send("warning", warningList[warnings++]);
      };
      const update = (status: SharedRecord["status"]) => {
        missed(status);
        if (status.progress !== progress) {
          progress = status.progress;
          send("progress", { progress });
          send("stats", stats(status));
        }
        if (isFinished(status.state)) {
          send("stats", stats(status));
          close();
        }
      };
      const poll = async () => {
        timer = undefined;
        if (closed) return;
        try {
          const found = await shared.record(queryId);
          if (!found || found.record.freed) return close();
          update(found.record.status);
        } catch {
          return close();
        }
        if (!closed) timer = setTimeout(poll, REMOTE_POLL_MS);
      };
      // Resumed, the missed changes first, then the status they lead to.
      if (resume) missed(first);
      send("status", first);
      update(first);
      if (!closed) timer = setTimeout(poll, REMOTE_POLL_MS);
    },
    cancel() {
      closed = true;
      clearTimeout(timer);
    },
  });
}

/** requireSucceeded for a query known by its id, state and error (also another server's). */
export function requireSucceededState(
  queryId: string,
  state: QueryState,
  error: Diagnostic | undefined,
): void {
  switch (state) {
    case "SUCCEEDED":
      return;
    case "FAILED":
      throw new ApiError(
        409,
        "QUERY_FAILED",
        `query ${queryId} failed: ${error ? formatDiagnostic(error) : "unknown error"}`,
        { extra: { state, error } },
      );
    case "CANCELLED":
      throw new ApiError(409, "QUERY_CANCELLED", `query ${queryId} was cancelled`, {
        extra: { state },
      });
    default:
      throw new ApiError(
        409,
        "QUERY_NOT_FINISHED",
        `query ${queryId} is ${state}; its result is there once it has SUCCEEDED`,
        { extra: { state } },
      );
  }
}
