/**
 * The narrow interface every datastore kind implements (connectors/file, connectors/cloudapi).
 * The engine lists the files a source URI matches, then opens each one; it knows nothing else
 * of where the bytes come from.
 */

import type { User } from "./user.ts";

/** Where definitions live that reach beyond the tree; no grant opens them to writing. */
export const DATASTORES_FOLDER = "/system/datastores";

export interface FileEntry {
  /** The URI as the user would write it: `/shared/logs/a.log`, `cloudapi://store/...`. */
  readonly uri: string;
  readonly size: number;
  /** Last modification, epoch milliseconds. */
  readonly modified: number;
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
