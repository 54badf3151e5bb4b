/**
 * The resource tree as the engine sees it: virtual paths (`/users/<name>/...`, `/shared/...`,
 * `/system/...`, `/user/...` for the caller's own) resolved for a user, with rights, and the
 * file operations on what a path resolved to. Two implementations: the local files under
 * `<home>/data/` (home/resource_tree.ts, where a location is a host path) and a storage-backed
 * tree (home/storage_tree.ts, keys `data/...` of engine/contracts/storage.ts, where a location is the
 * canonical path). Callers never build a location by hand: they get one from `resolve`,
 * `realPath` or `child`, and hand it back to the same tree's file operations.
 */

import type { User } from "./user.ts";

export type Right = "list" | "execute" | "read" | "write" | "create";

export interface ResolvedPath {
  /** `/users/alice/x.sxt`, `/shared/logs/a.log` */
  readonly canonical: string;
  /**
   * Where it is for the tree's file operations: an absolute host path under `<home>/data/`
   * for the files tree (`hostFiles`), the canonical path for a storage tree.
   */
  readonly real: string;
  /** The user it was resolved for; `realPath` then checks their rights on a link's target. */
  readonly user?: User;
}

/** What is at a location. */
export interface TreeFileInfo {
  readonly isFolder: boolean;
  /** Bytes of a file; 0 for a folder. */
  readonly size: number;
  /** Epoch milliseconds (0 when unknown). */
  readonly modified: number;
  /** Which file this is on its disk (`device:inode`), where the storage knows (column cache). */
  readonly identity?: string;
}

export interface TreeEntry extends TreeFileInfo {
  readonly name: string;
}

/** `If-Match` / `If-None-Match: *` of a write or a delete. */
export interface Preconditions {
  /** The ETags (quoted, comma-separated) one of which the current content must have; `*`: exists. */
  readonly ifMatch?: string | undefined;
  /** `If-None-Match: *`: the file must not exist yet. */
  readonly ifNoneMatch?: string | undefined;
}

/** Why a write did not happen. */
export class ResourceConflict extends Error {
  constructor(
    readonly reason: "precondition" | "exists" | "not-empty" | "not-folder",
    message: string,
  ) {
    super(message);
    this.name = "ResourceConflict";
  }
}

/**
 * A replacement of one file being written (a stored table): nothing is visible at its location
 * before `commit`, and a reader sees the old content or the new one, never a mix.
 */
export interface AtomicOutput {
  /** Appends all of `bytes`. */
  write(bytes: Uint8Array): Promise<void>;
  /** Overwrites the first `bytes.length` bytes written (a header reserved at the start). */
  patchStart(bytes: Uint8Array): Promise<void>;
  /** What was written from byte `from` on, in chunks (to copy it behind a larger header). */
  readFrom(from: number): AsyncIterable<Uint8Array>;
  /** Replaces the file with what was written. */
  commit(): Promise<void>;
  /** Drops what was written; the file is untouched. Safe to call more than once. */
  abort(): Promise<void>;
}

/** The file operations of a tree, on locations it gave (`ResolvedPath.real`). Rights unchecked. */
export interface TreeFiles {
  /** True when locations are host paths (scan workers and host-only tools may use them). */
  readonly hostFiles: boolean;
  /** The location of `name` in the folder at `folder`. */
  child(folder: string, name: string): string;
  /**
   * What is at a location, or null when nothing is. `followLinks: false` tells of a symbolic
   * link itself (the files tree; a storage tree has none).
   */
  stat(real: string, options?: { followLinks?: boolean }): Promise<TreeFileInfo | null>;
  /** A folder's entries, sorted by name; hidden names (temp files of saves) are left out. */
  list(real: string): Promise<TreeEntry[]>;
  /** A file's bytes and strong ETag; throws Deno.errors.NotFound when there is none. */
  read(real: string): Promise<{ bytes: Uint8Array; etag: string }>;
  /** A file's bytes as a stream from byte `from` on; rejects when it cannot be opened. */
  open(real: string, signal: AbortSignal, from?: number): Promise<ReadableStream<Uint8Array>>;
  /**
   * Writes a file whole (atomically) under the preconditions; its folder must exist
   * (else ResourceConflict "not-folder"). Returns whether it was created and its new ETag.
   */
  write(
    real: string,
    bytes: Uint8Array,
    preconditions?: Preconditions,
  ): Promise<{ created: boolean; etag: string }>;
  /** Starts replacing a file as a stream (stored tables). */
  openAtomic(real: string): Promise<AtomicOutput>;
  /** Creates a folder; ResourceConflict "exists" / "not-folder" (no parent). */
  mkdir(real: string): Promise<void>;
  /** Removes a file, or a folder (only an empty one unless `recursive`). */
  remove(
    real: string,
    options: { recursive: boolean; preconditions?: Preconditions },
  ): Promise<void>;
  /** Moves a file or folder to a location where nothing is (ResourceConflict "exists"). */
  move(from: string, to: string): Promise<void>;
}

export interface ResourceTree extends TreeFiles {
  /** Host path of `<home>/data/` (files tree), or a name of the storage (storage tree). */
  readonly root: string;
  /**
   * Resolves a path for `user`. Throws PathError for hostile or malformed paths (`..`,
   * encoded traversal, backslashes, NUL, empty segments, over-long names). Checks no rights.
   */
  resolve(user: User, path: string, workDir?: string): ResolvedPath;
  /** May `user` do `right` on the canonical path? (grants inherited from ancestors) */
  may(user: User, right: Right, canonical: string): boolean;
  /**
   * For an existing file or folder: its location after symlinks, refusing (PathError)
   * one that leads out of the tree; Deno.errors.NotFound when nothing is there. When `resolved`
   * carries its user (as `resolve` returns it) and a link leads elsewhere in the tree, the user
   * must have `right` on the real target too (without `right`: each of list, execute and read
   * they have on the named path).
   */
  realPath(resolved: ResolvedPath, right?: Right): Promise<string>;
  /**
   * The canonical path and location of what an existing path really is after symlinks (its
   * `user` dropped); PathError for one that leads out of the tree. Checks no rights.
   */
  realTarget(resolved: ResolvedPath): Promise<ResolvedPath>;
}
