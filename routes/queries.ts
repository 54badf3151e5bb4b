/**
 * The asynchronous API (specification, "Asynchronous API"; API.md, "Queries"):
 *
 *   POST   /queries?scriptPath=...        201, Location: /API/v1.0/queries/<id>, {"queryId"}
 *   GET    /queries/<id>                  status; Location of the result once finished
 *   DELETE /queries/<id>                  200 + status (cancels) or 204 (frees a finished one)
 *   GET    /queries/<id>/result           rows in the chosen format, Range by items
 *   GET    /queries/<id>/result/schema    always JSON
 *
 * Handlers only send events to the supervisor and read snapshots.
 */

import { Hono } from "hono";
import type { Context } from "hono";
import { type Schema, schemaToJson } from "../engine/types.ts";
import type { User } from "../engine/user.ts";
import type { StoredItem } from "../actors/result_store.ts";
import type { RenderedRows } from "../engine/exec/rendered.ts";
import { lookupQuery, type QueryRef } from "../actors/supervisor.ts";
import { isFinished, queryStatus, topState } from "../actors/query_machine.ts";
import { ApiError, badRequest, notFound } from "./errors.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";
import { batchWriterOf, formatSpec, negotiateFormat, type ResultFormat } from "./formats.ts";
import { contentRange, parseRange, resolveRange } from "./range.ts";
import {
  type FixedFormat,
  idempotencyKeyOf,
  QUERY_ID,
  type QueryDeps,
  queryZone,
  submitQuery,
  waitMillisOf,
} from "./query_request.ts";
import { batchBody, bodyShape, resultBody, smallBatchBody, smallBody } from "./result_body.ts";
import { columnsOf } from "../actors/engine_work.ts";
import type { QueryNotes } from "./query_list.ts";
import type { Logger } from "../home/log.ts";
import { CONTRACTS, validated } from "./contract.ts";
import {
  remoteDelete,
  remoteItems,
  remoteQuery,
  remoteStatus,
  requireRemoteResult,
  requireSucceededState,
} from "./shared_queries.ts";

export const QUERIES_PATH = "/API/v1.0/queries";

/** Results of at most this many items, all in memory, are answered as one string, unstreamed. */
const SMALL_BODY_ITEMS = 256;

export function queryRoutes(
  deps: QueryDeps,
  notes?: QueryNotes,
  /** Where an admin's cancel or free of another user's query is told. */
  log?: Pick<Logger, "info">,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.post("/queries", validated(CONTRACTS.submit), async (c) => {
    const waitMillis = waitMillisOf(new URL(c.req.url).searchParams);
    const idempotencyKey = idempotencyKeyOf(c);
    const { queryId, ref, source } = await submitQuery(c, deps, {
      alwaysFix: false,
      waitMillis: true,
      idempotencyKey,
      shareResult: true,
    });
    // A repeated Idempotency-Key answers the noted query again: nothing new to note.
    if (source) {
      notes?.note(queryId, source, new URL(c.req.url).searchParams.get("scriptPath") ?? "");
    }
    if (waitMillis !== undefined && await finishesWithin(ref, waitMillis, c.req.raw.signal)) {
      return sendJson(c, statusOf(ref), 200, { Location: `${QUERIES_PATH}/${queryId}/result` });
    }
    return sendJson(c, { queryId }, 201, { Location: `${QUERIES_PATH}/${queryId}` });
  });

  app.get("/queries/:id", async (c) => {
    // Another server's query (servers sharing a KV): answered from its record.
    const remote = await remoteQuery(c, deps);
    if (remote) return remoteStatus(c, remote);
    const found = findAny(c, deps);
    if (found.kind === "answered") return sendJson(c, found.status);
    const ref = found.ref;
    const snapshot = ref.getSnapshot();
    const headers: Record<string, string> = isFinished(topState(snapshot.value))
      ? { Location: `${QUERIES_PATH}/${c.req.param("id")}/result` }
      : {};
    return sendJson(c, statusOf(ref), 200, headers);
  });

  app.delete("/queries/:id", async (c) => {
    const queryId = c.req.param("id");
    const user = c.get("user");
    const said = (finished: boolean, owner: string) => {
      if (owner === user.name) return;
      log?.info(
        `admin '${user.name}' ${
          finished ? "freed" : "cancelled"
        } query ${queryId} of user '${owner}'`,
      );
    };
    const remote = await remoteQuery(c, deps);
    if (remote) return await remoteDelete(c, deps, remote, said);
    const found = findAny(c, deps);
    const finished = found.kind === "answered" ||
      isFinished(topState(found.ref.getSnapshot().value));
    said(finished, found.owner);
    if (finished) {
      deps.supervisor.send({ type: "FREE", queryId });
      // Its record goes too, so that the other servers answer 410 at once.
      await deps.sharedQueries?.free(queryId);
      return c.body(null, 204);
    }
    const ref = found.ref;
    deps.supervisor.send({ type: "CANCEL", queryId });
    return sendJson(c, statusOf(ref));
  });

  app.get("/queries/:id/result", validated(CONTRACTS.result), async (c) => {
    const remote = await remoteQuery(c, deps);
    if (remote) {
      requireRemoteResult(remote);
      return itemsResponse(c, deps, remoteItems(deps, c, remote));
    }
    const ref = findQuery(c, deps);
    requireSucceeded(ref);
    // The retention counts from the end of the last request naming the query: a long read's
    // end, not its start (while it reads, the supervisor keeps the result).
    const queryId = c.req.param("id");
    return resultResponse(c, deps, ref, () => deps.supervisor.send({ type: "TOUCH", queryId }));
  });

  app.get("/queries/:id/result/schema", async (c) => {
    const remote = await remoteQuery(c, deps);
    if (remote) {
      requireRemoteResult(remote);
      return sendJson(c, remote.record.schema ?? {});
    }
    const ref = findQuery(c, deps);
    requireSucceeded(ref);
    return sendJson(c, schemaToJson(ref.getSnapshot().context.schema ?? []));
  });

  return app;
}

