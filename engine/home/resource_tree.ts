/**
 * The resource tree: virtual paths mapped under `<home>/data/`. CONTRACT STUB: the foundation
 * work implements it (class `FsResourceTree implements ResourceTree`); the interface is fixed.
 *
 * Canonical paths: `/users/<name>/...` (a user's own folder), `/shared/...`, `/system/...`.
 * `/user/...` is the caller's alias for `/users/<caller>/...`. A path without a leading `/`
 * is relative to the working directory.
 */

import type { User } from "./users.ts";

export type Right = "list" | "execute" | "read" | "write" | "create";

export interface ResolvedPath {
  /** `/users/alice/x.sxt`, `/shared/logs/a.log` */
  readonly canonical: string;
  /** Absolute host path under `<home>/data/`. */
  readonly real: string;
}

export interface ResourceTree {
  /** Host path of `<home>/data/`. */
  readonly root: string;
  /**
   * Resolves a path for `user`. Throws PathError for hostile or malformed paths (`..`,
   * encoded traversal, backslashes, NUL, empty segments, over-long names). Checks no rights.
   */
  resolve(user: User, path: string, workDir?: string): ResolvedPath;
  /** May `user` do `right` on the canonical path? (grants inherited from ancestors) */
  may(user: User, right: Right, canonical: string): boolean;
  /**
   * For an existing file or folder: the real host path after symlinks, refusing (PathError)
   * one that leads out of the tree.
   */
  realPath(resolved: ResolvedPath): Promise<string>;
}

/** A path refused by resolution; `message` names the path and the reason. */
export class PathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PathError";
  }
}
