/**
 * Stored tables: `GET /tables/<path>` (the rows, in any result format, Range by items) and
 * `GET /tables/<path>/schema` (always JSON). The path is a tree path without the leading `/`
 * (`user/hourly.sxt`). As the specification says, reading a table is the same as running the
 * script command that reads it: the route submits the table's path (as data, so any name works)
 * to the actors like a synchronous query of `@[/path]` (rights, limits, formats and paging
 * included); the schema is planned, not run. A table
 * the caller may not see answers 404 like one that does not exist.
 */

import { Hono } from "hono";
import type { Context } from "hono";
import { describeQuery } from "../actors/submission.ts";
import { type Diagnostic, type ResourceTree, schemaToJson } from "../engine/mod.ts";
import { ApiError, badRequest, diagnosticsError, forbidden, notFound } from "./errors.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";
import { negotiateFormat } from "./formats.ts";
import { parseRange } from "./range.ts";
import { queryContext, type QueryDeps, submitSource } from "./query_request.ts";
import { answerWhenFinished } from "./sync.ts";
import { CONTRACTS, validated } from "./contract.ts";

const PREFIX = "/tables/";

export function tableRoutes(deps: QueryDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/tables/*", validated(CONTRACTS.tables), async (c) => {
    const raw = decodedTail(c);
    const schemaOnly = raw.endsWith(".sxt/schema");
    const path = schemaOnly ? raw.slice(0, -"/schema".length) : raw;
    const canonical = tablePath(c, deps.tree, path);
    const context = queryContext(deps, c.get("user"), "/", {});
    const source = { table: canonical };
    if (schemaOnly) {
      const described = await describeQuery(source, context);
      if (!described.ok) throw tableError(path, described.diagnostics);
      return sendJson(c, schemaToJson(described.schema));
    }
    const params = new URL(c.req.url).searchParams;
    const choice = negotiateFormat(params, c.req.header("Accept"));
    if (!choice.ok) throw new ApiError(choice.status, choice.code, choice.message);
    for (const name of params.keys()) {
      if (name !== "acceptContentType" && !name.startsWith("opt.")) {
        throw badRequest("BAD_PARAMETER", `unknown query parameter '${name}'`);
      }
    }
    // A malformed Range is refused before anything runs.
    const range = parseRange(c.req.header("Range"));
    if (!range.ok) throw badRequest("BAD_PARAMETER", range.message);
    let submitted;
    try {
      submitted = await submitSource(deps, { source, context, choice, alwaysFix: true });
    } catch (e) {
      const diagnostics = (e as ApiError).extra?.diagnostics as Diagnostic[] | undefined;
      if (e instanceof ApiError && diagnostics) throw tableError(path, diagnostics);
      throw e;
    }
    return await answerWhenFinished(c, deps, submitted.handle);
  });
  return app;
}

function decodedTail(c: Context<AppEnv>): string {
  const path = new URL(c.req.url).pathname;
  const at = path.indexOf(PREFIX);
  try {
    return decodeURIComponent(path.slice(at + PREFIX.length));
  } catch {
    throw badRequest("BAD_PARAMETER", "the table path is not valid percent-encoding");
  }
}

/** The canonical path of the table a request names (resolution refuses hostile paths). */
function tablePath(c: Context<AppEnv>, tree: ResourceTree, path: string): string {
  if (!path.endsWith(".sxt")) throw notFound(`no such table: /${path} (tables end in .sxt)`);
  return tree.resolve(c.get("user"), "/" + path).canonical;
}

/** A table that cannot be read: 404 when it is not there for the caller, else the diagnostics. */
function tableError(path: string, diagnostics: readonly Diagnostic[]): ApiError {
  const [first] = diagnostics;
  if (first?.code === "NOT_FOUND") return notFound(`no such table: /${path}`);
  if (first?.code === "FORBIDDEN") return forbidden(`you may not read the table /${path}`);
  return diagnosticsError(diagnostics);
}
