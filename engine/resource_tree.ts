/**
 * The resource tree as the engine sees it: virtual paths (`/users/<name>/...`, `/shared/...`,
 * `/system/...`, `/user/...` for the caller's own) resolved for a user, with rights. The home
 * implements it on the local files (home/resource_tree.ts).
 */

import type { User } from "./user.ts";

export type Right = "list" | "execute" | "read" | "write" | "create";

export interface ResolvedPath {
  /** `/users/alice/x.sxt`, `/shared/logs/a.log` */
  readonly canonical: string;
  /** Absolute host path under `<home>/data/`. */
  readonly real: string;
  /** The user it was resolved for; `realPath` then checks their rights on a link's target. */
  readonly user?: User;
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
   * one that leads out of the tree. When `resolved` carries its user (as `resolve` returns it)
   * and a link leads elsewhere in the tree, the user must have `right` on the real target too
   * (without `right`: each of list, execute and read they have on the named path).
   */
  realPath(resolved: ResolvedPath, right?: Right): Promise<string>;
  /**
   * The canonical and host path of what an existing path really is after symlinks (its
   * `user` dropped); PathError for one that leads out of the tree. Checks no rights.
   */
  realTarget(resolved: ResolvedPath): Promise<ResolvedPath>;
}
