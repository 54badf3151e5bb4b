/**
 * The narrow interface every datastore kind implements (connectors/file, connectors/cloudapi).
 * The engine lists the files a source URI matches, then opens each one; it knows nothing else
 * of where the bytes come from.
 */

import type { User } from "./user.ts";
import { isWithin } from "./resource_path.ts";

/** Where definitions live that reach beyond the tree; no grant opens them to writing. */
export const DATASTORES_FOLDER = "/system/datastores";

/**
 * Is `canonical` in the datastores folder (a definition, or below one)? Definitions hold
 * credentials (client secrets, SAS tokens, account keys) that are write-only for everyone,
 * admins included: they are read and written through `/datastores` only, never by a query's
 * sources, tables, views or `save`, nor through `/resources` (which lists the folder itself).
 */
export function isDatastoreDefinition(canonical: string): boolean {
  return isWithin(canonical, DATASTORES_FOLDER) && canonical !== DATASTORES_FOLDER;
}

/** Why `canonical` (a datastore definition) is refused to `by`: a query or `/resources`. */
export function definitionRefusal(canonical: string, by: "queries" | "/resources"): string {
  return `datastore definitions are read and written through /datastores, not ${
    by === "queries" ? "by queries" : "/resources"
  } (${canonical})`;
}

/**
 * Whether a scan worker may list and read a source URI itself (its part run in a worker, its
 * files shared out, engine/exec/parallel/): this host's files, and the blobs of an `azblob://`
 * store, which the worker opens through its own registry as the query's user (the store's acl
 * checked again there, its credentials read from the definitions, never carried by the task).
 * Other schemes (`cloudapi://`) are fetched and paced by the server only.
 */
export function readByWorkers(uri: string): boolean {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(uri)?.[1]?.toLowerCase();
  return scheme === undefined || scheme === "file" || scheme === "azblob";
}

export interface FileEntry {
  /** The URI as the user would write it: `/shared/logs/a.log`, `cloudapi://store/...`. */
  readonly uri: string;
  readonly size: number;
  /** Last modification, epoch milliseconds. */
  readonly modified: number;
  /**
   * Which file this is on its disk (`device:inode`), where the datastore knows: with the size
   * and time, the column cache's identity of the file (engine/exec/cached_scan.ts).
   */
  readonly identity?: string;
  /**
   * Set by a share of a file (engine/exec/parallel/shares.ts): the whole file and the byte
   * range [start, end) whose lines this entry reads.
   */
  readonly range?: { readonly file: FileEntry; readonly start: number; readonly end: number };
  /** The time the path's `$yyyy$ $MM$ $dd$ $HH$ $mm$` fields give, epoch milliseconds, or null. */
  readonly pathTime: number | null;
  /** Opens the file for reading from the start; the signal aborts the read. */
  open(signal: AbortSignal): Promise<ReadableStream<Uint8Array>>;
  /**
   * Opens the file for reading from byte `from` on; files that have it may be split into byte
   * ranges read by several workers (engine/exec/parallel/).
   */
  openAt?(signal: AbortSignal, from: number): Promise<ReadableStream<Uint8Array>>;
}

export interface Warning {
  readonly level: "INFO" | "WARN" | "ERROR";
  readonly message: string;
}

export interface ListOptions {
  readonly user: User;
  /** Working directory (a virtual path) that relative paths are resolved against. */
  readonly workDir: string;
  /** Query time zone, for time fields in paths. */
  readonly timeZone: string;
  /** Bounds on `pathTime`, epoch milliseconds: files outside are skipped (and not fetched). */
  readonly from?: number | undefined;
  readonly to?: number | undefined;
  readonly signal: AbortSignal;
  readonly onWarning: (w: Warning) => void;
  /**
   * Progress of preparatory work (fetching cloud logs) as a fraction 0..1 of that work; the
   * engine folds it into the query's progress.
   */
  readonly onProgress?: (fraction: number) => void;
  /** Told of each request made to a cloud API on the query's behalf (the query's stats). */
  readonly onRequest?: () => void;
  /** Counts what a datastore gave up (cloud hours, content blobs); each is also a warning. */
  readonly onLost?: (count: number) => void;
}

export interface Datastore {
  /**
   * The files that `pattern` (the URI with globs and time fields) matches and the user may
   * read. A file that cannot be read is reported through onWarning and skipped; a pattern the
   * user may not use at all throws a QueryError with code FORBIDDEN or NOT_FOUND.
   */
  list(pattern: string, options: ListOptions): AsyncIterable<FileEntry>;
}

/** Finds the datastore for a source URI by its scheme (and store name). */
export interface DatastoreRegistry {
  /** Throws a QueryError (NOT_FOUND, LICENSE_REQUIRED, FORBIDDEN) when there is none to use. */
  forUri(uri: string, user: User): Promise<Datastore>;
}
