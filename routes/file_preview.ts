/**
 * `GET /preview/<path>?lines=N`: the first lines of a file of the resource tree, for the console's
 * file view (docs/console.md): `{path, size, modified, lines: [...], complete}`, read from the
 * start of the file and never more than PREVIEW_BYTES of it, however large the file is (a 50 MB
 * log answers as fast as a small one). `complete` is true when the whole file was read.
 *
 * Rights as `GET /resources/<path>`: the read right on the file; a file the caller may not see
 * answers 404 whether it exists or not; datastore definitions are refused by name.
 */

import { Hono } from "hono";
import { definitionRefusal, isDatastoreDefinition, type ResourceTree } from "../engine/mod.ts";
import { badRequest, forbidden, notFound } from "./errors.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";
import { CONTRACTS, validated } from "./contract.ts";

/** The most of a file a preview reads. */
export const PREVIEW_BYTES = 64 * 1024;
export const MAX_PREVIEW_LINES = 200;

export interface FilePreview {
  readonly path: string;
  readonly size: number;
  /** ISO 8601, UTC. */
  readonly modified: string;
  readonly lines: readonly string[];
  readonly complete: boolean;
}

export function filePreviewRoutes(tree: ResourceTree): Hono<AppEnv> {
  return new Hono<AppEnv>().get("/preview/*", validated(CONTRACTS.preview), async (c) => {
    const user = c.get("user");
    const url = new URL(c.req.url);
    let path: string;
    try {
      path = decodeURIComponent(url.pathname.slice(url.pathname.indexOf("/preview/") + 8));
    } catch {
      throw badRequest("BAD_PARAMETER", "the path is not valid percent-encoding");
    }
    const count = Number(url.searchParams.get("lines") ?? "20");
    const resolved = tree.resolve(user, path);
    if (isDatastoreDefinition(resolved.canonical)) {
      throw forbidden(definitionRefusal(resolved.canonical, "/resources"));
    }
    const missing = () => notFound(`no such resource: ${resolved.canonical}`);
    const mayList = tree.may(user, "list", resolved.canonical);
    if (!tree.may(user, "read", resolved.canonical)) {
      if (mayList) throw forbidden(`you need the read right on ${resolved.canonical}`);
      throw missing();
    }
    let real: string;
    try {
      real = await tree.realPath(resolved, "read");
    } catch {
      throw missing();
    }
    const info = await tree.stat(real);
    if (!info) throw missing();
    if (info.isFolder) throw notFound(`${resolved.canonical} is a folder`);
    const abort = new AbortController();
    const bytes = new Uint8Array(Math.min(PREVIEW_BYTES, info.size));
    let filled = 0;
    const stream = await tree.open(real, abort.signal);
    const reader = stream.getReader();
    try {
      while (filled < bytes.length) {
        const { value, done } = await reader.read();
        if (done) break;
        const take = Math.min(value.length, bytes.length - filled);
        bytes.set(value.subarray(0, take), filled);
        filled += take;
      }
    } finally {
      abort.abort();
      await reader.cancel().catch(() => {});
    }
    const complete = filled >= info.size;
    const text = new TextDecoder().decode(bytes.subarray(0, filled));
    const all = text.split(/\r?\n/);
    // A line cut at the end of what was read is left out, unless it is the only one.
    if (!complete && all.length > 1) all.pop();
    if (complete && all.at(-1) === "") all.pop();
    const answer: FilePreview = {
      path: resolved.canonical,
      size: info.size,
      modified: new Date(info.modified).toISOString(),
      lines: all.slice(0, count),
      complete: complete && all.length <= count,
    };
    return sendJson(c, answer);
  });
}
