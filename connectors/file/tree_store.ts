/**
 * The datastore of plain paths: files of the resource tree (`/user/...`, `/shared/...`,
 * `/system/...`, or relative to the working directory). The user needs `list` on every folder
 * a glob walks and `read` on every file, under the path named and under the path a symbolic
 * link really leads to; symbolic links may not lead out of the tree.
 *
 *   const store = treeStore(tree);
 *   for await (const f of store.list("/shared/logs/$yyyy$/*.log", options)) ...
 */

import { isWithin, PathError } from "../../engine/contracts/resource_path.ts";
import { type ResolvedPath, type ResourceTree } from "../../engine/contracts/resource_tree.ts";
import { QueryError } from "../../engine/front/diagnostics.ts";
import {
  type Datastore,
  DATASTORES_FOLDER,
  definitionRefusal,
  type ListOptions,
} from "../../engine/contracts/datastore.ts";
import { compileGlob } from "../glob.ts";
import { listLocalFiles, listMatches, type LocalRoot, reason } from "./local_files.ts";
import type { FileEntry } from "../../engine/contracts/datastore.ts";
import type { Glob } from "../glob.ts";
import type { WalkEntry } from "./walk_glob.ts";

export function treeStore(tree: ResourceTree): Datastore {
  return {
    list(pattern: string, options: ListOptions) {
      const glob = compileGlob(pattern);
      const base = resolveBase(tree, glob.base, options);
      // Named, the datastore definitions are refused; a wider glob (`/system/**`) walks past
      // them untold (root.hidden).
      if (isWithin(base.canonical, DATASTORES_FOLDER)) {
        throw new QueryError({ code: "FORBIDDEN", message: definitionRefusal(pattern, "queries") });
      }
      // Files are named as the user wrote them: `/user/x.log` stays `/user/x.log`.
      const shownBase = glob.base.startsWith("/") ? glob.base : base.canonical;
      const root: LocalRoot = {
        hostPath: (path) => base.real + path.slice(base.canonical.length),
        uriOf: (path) => shownBase.replace(/\/$/, "") + path.slice(base.canonical.length),
        mayList: (path) => tree.may(options.user, "list", path),
        mayRead: (path) => tree.may(options.user, "read", path),
        hidden: ({ logical }) => isWithin(logical, DATASTORES_FOLDER),
        async realPath(path) {
          // No user on it: the rights of both paths are checked by listLocalFiles.
          const target = await tree.realTarget({
            canonical: path,
            real: base.real + path.slice(base.canonical.length),
          });
          return { host: target.real, logical: target.canonical };
        },
      };
      const firstIsGlob = glob.segments.length > 0 && glob.segments[0]!.kind !== "literal";
      if (firstIsGlob && !root.mayList(base.canonical)) {
        throw new QueryError({
          code: "FORBIDDEN",
          message: `you may not list the folder '${shownBase}' that '${pattern}' reads`,
        });
      }
      // The walk runs over canonical paths; uriOf shows them as written.
      if (!tree.hostFiles) {
        return listTreeFiles({ ...glob, base: base.canonical }, tree, root, options);
      }
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

/**
 * The files `glob` matches in a tree whose locations are not host paths (a storage tree: no
 * symbolic links, a location is the canonical path): the same rights and warnings as on the
 * local disk, files read through the tree.
 */
async function* listTreeFiles(
  glob: Glob,
  tree: ResourceTree,
  root: LocalRoot,
  options: ListOptions,
): AsyncGenerator<FileEntry> {
  const walkFs = (warn: (message: string) => void) => ({
    async list(path: string): Promise<readonly WalkEntry[] | null> {
      const uri = root.uriOf(path);
      if (!root.mayList(path)) {
        warn(`no right to list folder '${uri}'; skipped`);
        return null;
      }
      try {
        const entries = await tree.list(path);
        return entries
          .filter((e) =>
            !root.hidden?.({ logical: child(path, e.name), host: child(path, e.name) })
          )
          .map((e) => ({ name: e.name, kind: e.isFolder ? "dir" : "file" } as const));
      } catch (e) {
        warn(`cannot list folder '${uri}' (${reason(e)}); skipped`);
        return null;
      }
    },
    async probe(path: string): Promise<WalkEntry["kind"] | null> {
      // As on the local disk: a name in a folder one may not list is looked at only with a
      // right on the path itself.
      const slash = path.lastIndexOf("/");
      const parent = slash <= 0 ? "/" : path.slice(0, slash);
      if (!root.mayList(parent) && !root.mayRead(path) && !root.mayList(path)) return null;
      if (root.hidden?.({ logical: path, host: path })) return null;
      try {
        const info = await tree.stat(path);
        return info === null ? null : info.isFolder ? "dir" : "file";
      } catch {
        return null;
      }
    },
  });
  return yield* listMatches(glob, root, walkFs, options, async (path) => {
    if (root.hidden?.({ logical: path, host: path })) return null;
    const info = await tree.stat(path);
    if (!info || info.isFolder) throw new Deno.errors.NotFound();
    return {
      size: info.size,
      modified: info.modified,
      ...(info.identity !== undefined ? { identity: info.identity } : {}),
      open: (signal) => tree.open(path, signal),
      // From an offset too, so scan workers can share a large file by byte ranges.
      openAt: (signal, from) => tree.open(path, signal, from),
    };
  });
}

function child(folder: string, name: string): string {
  return `${folder.replace(/\/$/, "")}/${name}`;
}