/** The caller's query named in the path (TOUCHing it), or 404 / 410. */
export function findQuery(c: Context<AppEnv>, deps: QueryDeps): QueryRef {
  const found = findAny(c, deps);
  if (found.kind === "found") return found.ref;
  throw new ApiError(
    410,
    "QUERY_EXPIRED",
    `query ${
      c.req.param("id")
    } was answered synchronously: its result is not kept, only its status`,
  );
}

/** The caller's query, or the status of their answered synchronous query; else 404 / 410. */
function findAny(
  c: Context<AppEnv>,
  deps: QueryDeps,
): { kind: "found"; ref: QueryRef; owner: string } | {
  kind: "answered";
  status: unknown;
  owner: string;
} {
  const queryId = c.req.param("id") ?? "";
  if (!QUERY_ID.test(queryId)) throw notFound(`no such query: '${queryId}'`);
  const found = lookupQuery(deps.supervisor, queryId, c.get("user"));
  switch (found.kind) {
    case "answered":
      return found;
    case "found":
      deps.supervisor.send({ type: "TOUCH", queryId });
      return found;
    case "expired":
      throw new ApiError(
        410,
        "QUERY_EXPIRED",
        `query ${queryId} has expired or was freed; its result is gone`,
      );
    case "unknown":
      throw notFound(`no such query: '${queryId}'`);
  }
}

/** The status object of the specification, with the query's `stats` (API.md). */
export function statusOf(ref: QueryRef): Record<string, unknown> {
  return queryStatus(ref.getSnapshot());
}

