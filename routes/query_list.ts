/**
 * `GET /queries`: the caller's retained queries, newest first (admins: everyone's, `?user=` to
 * filter), each `{queryId, user, state, progress, submitted, scriptPath, excerpt}`.
 *
 * The supervisor knows the queries and their states; what was submitted (the script's path and
 * first line) is noted here when `POST /queries` accepts one, and forgotten once the supervisor
 * no longer holds the query.
 */

import { Hono } from "hono";
import type { ScriptSource } from "../engine/contracts/script_source.ts";
import type { SupervisorRef } from "../actors/supervisor.ts";
import type { SharedQueries } from "../actors/shared_queries.ts";
import { topState } from "../actors/query_machine.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";

/** How much of a script's text the list shows. */
const EXCERPT_CHARS = 120;

interface Note {
  readonly submitted: number;
  readonly scriptPath: string;
  readonly excerpt: string;
}

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

/** What was submitted, per query id, for as long as the supervisor holds the query. */
export class QueryNotes {
  readonly #notes = new Map<string, Note>();

  constructor(private readonly supervisor: SupervisorRef, private readonly now = Date.now) {}

  note(queryId: string, source: ScriptSource, scriptPath: string): void {
    const excerpt = "text" in source
      ? source.text.trim().split("\n", 1)[0]!.slice(0, EXCERPT_CHARS)
      : "path" in source
      ? source.path
      : source.table;
    this.#notes.set(queryId, { submitted: this.now(), scriptPath, excerpt });
    // Forgets freed queries now and then, so the notes stay as many as the queries held.
    const held = this.supervisor.getSnapshot().context.queries;
    if (this.#notes.size > 2 * held.size + 64) this.#forgetFreed();
  }

  /** The retained queries `user` may see (all for `admin`, or those of `only`), newest first. */
  list(
    user: string,
    options: { readonly admin: boolean; readonly only?: string | undefined },
  ): QueryListItem[] {
    this.#forgetFreed();
    const items: QueryListItem[] = [];
    for (const [queryId, entry] of this.supervisor.getSnapshot().context.queries) {
      if (options.admin ? options.only && entry.owner !== options.only : entry.owner !== user) {
        continue;
      }
      const { context, value } = entry.ref.getSnapshot();
      const note = this.#notes.get(queryId);
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
    return items.sort((a, b) => b.submitted.localeCompare(a.submitted));
  }

  #forgetFreed(): void {
    const held = this.supervisor.getSnapshot().context.queries;
    for (const id of this.#notes.keys()) if (!held.has(id)) this.#notes.delete(id);
  }
}

export function queryListRoutes(notes: QueryNotes, shared?: SharedQueries): Hono<AppEnv> {
  return new Hono<AppEnv>().get("/queries", async (c) => {
    const user = c.get("user");
    const only = user.admin ? c.req.query("user") : undefined;
    const items = notes.list(user.name, { admin: user.admin, only });
    if (!shared) return sendJson(c, items);
    // Servers sharing a KV: the other servers' queries too, from their records.
    const known = new Set(items.map((item) => item.queryId));
    const visible = (owner: string) =>
      user.admin ? only === undefined || owner === only : owner === user.name;
    for (const record of await shared.list(visible)) {
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
    return sendJson(c, items.sort((a, b) => b.submitted.localeCompare(a.submitted)));
  });
}
