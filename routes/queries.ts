/**
 * The asynchronous API (specification, "Asynchronous API"; API.md, "Queries"):
 *
 *   POST   /queries?scriptPath=...        201, Location: /API/v1.0/queries/<id>, {"queryId"}
 *   GET    /queries/<id>                  status; Location of the result once finished
 *   DELETE /queries/<id>                  200 + status (cancels) or 204 (frees a finished one)
 *   GET    /queries/<id>/result           rows in the chosen format, Range by items
 *   GET    /queries/<id>/result/schema    always JSON
 *
 * Handlers find the query in the query directory (actors/query_directory.ts), wherever it is
 * (this server, or another sharing the KV), and use its handle.
 */

import { Hono } from "hono";
import type { Context } from "hono";
import { type Diagnostic, formatDiagnostic, schemaToJson } from "../engine/mod.ts";
import type { QueryState } from "../actors/query_machine.ts";
import type { LiveItems, QueryHandle, ResultItems } from "../actors/query_handle.ts";
import { columnsOf } from "../actors/engine_work.ts";
import type { Logger } from "../home/log.ts";
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
import { CONTRACTS, validated } from "./contract.ts";

export const QUERIES_PATH = "/API/v1.0/queries";

/** Results of at most this many items, all in memory, are answered as one string, unstreamed. */
const SMALL_BODY_ITEMS = 256;

export function queryRoutes(
  deps: QueryDeps,
  /** Where an admin's cancel or free of another user's query is told. */
  log?: Pick<Logger, "info">,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.post("/queries", validated(CONTRACTS.submit), async (c) => {
    const waitMillis = waitMillisOf(new URL(c.req.url).searchParams);
    const idempotencyKey = idempotencyKeyOf(c);
    const { queryId, handle } = await submitQuery(c, deps, {
      alwaysFix: false,
      waitMillis: true,
      idempotencyKey,
      shareResult: true,
      listed: true,
    });
    if (waitMillis !== undefined && await handle.settled(waitMillis, c.req.raw.signal)) {
      return sendJson(c, handle.status(), 200, {
        Location: `${QUERIES_PATH}/${queryId}/result`,
      });
    }
    return sendJson(c, { queryId }, 201, { Location: `${QUERIES_PATH}/${queryId}` });
  });

  app.get("/queries/:id", async (c) => {
    const handle = await findHandle(c, deps);
    // A finished query's result is there (not for one answered synchronously: not kept).
    const headers: Record<string, string> = handle.finished() && handle.kept
      ? { Location: `${QUERIES_PATH}/${handle.queryId}/result` }
      : {};
    return sendJson(c, handle.status(), 200, headers);
  });

  app.delete("/queries/:id", async (c) => {
    const user = c.get("user");
    const handle = await findHandle(c, deps);
    const { stopped, status } = await handle.stop();
    if (handle.owner !== user.name) {
      log?.info(
        `admin '${user.name}' ${stopped} query ${handle.queryId} of user '${handle.owner}'`,
      );
    }
    if (stopped === "freed") return c.body(null, 204);
    return sendJson(c, status);
  });

  app.get("/queries/:id/result", validated(CONTRACTS.result), async (c) => {
    const handle = await findHandle(c, deps);
    // A running query's rows stream as they are stored (no Range: its total is not known yet).
    if (c.req.header("Range") === undefined && handle.following && !handle.finished()) {
      const live = await handle.following(1);
      if (live) return liveResponse(deps, live, () => handle.touch());
    }
    // A page of a running query: the rows so far, at once (docs/api.md, "Rows while it runs").
    if (c.req.header("Range") !== undefined && handle.partial && !handle.finished()) {
      const partial = handle.partial();
      if (partial) return itemsResponse(c, deps, partial, () => handle.touch(), partial.state);
    }
    // The retention counts from the end of the last request naming the query: a long read's
    // end, not its start (while it reads, the supervisor keeps the result).
    return itemsResponse(c, deps, resultItems(handle), () => handle.touch());
  });

  app.get("/queries/:id/result/schema", async (c) => {
    const handle = await findHandle(c, deps);
    return sendJson(c, schemaToJson(resultItems(handle).schema));
  });

  return app;
}

/**
 * The caller's query named in the path, wherever it is (the query directory); 404 for an id
 * that is not theirs or not known, 410 for one that expired or was freed.
 */
