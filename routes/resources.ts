/**
 * The resource tree over HTTP (docs/api.md, "Resources"):
 *
 *   GET    /resources/<path>                a folder's listing, or a file's bytes with an ETag
 *   PUT    /resources/<path>                create or replace a file (a trailing / makes a folder)
 *   DELETE /resources/<path>[?recursive=true]
 *   POST   /resources/<path>?moveTo=<path>  move or rename
 *   GET    /scripts/<path>                  a stored script (SpectX clients)
 *
 * Every path is resolved by the tree (hostile paths refused) and checked where it really leads.
 * Something the caller may not see answers 404, as if absent. Datastore definitions are listed
 * but read and written only through /datastores (they hold secrets).
 */

import { Hono } from "hono";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import {
  DATASTORES_FOLDER,
  definitionRefusal,
  isDatastoreDefinition,
  isWithin,
  type Preconditions,
  type ResolvedPath,
  ResourceConflict,
  type ResourceTree,
  type Right,
  TimeSlicer,
  type User,
} from "../engine/mod.ts";
import { kindOf, type ResourceInfo } from "../home/resource_files.ts";
import { RIGHTS } from "../home/rights.ts";
import { ApiError, badRequest, forbidden, notFound } from "./errors.ts";
import type { AppEnv } from "./env.ts";
import { JSON_CONTENT_TYPE } from "./json.ts";
import { CONTRACTS, validated } from "./contract.ts";

export interface ResourceDeps {
  readonly tree: ResourceTree;
  /** Largest file a PUT may send (`resource.maxBytes`). */
  readonly maxBytes: number;
  /**
   * May `user` read the datastore `name` (its acl)? A listing of /system/datastores shows only
   * those, as `GET /datastores` does: a store one may not use is as one that does not exist.
   * Without it, only admins see the definitions listed.
   */
  readonly mayReadStore?: ((user: User, name: string) => Promise<boolean>) | undefined;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  script: "text/vnd.engine.script; charset=UTF-8",
  pattern: "text/plain; charset=UTF-8",
  table: "application/octet-stream",
  file: "application/octet-stream",
};

/**
 * The tree's own folders: the root, `/users`, `/shared`, `/system` and each user's home. Deleting
 * or moving one (`DELETE /resources/?recursive=true` took every user's data, and a user without a
 * home can run no query, `/user` being the default folder) is refused, whoever asks: delete what
 * is inside instead.
 */
function refuseStructural(resolved: { canonical: string }, what: "deleted" | "moved"): void {
  const path = resolved.canonical;
  if (["/", "/users", "/shared", "/system"].includes(path) || /^\/users\/[^/]+$/.test(path)) {
    throw forbidden(
      `${path} is ${
        path.startsWith("/users/") ? "a user's home folder" : "one of the tree's own folders"
      } and cannot be ${what}; ${what === "deleted" ? "delete" : "move"} what is inside instead`,
    );
  }
}

