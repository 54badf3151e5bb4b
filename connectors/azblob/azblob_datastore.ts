/**
 * The `azblob://` datastore: archived logs in Azure Blob Storage, read where they lie.
 *
 *   azblob://<store>/<path with globs and $yyyy$ $MM$ $dd$ $HH$ $mm$>
 *   azblob://<store>/<container>/<path ...>      (a store without `container`)
 *
 * A pattern is listed by its longest literal prefix (one `List Blobs` walk, blob_prefix.ts),
 * each name matched against the glob (connectors/glob.ts) and skipped when its path time lies
 * outside `from`/`to`; matching blobs are read in ranges (read_blob.ts). Who may read is the
 * store's `acl`, as for every store (`read`; `list` too for a pattern with globs).
 */

import type { Datastore, FileEntry, ListOptions } from "../../engine/contracts/datastore.ts";
import { QueryError } from "../../engine/front/diagnostics.ts";
import type { User } from "../../engine/contracts/user.ts";
import { compileGlob, matchGlob } from "../glob.ts";
import { readableDefinition, storeAllows } from "../store_acl.ts";
import { spanOverlaps, timeSpan } from "../file/path_time.ts";
import { type AzblobDefinition, CONTAINER, parseAzblobDefinition } from "./definition.ts";
import { BlobRequestError } from "./blob_request.ts";
import { listBlobs } from "./list_blobs.ts";
import { BlobServiceRefusal, credentialsError } from "./service_refusal.ts";
import { readBlob } from "./read_blob.ts";
import { blobPrefix } from "./blob_prefix.ts";

export interface AzblobDeps {
  /** The text of a store's definition (`/system/datastores/<store>.json`), null when absent. */
  readonly definitionText: (store: string) => Promise<string | null>;
  /** First retry delay (tests make it short). */
  readonly backoffMs?: number;
  /** Bytes per ranged read and blobs per listed page (tests make them small). */
  readonly rangeBytes?: number | undefined;
  readonly pageSize?: number;
}

const URI = /^azblob:\/\/([^/]*)(?:\/(.*))?$/i;
const STORE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

/** A factory for the datastore registry: `register("azblob", azblobFactory(deps))`. */
export function azblobFactory(deps: AzblobDeps) {
  return (uri: string, user: User): Promise<Datastore> => openAzblobStore(uri, user, deps);
}

/** Opens the store an `azblob://` URI names, for `user`; throws QueryError when it cannot. */
export async function openAzblobStore(
  uri: string,
  user: User,
  deps: AzblobDeps,
): Promise<Datastore> {
  const store = URI.exec(uri)?.[1] ?? "";
  if (!STORE_NAME.test(store)) {
    throw new QueryError({
      code: "NOT_FOUND",
      message: `'${uri.slice(0, 200)}' names no datastore: expected azblob://<store>/<path>`,
    });
  }
  const json = readableDefinition(store, await deps.definitionText(store), "azblobStore", user);
  const parsed = parseAzblobDefinition(store, json);
  if (!parsed.ok) {
    throw new QueryError({ code: "BAD_DATASTORE", message: parsed.problems.join("; ") });
  }
  return {
    list: (pattern, options) => listStore(parsed.definition, pattern, options, deps),
  };
}

async function* listStore(
  def: AzblobDefinition,
  pattern: string,
  options: ListOptions,
  deps: AzblobDeps,
): AsyncGenerator<FileEntry> {
  const { container, path } = target(def, pattern);
  const glob = compileGlob(path.endsWith("/") ? `${path}**` : path);
  const user = options.user;
  if (glob.segments.some((s) => s.kind !== "literal") && !storeAllows(def.acl, user, "list")) {
    throw new QueryError({
      code: "FORBIDDEN",
      message: `user '${user.name}' may not list datastore '${def.name}' (see its acl), ` +
        `which '${pattern}' needs for its globs`,
    });
  }
  const ctx = { def, signal: options.signal, backoffMs: deps.backoffMs };
  const uriOf = (name: string) =>
    `azblob://${def.name}/${def.container === undefined ? `${container}/` : ""}${name}`;
  let count = 0;
  try {
    for await (const blob of listBlobs(ctx, container, blobPrefix(glob), deps.pageSize)) {
      const captures = matchGlob(glob, blob.name);
      if (!captures) continue;
      const span = timeSpan(captures, def.timeZone);
      if (!spanOverlaps(span, options.from, options.to)) continue;
      const uri = uriOf(blob.name);
      count++;
      yield {
        uri,
        size: blob.size,
        modified: blob.modified,
        // The ETag changes with every write: the column cache's identity of the blob.
        ...(blob.etag ? { identity: `etag:${blob.etag}` } : {}),
        pathTime: span ? span.start : null,
        open: (signal) =>
          readBlob({ ...ctx, signal }, blob, {
            container,
            uri,
            onWarning: options.onWarning,
            rangeBytes: deps.rangeBytes,
          }),
      };
    }
  } catch (e) {
    throw listingError(def, container, e);
  }
  if (count === 0 && !options.signal.aborted) {
    options.onWarning({ level: "WARN", message: `no blob matches '${pattern}'` });
  }
}

/** The container and the blob pattern a URI names, by whether the store fixes the container. */
function target(def: AzblobDefinition, pattern: string): { container: string; path: string } {
  const rest = (URI.exec(pattern)?.[2] ?? "").split("/").filter((s, i, all) =>
    s !== "" || i === all.length - 1
  ).join("/");
  if (def.container !== undefined) {
    if (rest === "") throw noBlob(pattern, `azblob://${def.name}/<path>`);
    return { container: def.container, path: rest };
  }
  const slash = rest.indexOf("/");
  const container = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? "" : rest.slice(slash + 1);
  if (!CONTAINER.test(container) || path === "") {
    throw noBlob(pattern, `azblob://${def.name}/<container>/<path> (the store names no container)`);
  }
  return { container, path };
}

function noBlob(pattern: string, expected: string): QueryError {
  return new QueryError({
    code: "NOT_FOUND",
    message: `'${pattern.slice(0, 200)}' names no blob: expected ${expected}`,
  });
}

/** A failed listing as the query's error; it names the store and never a credential. */
function listingError(def: AzblobDefinition, container: string, e: unknown): unknown {
  const where = `datastore '${def.name}'`;
  if (e instanceof BlobServiceRefusal) {
    if (e.credentialsRefused) return credentialsError(def, e);
    if (e.status === 404) {
      return new QueryError({
        code: def.container === undefined ? "NOT_FOUND" : "BAD_DATASTORE",
        message: `${where}: the storage account '${def.accountName}' has no container ` +
          `'${container}' (${e.message})`,
      });
    }
    return new QueryError({
      code: "RUNTIME_ERROR",
      message: `${where}: listing container '${container}' failed: ${e.message}`,
    });
  }
  if (e instanceof BlobRequestError) {
    return new QueryError({ code: "RUNTIME_ERROR", message: `${where}: ${e.message}` });
  }
  return e;
}
