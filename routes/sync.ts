/**
 * The synchronous API: `POST /?scriptPath=...` runs a stored script (arguments from the query
 * string) or the script in the body (scriptPath is then the working directory) and answers
 * once the query has finished, so the status line tells the truth: 200/206 with the rows, or
 * an error. The query goes through the supervisor like any other (limits apply) and is freed
 * once its body has been sent; a client that goes away cancels it.
 */

import { type Context, Hono } from "hono";
import { waitFor } from "xstate";
import { isFinished, topState } from "../actors/query_machine.ts";
import type { QueryRef } from "../actors/supervisor.ts";
import { badRequest } from "./errors.ts";
import type { AppEnv } from "./env.ts";
import { parseRange } from "./range.ts";
import { type QueryDeps, submitQuery } from "./query_request.ts";
import { requireSucceeded, resultResponse } from "./queries.ts";

export function syncRoutes(deps: QueryDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post("/", async (c) => {
    // A malformed Range is refused before anything runs.
    const range = parseRange(c.req.header("Range"));
    if (!range.ok) throw badRequest("BAD_PARAMETER", range.message);
    const { queryId, ref } = await submitQuery(c, deps, { alwaysFix: true });
    return await answerWhenFinished(c, deps, queryId, ref);
  });
  return app;
}

/**
 * Waits for a submitted query and answers with its result (200/206) or its error; the query is
 * freed once its body has been sent, and cancelled if the client goes away first.
 */
export async function answerWhenFinished(
  c: Context<AppEnv>,
  deps: QueryDeps,
  queryId: string,
  ref: QueryRef,
): Promise<Response> {
  const free = () => deps.supervisor.send({ type: "FREE", queryId });
  const gone = () => deps.supervisor.send({ type: "CANCEL", queryId });
  const signal = c.req.raw.signal;
  signal.addEventListener("abort", gone, { once: true });
  try {
    await waitFor(ref, (s) => isFinished(topState(s.value)), { timeout: Infinity });
  } finally {
    signal.removeEventListener("abort", gone);
  }
  try {
    requireSucceeded(ref);
    return resultResponse(c, deps, ref, free);
  } catch (e) {
    free();
    throw e;
  }
}
