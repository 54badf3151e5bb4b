/**
 * The synchronous API: `POST /?scriptPath=...` runs a stored script (arguments from the query
 * string) or the script in the body (scriptPath is then the working directory) and answers
 * once the query has finished, so the status line tells the truth: 200/206 with the rows, or
 * an error. The query goes through the supervisor like any other (limits apply); once its body
 * has been sent its result is freed but its status is kept for the retention period
 * (`Trawl-Query-Id` names it, so its warnings can be read); a client that goes away cancels it.
 */

import { type Context, Hono } from "hono";
import type { LiveHandle } from "../actors/query_directory.ts";
import type { LiveItems } from "../actors/query_handle.ts";
import { ApiError, badRequest } from "./errors.ts";
import type { AppEnv } from "./env.ts";
import { parseRange } from "./range.ts";
import { type QueryDeps, submitQuery } from "./query_request.ts";
import { itemsResponse, liveResponse, resultItems } from "./queries.ts";
import { CONTRACTS, validated } from "./contract.ts";

export function syncRoutes(deps: QueryDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post("/", validated(CONTRACTS.sync), async (c) => {
    // A malformed Range is refused before anything runs.
    const range = parseRange(c.req.header("Range"));
    if (!range.ok) throw badRequest("BAD_PARAMETER", range.message);
    const { handle } = await submitQuery(c, deps, { alwaysFix: true });
    return await answerWhenFinished(c, deps, handle);
  });
  return app;
}

/**
 * Items a synchronous query stores before its answer starts while it runs: a smaller result
 * is answered whole once the query has finished (its status line telling how it ended).
 */
export const STREAM_AFTER_ITEMS = 1024;

/**
 * Waits for a submitted query and answers with its result (200/206) or its error, both with
 * `Trawl-Query-Id` and `Trawl-Warnings: <count>`; once its body has been sent, its status
 * (warnings included) is kept for the retention period, its actor and result are not
 * (actors/answered_queries.ts). It is
 * cancelled, and freed, if the client goes away first. With `opt.failOnWarning=true` a query
 * that gave a WARN or ERROR warning is FAILED (its error, code WARNING, names them: the query
 * machine decides, so its status says the same), answered 409 QUERY_FAILED with `warnings`.
 */
export async function answerWhenFinished(
  c: Context<AppEnv>,
  deps: QueryDeps,
  handle: LiveHandle,
): Promise<Response> {
  const signal = c.req.raw.signal;
  const ended = handle.finishedUnless(signal);
  // A large result streams while the query runs (no Range: its total is not known yet).
  const live = c.req.header("Range") === undefined
    ? await handle.following(STREAM_AFTER_ITEMS, { ended, queued: true, once: true })
    : undefined;
  if (live && !signal.aborted) return streamedAnswer(deps, handle, live);
  await ended;
  if (signal.aborted) {
    // Nobody is left to read its id: the cancelled query is freed at once.
    handle.drop();
    // No one hears this answer; 499 is what logs call a request the client closed.
    return new Response(null, { status: 499 });
  }
  // Once answered, only the status is kept (its warnings, for the retention period).
  const answered = () => handle.answered();
  const { warnings, error } = handle.outcome();
  const headers = { "Trawl-Query-Id": handle.queryId, "Trawl-Warnings": String(warnings.length) };
  let response: Response;
  try {
    response = itemsResponse(c, deps, resultItems(handle), answered);
  } catch (e) {
    answered();
    if (e instanceof ApiError) {
      // Failed on its warnings: the body names them beside the error.
      const named = error?.code === "WARNING"
        ? { warnings: warnings.filter((w) => w.level === "WARN" || w.level === "ERROR") }
        : {};
      throw new ApiError(e.status, e.code, e.message, {
        extra: { ...e.extra, ...named },
        headers: { ...e.headers, ...headers },
      });
    }
    throw e;
  }
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

/**
 * The answer of a query still running (`200`, its rows sent as they are stored): its warnings
 * count those given so far. A failure later breaks the body (docs/api.md). Once the body has
 * been sent the query is answered (only its status kept); a client that leaves first cancels it
 * and it is freed.
 */
function streamedAnswer(
  deps: QueryDeps,
  handle: LiveHandle,
  live: LiveItems,
): Response {
  const settle = () => {
    if (handle.finished()) return handle.answered();
    void handle.stop().then(() => handle.whenFinished()).then(() => handle.drop());
  };
  const response = liveResponse(deps, live, settle);
  response.headers.set("Trawl-Query-Id", handle.queryId);
  response.headers.set("Trawl-Warnings", String(handle.outcome().warnings.length));
  return response;
}