export function resourceRoutes(deps: ResourceDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { tree } = deps;

  app.get("/scripts/*", async (c) => {
    const path = pathAfter(c, "/scripts/");
    if (!path.endsWith(".sx")) throw notFound(`no such script: /${path} (scripts end in .sx)`);
    return await sendFile(c, tree, resolve(c, tree, path));
  });

  app.get("/resources/*", async (c) => {
    const resolved = resolve(c, tree, pathAfter(c, "/resources/"));
    const user = c.get("user");
    // Refused by name, before anything is looked up: the answer says nothing of what is there.
    refuseDatastore(resolved);
    const info = await visible(tree, user, resolved);
    if (info.kind !== "folder") return await sendFile(c, tree, resolved);
    if (!WAYPOINTS.has(resolved.canonical)) await requireRight(tree, user, resolved, "list");
    const real = WAYPOINTS.has(resolved.canonical)
      ? resolved.real
      : await tree.realPath(resolved, "list");
    const mayListStore = async (file: string) =>
      user.admin ||
      (file.endsWith(".json") && deps.mayReadStore !== undefined &&
        await deps.mayReadStore(user, file.slice(0, -".json".length)));
    // A folder of 100 000 files is seconds of rights checks: other requests get their turns,
    // and each entry is written as JSON as it comes (JSON.stringify of the whole array would
    // be one more long step).
    const entries: string[] = [];
    const slicer = new TimeSlicer(new AbortController().signal);
    let seen = 0;
    try {
      for (const entry of await tree.list(real)) {
        if ((++seen & 255) === 0) await slicer.check();
        const canonical = childPath(resolved.canonical, entry.name);
        if (!mayList(tree, user, canonical)) continue;
        if (resolved.canonical === DATASTORES_FOLDER && !(await mayListStore(entry.name))) continue;
        entries.push(JSON.stringify({
          name: entry.name,
          kind: kindOf(canonical, entry.isFolder),
          size: entry.size,
          modified: new Date(entry.modified).toISOString(),
          rights: RIGHTS.filter((r) => tree.may(user, r, canonical)),
        }));
      }
    } finally {
      slicer.stop();
    }
    return c.body(`[${entries.join(",")}]`, 200, { "Content-Type": JSON_CONTENT_TYPE });
  });

  app.put(
    "/resources/*",
    bodyLimit({
      maxSize: deps.maxBytes,
      onError: () => {
        throw new ApiError(
          413,
          "PAYLOAD_TOO_LARGE",
          `the body is larger than ${deps.maxBytes} bytes (resource.maxBytes)`,
        );
      },
    }),
    async (c) => {
      const raw = pathAfter(c, "/resources/");
      const user = c.get("user");
      const resolved = resolve(c, tree, raw);
      refuseDatastore(resolved);
      const parent = parentOf(tree, user, resolved);
      if (raw.endsWith("/")) {
        if (!mayList(tree, user, resolved.canonical)) throw noSuchResource(resolved);
        await requireParent(tree, user, parent);
        await tree.mkdir(resolved.real).catch(conflict);
        return c.body(null, 201, { Location: `/API/v1.0/resources${resolved.canonical}/` });
      }
      const existing = await statResource(tree, resolved.real, resolved.canonical);
      if (!mayList(tree, user, resolved.canonical)) {
        // What the caller may not see answers as a read does, whether it is there or not;
        // only a right given on the file itself (write) lets a replacement through.
        if (
          !existing || existing.kind === "folder" || !tree.may(user, "write", resolved.canonical)
        ) {
          throw noSuchResource(resolved);
        }
      }
      if (existing?.kind === "folder") {
        throw conflictError("a folder of that name exists; PUT a file elsewhere");
      }
      if (existing) await requireRight(tree, user, resolved, "write");
      else await requireParent(tree, user, parent);
      const bytes = new Uint8Array(await c.req.arrayBuffer());
      const real = existing ? await tree.realPath(resolved, "write") : resolved.real;
      const written = await tree.write(real, bytes, preconditions(c)).catch(conflict);
      return c.body(null, written.created ? 201 : 200, { ETag: written.etag });
    },
  );

  app.delete("/resources/*", validated(CONTRACTS.deleteResource), async (c) => {
    const resolved = resolve(c, tree, pathAfter(c, "/resources/"));
    const user = c.get("user");
    refuseDatastore(resolved);
    await visible(tree, user, resolved);
    refuseStructural(resolved, "deleted");
    await requireRight(tree, user, resolved, "write");
    const recursive = c.req.query("recursive") === "true";
    await tree.remove(resolved.real, { recursive, preconditions: preconditions(c) })
      .catch(conflict);
    return c.body(null, 204);
  });

  app.post("/resources/*", validated(CONTRACTS.moveResource), async (c) => {
    const moveTo = c.req.query("moveTo");
    if (moveTo === undefined) throw badRequest("BAD_PARAMETER", "expected ?moveTo=<path>");
    const user = c.get("user");
    const from = resolve(c, tree, pathAfter(c, "/resources/"));
    const to = resolve(c, tree, moveTo.replace(/^\//, ""));
    refuseDatastore(from);
    refuseDatastore(to);
    await visible(tree, user, from);
    refuseStructural(from, "moved");
    await requireRight(tree, user, from, "write");
    // A destination the caller may not see answers as a read of it, whether it is there or not.
    if (!mayList(tree, user, to.canonical)) throw noSuchResource(to);
    await requireParent(tree, user, parentOf(tree, user, to));
    if (to.canonical !== from.canonical && isWithin(to.canonical, from.canonical)) {
      throw badRequest("BAD_PARAMETER", "a folder cannot be moved into itself");
    }
    await tree.move(from.real, to.real).catch(conflict);
    return c.body(null, 201, { Location: `/API/v1.0/resources${to.canonical}` });
  });

  return app;
}

/** The decoded path after `prefix` in the request's path. */
function pathAfter(c: Context<AppEnv>, prefix: string): string {
  const path = new URL(c.req.url).pathname;
  const tail = path.slice(path.indexOf(prefix) + prefix.length);
  try {
    return decodeURIComponent(tail);
  } catch {
    throw badRequest("BAD_PARAMETER", "the path is not valid percent-encoding");
  }
}

function resolve(c: Context<AppEnv>, tree: ResourceTree, path: string): ResolvedPath {
  return tree.resolve(c.get("user"), "/" + path);
}

function childPath(folder: string, name: string): string {
  return folder === "/" ? `/${name}` : `${folder}/${name}`;
}

/** Folders everyone may open to find their way: `/users` shows only what each may list. */
const WAYPOINTS = new Set(["/", "/users"]);

function mayList(tree: ResourceTree, user: User, canonical: string): boolean {
  return WAYPOINTS.has(canonical) || tree.may(user, "list", canonical) ||
    tree.may(user, "read", canonical);
}

/** The answer for what the caller may not see, whether it exists or not (reads and writes). */
function noSuchResource(resolved: ResolvedPath): ApiError {
  return notFound(`no such resource: ${resolved.canonical}`);
}

/** What is there, if the caller may see it; else 404 whether it exists or not. */
async function visible(tree: ResourceTree, user: User, resolved: ResolvedPath) {
  const missing = () => noSuchResource(resolved);
  if (!mayList(tree, user, resolved.canonical)) throw missing();
  let real: string;
  try {
    // Where a link really leads, with the reading rights it must give there too.
    real = await tree.realPath(resolved);
  } catch {
    throw missing();
  }
  const info = await statResource(tree, real, resolved.canonical);
  if (!info) throw missing();
  return info;
}

async function requireRight(
  tree: ResourceTree,
  user: User,
  resolved: ResolvedPath,
  right: Right,
): Promise<void> {
  if (!tree.may(user, right, resolved.canonical)) {
    throw forbidden(`you need the ${right} right on ${resolved.canonical}`);
  }
  await tree.realPath(resolved, right);
}

function parentOf(tree: ResourceTree, user: User, resolved: ResolvedPath): ResolvedPath {
  const at = resolved.canonical.lastIndexOf("/");
  return tree.resolve(user, at <= 0 ? "/" : resolved.canonical.slice(0, at));
}

/** Creating in a folder needs `create` there, where the folder really is. */
async function requireParent(tree: ResourceTree, user: User, parent: ResolvedPath) {
  // A folder the caller may not see answers as a read of it does: nothing says it is there.
  if (!mayList(tree, user, parent.canonical)) throw noSuchResource(parent);
  const info = await statResource(tree, parent.real, parent.canonical);
  if (!info || info.kind !== "folder") throw notFound(`no such folder: ${parent.canonical}`);
  await requireRight(tree, user, parent, "create");
}

function refuseDatastore(resolved: ResolvedPath): void {
  if (isDatastoreDefinition(resolved.canonical)) {
    throw forbidden(definitionRefusal(resolved.canonical, "/resources"));
  }
}

async function sendFile(c: Context<AppEnv>, tree: ResourceTree, resolved: ResolvedPath) {
  const user = c.get("user");
  refuseDatastore(resolved);
  const info = await visible(tree, user, resolved);
  if (info.kind === "folder") throw notFound(`${resolved.canonical} is a folder`);
  if (!tree.may(user, "read", resolved.canonical)) {
    throw forbidden(`you need the read right on ${resolved.canonical}`);
  }
  const { bytes, etag } = await tree.read(await tree.realPath(resolved, "read"));
  if (c.req.header("If-None-Match") === etag) return c.body(null, 304, { ETag: etag });
  return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
    ETag: etag,
    "Content-Type": CONTENT_TYPES[info.kind] ?? CONTENT_TYPES.file!,
    "Last-Modified": new Date(info.modified).toUTCString(),
  });
}

/** What is at a location, with its kind by name; null when nothing is. */
async function statResource(
  tree: ResourceTree,
  real: string,
  canonical: string,
): Promise<ResourceInfo | null> {
  const info = await tree.stat(real);
  return info &&
    { kind: kindOf(canonical, info.isFolder), size: info.size, modified: info.modified };
}

function preconditions(c: Context<AppEnv>): Preconditions {
  const ifNoneMatch = c.req.header("If-None-Match");
  if (ifNoneMatch !== undefined && ifNoneMatch.trim() !== "*") {
    throw badRequest("BAD_PARAMETER", "a write takes only 'If-None-Match: *'");
  }
  return { ifMatch: c.req.header("If-Match"), ifNoneMatch };
}

function conflictError(message: string): ApiError {
  return new ApiError(409, "CONFLICT", message);
}

function conflict(e: unknown): never {
  if (!(e instanceof ResourceConflict)) throw e;
  if (e.reason === "precondition") throw new ApiError(412, "PRECONDITION_FAILED", e.message);
  if (e.reason === "not-folder") throw notFound(e.message);
  throw conflictError(e.message);
}
