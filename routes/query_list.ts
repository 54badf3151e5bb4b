/**
 * `GET /queries`: the caller's retained queries, newest first (admins: everyone's, `?user=` to
 * filter), each `{queryId, user, state, progress, submitted, scriptPath, excerpt}`; with a
 * shared KV, those of every server. The query directory (actors/query_directory.ts) knows them.
 */

import { Hono } from "hono";
import type { QueryDirectory } from "../actors/query_directory.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";

export type { QueryListItem } from "../actors/query_directory.ts";

export function queryListRoutes(directory: QueryDirectory): Hono<AppEnv> {
  return new Hono<AppEnv>().get("/queries", async (c) => {
    const user = c.get("user");
    const only = user.admin ? c.req.query("user") : undefined;
    return sendJson(c, await directory.list(user, only));
  });
}