export async function findHandle(c: Context<AppEnv>, deps: QueryDeps): Promise<QueryHandle> {
  const queryId = c.req.param("id") ?? "";
  if (!QUERY_ID.test(queryId)) throw notFound(`no such query: '${queryId}'`);
  const found = await deps.directory.find(c.get("user"), queryId);
  switch (found.kind) {
    case "live":
    case "answered":
    case "remote":
      return found.handle;
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

/** 410 for a query answered synchronously: only its status is kept. */
export function requireKept(handle: QueryHandle): void {
  if (handle.kept) return;
  throw new ApiError(
    410,
    "QUERY_EXPIRED",
    `query ${handle.queryId} was answered synchronously: its result is not kept, only its status`,
  );
}

/**
 * The result of a query that has SUCCEEDED; else 409 (QUERY_NOT_FINISHED, QUERY_FAILED or
 * QUERY_CANCELLED), or 410 when it was not kept.
 */
export function resultItems(handle: QueryHandle): ResultItems {
  const result = handle.result();
  if (result.ok) return result.items;
  const { queryId } = handle;
  switch (result.why) {
    case "not-kept":
      requireKept(handle);
      throw new Error(`query ${queryId} has no result but is kept`);
    case "not-stored":
      throw new ApiError(
        410,
        "QUERY_EXPIRED",
        `the result of query ${queryId} could not be stored for the other servers; the server that ran it has it`,
      );
    case "state":
      throw stateError(queryId, result.state, result.error);
  }
}

/** Why a query in `state` has no result (409). */
function stateError(queryId: string, state: QueryState, error: Diagnostic | undefined): ApiError {
  switch (state) {
    case "FAILED":
      return new ApiError(
        409,
        "QUERY_FAILED",
        `query ${queryId} failed: ${error ? formatDiagnostic(error) : "unknown error"}`,
        { extra: { state, error } },
      );
    case "CANCELLED":
      return new ApiError(409, "QUERY_CANCELLED", `query ${queryId} was cancelled`, {
        extra: { state },
      });
    default:
      return new ApiError(
        409,
        "QUERY_NOT_FINISHED",
        `query ${queryId} is ${state}; its result is there once it has SUCCEEDED`,
        { extra: { state } },
      );
  }
}

/**
 * The whole result of a running query (`LiveItems`), `200` in its format fixed at POST, its
 * bytes sent as they are stored; the body breaks if the query does not succeed. The bytes are
 * those `itemsResponse` gives once it has SUCCEEDED.
 */
export function liveResponse(
  deps: QueryDeps,
  live: LiveItems,
  onClose?: () => void,
): Response {
  const fixed = live.fixed as FixedFormat;
  const headers: Record<string, string> = {
    "Content-Type": formatSpec(fixed.format.mediaType).contentType,
    "Accept-Ranges": "items",
  };
  const shape = bodyShape(fixed.format, fixed.columns ?? [], queryZone(live.owner, deps.settings));
  return new Response(resultBody(live.follow(), { ...shape, onClose, live: true }), {
    status: 200,
    headers,
  });
}

/**
 * The response of `items` for the request's format and Range (see resultResponse). `running`:
 * the items are a RUNNING query's rows so far (PartialItems): the answer says so in
 * `Trawl-Query-State` and `Trawl-Rows-So-Far`, its `Content-Range` total is `*` (not known
 * yet), and a range past the rows so far is an empty `200`, not a `416` (more may come).
 */
export function itemsResponse(
  c: Context<AppEnv>,
  deps: QueryDeps,
  items: ResultItems,
  onClose?: () => void,
  running?: QueryState,
): Response {
  const fixed = items.fixed as FixedFormat | undefined;
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
  if (running) {
    headers["Trawl-Query-State"] = running;
    headers["Trawl-Rows-So-Far"] = String(total);
  }
  if (parsed.range && running && parsed.range.first >= total) {
    // Nothing of this page yet: no rows (the format's empty answer), to be asked again.
    first = 0;
    last = -1;
  } else if (parsed.range) {
    const resolved = resolveRange(parsed.range, total);
    if (!resolved.ok) {
      throw new ApiError(416, "RANGE_NOT_SATISFIABLE", resolved.message, {
        headers: { "Content-Range": `items */${total}` },
      });
    }
    ({ first, last } = resolved);
    status = 206;
    headers["Content-Range"] = running
      ? `items ${first}-${last}/*`
      : contentRange(first, last, total);
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
