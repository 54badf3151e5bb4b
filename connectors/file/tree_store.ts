/**
 * The datastore of plain paths: files of the resource tree (`/user/...`, `/shared/...`,
 * `/system/...`, or relative to the working directory). The user needs `list` on every folder
 * a glob walks and `read` on every file, under the path named and under the path a symbolic
 * link really leads to; symbolic links may not lead out of the tree.
 *
 *   const store = treeStore(tree);
 *   for await (const f of store.list("/shared/logs/$yyyy$/*.log", options)) ...
 */

import type { Datastore, ListOptions } from "../../engine/datastore.ts";
import { PathError } from "../../engine/resource_path.ts";
import { type ResolvedPath, type ResourceTree } from "../../engine/resource_tree.ts";
import { QueryError } from "../../engine/diagnostics.ts";
import { compileGlob } from "../glob.ts";
import { listLocalFiles, type LocalRoot } from "./local_files.ts";

export function treeStore(tree: ResourceTree): Datastore {
  return {
    list(pattern: string, options: ListOptions) {
      const glob = compileGlob(pattern);
      const base = resolveBase(tree, glob.base, options);
      // Files are named as the user wrote them: `/user/x.log` stays `/user/x.log`.
      const shownBase = glob.base.startsWith("/") ? glob.base : base.canonical;
      const root: LocalRoot = {
        hostPath: (path) => base.real + path.slice(base.canonical.length),
        uriOf: (path) => shownBase.replace(/\/$/, "") + path.slice(base.canonical.length),
        mayList: (path) => tree.may(options.user, "list", path),
        mayRead: (path) => tree.may(options.user, "read", path),
        async realPath(path) {
          // No user on it: the rights of both paths are checked by listLocalFiles.
          const target = await tree.realTarget({
            canonical: path,
            real: base.real + path.slice(base.canonical.length),
          });
          return { host: target.real, logical: target.canonical };
        },
      };
      const firstIsGlob = glob.segments.length > 0 && glob.segments[0].kind !== "literal";
      if (firstIsGlob && !root.mayList(base.canonical)) {
        throw new QueryError({
          code: "FORBIDDEN",
          message: `you may not list the folder '${shownBase}' that '${pattern}' reads`,
        });
      }
      // The walk runs over canonical paths; uriOf shows them as written.
      return listLocalFiles({ ...glob, base: base.canonical }, root, options);
    },
  };
}

function resolveBase(tree: ResourceTree, base: string, options: ListOptions): ResolvedPath {
  try {
    return tree.resolve(options.user, base === "" ? options.workDir : base, options.workDir);
  } catch (e) {
    if (e instanceof PathError) {
      throw new QueryError({ code: "NOT_FOUND", message: e.message });
    }
    throw e;
  }
}
