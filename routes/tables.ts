/**
 * Stored tables: `GET /tables/<path>` (the rows, in any result format, Range by items) and
 * `GET /tables/<path>/schema` (always JSON). The path is a tree path without the leading `/`
 * (`user/hourly.sxt`); it needs the read right, and a table the caller may not read answers
 * 404 like one that does not exist.
 */

import { Hono } from "hono";
import type { Context } from "hono";
import { readTable, readTableSchema } from "../engine/table/table_reader.ts";
import { PathError, type ResourceTree } from "../engine/home/resource_tree.ts";
import { schemaToJson } from "../engine/types.ts";
import { ApiError, badRequest, notFound } from "./errors.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";
import { negotiateFormat } from "./formats.ts";
import { contentRange, parseRange, resolveRange } from "./range.ts";
import {
  contentTypeOf,
  framingOf,
  headerOf,
  resultBody,
  rowWriter,
  sliceBatches,
} from "./result_body.ts";

const PREFIX = "/tables/";

export function tableRoutes(deps: { readonly tree: ResourceTree }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/tables/*", async (c) => {
    const raw = decodedTail(c);
    if (raw.endsWith(".sxt/schema")) {
      const realPath = await findTable(c, deps.tree, raw.slice(0, -"/schema".length));
      return sendJson(c, schemaToJson(await readTableSchema(realPath)));
    }
    const realPath = await findTable(c, deps.tree, raw);
    const choice = negotiateFormat(new URL(c.req.url).searchParams, c.req.header("Accept"));
    if (!choice.ok) throw new ApiError(choice.status, choice.code, choice.message);
    for (const name of new URL(c.req.url).searchParams.keys()) {
      if (name !== "acceptContentType" && !name.startsWith("opt.")) {
        throw badRequest("BAD_PARAMETER", `unknown query parameter '${name}'`);
      }
    }
    const parsed = parseRange(c.req.header("Range"));
    if (!parsed.ok) throw badRequest("BAD_PARAMETER", parsed.message);
    const format = choice.format;
    const columns = (await readTableSchema(realPath)).map((f) => f.name);
    const headers: Record<string, string> = {
      "Content-Type": contentTypeOf(format.mediaType),
      "Accept-Ranges": "items",
    };
    const abort = new AbortController();
    let rows = readTable(realPath, abort.signal);
    let status: 200 | 206 = 200;
    if (parsed.range) {
      // The total is needed for Content-Range: one counting pass over the table.
      let total = 0;
      for await (const batch of readTable(realPath, abort.signal)) total += batch.length;
      const resolved = resolveRange(parsed.range, total);
      if (!resolved.ok) {
        throw new ApiError(416, "RANGE_NOT_SATISFIABLE", resolved.message, {
          headers: { "Content-Range": `items */${total}` },
        });
      }
      rows = sliceBatches(rows, resolved.first, resolved.last);
      status = 206;
      headers["Content-Range"] = contentRange(resolved.first, resolved.last, total);
    }
    const body = resultBody(rows, {
      framing: framingOf(format.mediaType),
      header: headerOf(format, columns),
      write: rowWriter(format, columns, c.get("user").timeZone ?? "UTC"),
      onClose: () => abort.abort(),
    });
    return new Response(body, { status, headers });
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

/** The host path of a table the caller may read, or 404. */
async function findTable(c: Context<AppEnv>, tree: ResourceTree, path: string): Promise<string> {
  const user = c.get("user");
  if (!path.endsWith(".sxt")) throw notFound(`no such table: /${path} (tables end in .sxt)`);
  const resolved = tree.resolve(user, "/" + path);
  if (!tree.may(user, "read", resolved.canonical)) {
    throw notFound(`no such table: /${path}`);
  }
  try {
    const real = await tree.realPath(resolved, "read");
    if (!(await Deno.stat(real)).isFile) throw notFound(`no such table: /${path}`);
    return real;
  } catch (e) {
    // A link the caller may not follow answers like a missing table: nothing about what
    // exists elsewhere leaks out.
    if (e instanceof Deno.errors.NotFound || e instanceof PathError) {
      throw notFound(`no such table: /${path}`);
    }
    throw e;
  }
}