/** Whether the query is (or gets) finished within `millis`; false early if the client goes. */
async function finishesWithin(
  ref: QueryRef,
  millis: number,
  signal: AbortSignal,
): Promise<boolean> {
  const done = () => isFinished(topState(ref.getSnapshot().value));
  if (done() || millis === 0) return done();
  const { promise, resolve } = Promise.withResolvers<boolean>();
  const timer = setTimeout(() => resolve(false), millis);
  const gone = () => resolve(false);
  signal.addEventListener("abort", gone, { once: true });
  const subscription = ref.subscribe((s) => {
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

/** 409 unless the query has SUCCEEDED: QUERY_NOT_FINISHED, QUERY_FAILED or QUERY_CANCELLED. */
export function requireSucceeded(ref: QueryRef): void {
  const { context, value } = ref.getSnapshot();
  requireSucceededState(context.queryId, topState(value), context.error);
}

/**
 * The rows of a succeeded query as the response: the format fixed at POST or negotiated now,
 * the Range, and a streamed body. `onClose` runs when the body is done (the synchronous API
 * frees the query then).
 */
export function resultResponse(
  c: Context<AppEnv>,
  deps: QueryDeps,
  ref: QueryRef,
  onClose?: () => void,
): Response {
  const { context } = ref.getSnapshot();
  const store = context.store;
  return itemsResponse(c, deps, {
    count: store.count,
    schema: context.schema ?? [],
    fixed: context.fixedFormat as FixedFormat | undefined,
    owner: context.owner,
    inMemory: (first, last) => store.inMemory(first, last),
    read: (first, last) => store.read(first, last),
    readParts: (first, last) => store.readParts(first, last),
  }, onClose);
}

/** The items of a result, wherever they are: a local store or the shared storage. */
export interface ResultItems {
  readonly count: number;
  readonly schema: Schema;
  readonly fixed: FixedFormat | undefined;
  readonly owner: User;
  /** The items when they are all at hand (a small result), else undefined. */
  inMemory(first: number, last: number): readonly StoredItem[] | undefined;
  read(first: number, last: number): AsyncIterable<readonly StoredItem[]>;
  /** As `read`, rows stored rendered as their bytes (ResultStore.readParts); absent: `read`. */
  readParts?(first: number, last: number): AsyncIterable<readonly StoredItem[] | RenderedRows>;
}

/** The response of `items` for the request's format and Range (see resultResponse). */
export function itemsResponse(
  c: Context<AppEnv>,
  deps: QueryDeps,
  items: ResultItems,
  onClose?: () => void,
): Response {
  const { fixed } = items;
  let format: ResultFormat;
  if (fixed) format = fixed.format;
  else {
    const choice = negotiateFormat(new URL(c.req.url).searchParams, c.req.header("Accept"));
    if (!choice.ok) throw new ApiError(choice.status, choice.code, choice.message);
    format = choice.format;
  }
  const parsed = parseRange(c.req.header("Range"));
  if (!parsed.ok) throw badRequest("BAD_PARAMETER", parsed.message);
  const total = items.count;
  let first = 0;
  let last = total - 1;
  let status: 200 | 206 = 200;
  const headers: Record<string, string> = {
    "Content-Type": formatSpec(format.mediaType).contentType,
    "Accept-Ranges": "items",
  };
  if (parsed.range) {
    const resolved = resolveRange(parsed.range, total);
    if (!resolved.ok) {
      throw new ApiError(416, "RANGE_NOT_SATISFIABLE", resolved.message, {
        headers: { "Content-Range": `items */${total}` },
      });
    }
    ({ first, last } = resolved);
    status = 206;
    headers["Content-Range"] = contentRange(first, last, total);
  }
  const zone = queryZone(items.owner, deps.settings);
  const few = last - first < SMALL_BODY_ITEMS ? items.inMemory(first, last) : undefined;
  const batches = batchWriterOf(formatSpec(format.mediaType));
  if (batches) {
    const writer = batches(items.schema, {
      timeZone: format.options.timeZone ?? zone,
      timestampFormat: format.options.timestampFormat,
    });
    if (few) {
      let bytes: Uint8Array<ArrayBuffer>;
      try {
        bytes = smallBatchBody(few, writer);
      } finally {
        onClose?.();
      }
      return new Response(bytes, { status, headers });
    }
    return new Response(batchBody(items.read(first, last), writer, onClose), { status, headers });
  }
  const columns = fixed?.columns ?? columnsOf(items.schema, []);
  const shape = bodyShape(format, columns, zone);
  if (few) {
    let text: string;
    try {
      text = smallBody(few, shape);
    } finally {
      onClose?.();
    }
    return new Response(text, { status, headers });
  }
  // Rows stored rendered come as their bytes where the items can give them (a local store).
  const parts = items.readParts?.(first, last) ?? items.read(first, last);
  return new Response(resultBody(parts, { ...shape, onClose }), {
    status,
    headers,
  });
}
