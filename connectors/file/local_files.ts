/**
 * Lists the files of a folder on this host along a glob, for both the resource tree and FILE
 * datastores: they differ only in how a logical path maps to the host, which rights apply and
 * where symbolic links may lead (a `LocalRoot`).
 *
 * Rights hold for where the bytes really are: every folder listed and every file read is
 * checked under the path the user named and under the path it really has after symbolic links
 * (a link anywhere along the path, not only the last name). Links that lead back into a folder
 * being walked are skipped, so loops end; hidden temporary files of a `save` are never listed.
 */

import type { FileEntry, ListOptions } from "../../engine/contracts/datastore.ts";
import { join } from "node:path";
import { isTableTempName } from "../../engine/table/temp_files.ts";
import type { Glob } from "../glob.ts";
import { openFile } from "./open_file.ts";
import { type WalkEntry, type WalkFs, walkGlob } from "./walk_glob.ts";

export interface LocalRoot {
  /** Host path of a logical path (one built from the glob's base and matched names). */
  hostPath(path: string): string;
  /** The URI a user would write for a logical path; the only name messages show. */
  uriOf(path: string): string;
  mayList(path: string): boolean;
  mayRead(path: string): boolean;
  /**
   * The host path after symbolic links, and the logical path it has inside the root; throws
   * (with a message naming no host path) when the link leads out of the root.
   */
  realPath(path: string): Promise<{ host: string; logical: string }>;
  /**
   * Is this file or folder one no listing shows and nothing reads, whoever asks (the datastore
   * definitions, engine/datastore.ts)? It is skipped without a warning: its name is not told.
   * `host` is where it really is (for the storage tree: the canonical path).
   */
  hidden?(path: { logical: string; host: string }): boolean;
}

/** The readable files `glob` matches under `root`; what cannot be read is warned about. */
export function listLocalFiles(
  glob: Glob,
  root: LocalRoot,
  options: ListOptions,
): AsyncGenerator<FileEntry> {
  return listMatches(glob, root, (warn) => localWalkFs(root, warn), options, async (path, uri) => {
    const target = await root.realPath(path);
    if (root.hidden?.(target)) return null;
    if (target.logical !== path && !root.mayRead(target.logical)) {
      return `'${uri}' links to a file you may not read; skipped`;
    }
    // The real path is what gets opened: the link is not followed a second time.
    const host = target.host;
    const info = await Deno.stat(host);
    if (!info.isFile) throw new Deno.errors.NotFound();
    return {
      size: info.size,
      modified: info.mtime?.getTime() ?? 0,
      ...(info.ino !== null ? { identity: `${info.dev}:${info.ino}` } : {}),
      open: (signal) => openFile(host, signal),
      openAt: (signal, from) => openFile(host, signal, from),
    };
  });
}

/**
 * What a matched file is, to read it; or a warning why it is skipped; null: skipped untold (a
 * hidden file). Throws: cannot read.
 */
export type OpenMatch = (
  path: string,
  uri: string,
) => Promise<Omit<FileEntry, "uri" | "pathTime"> | string | null>;

/**
 * The files `glob` matches through the walk `walkFs` makes (the local disk's or a tree's; it
 * warns through the function it is given), with the rights and warnings of every tree: a file
 * one may not read is skipped with a warning, one that cannot be opened too (`open` says how),
 * and a glob that matches nothing says so, unless the listing has said why already (a folder it
 * could not list, a file it may not read): one source, one account of why it gave nothing, never
 * "no right to read 'x'" and "'x' does not exist" together.
 */
export async function* listMatches(
  glob: Glob,
  root: Pick<LocalRoot, "uriOf" | "mayRead">,
  walkFs: (warn: (message: string) => void) => WalkFs,
  options: ListOptions,
  open: OpenMatch,
): AsyncGenerator<FileEntry> {
  let said = false;
  const warn = (message: string) => {
    said = true;
    options.onWarning({ level: "WARN", message });
  };
  const fs = walkFs(warn);
  let count = 0;
  for await (const match of walkGlob(glob, fs, options)) {
    const uri = root.uriOf(match.path);
    if (!root.mayRead(match.path)) {
      warn(`no right to read '${uri}'; skipped`);
      continue;
    }
    let file;
    try {
      file = await open(match.path, uri);
    } catch (e) {
      warn(`cannot read '${uri}' (${reason(e)}); skipped`);
      continue;
    }
    if (file === null) continue;
    if (typeof file === "string") {
      warn(file);
      continue;
    }
    count++;
    yield { uri, pathTime: match.pathTime, ...file };
  }
  if (count === 0 && !said && !options.signal.aborted) {
    const literal = glob.segments.every((s) => s.kind === "literal");
    warn(
      literal
        ? `file '${glob.pattern}' does not exist or cannot be read`
        : `no file matches '${glob.pattern}'`,
    );
  }
}

function localWalkFs(root: LocalRoot, warn: (message: string) => void): WalkFs {
  /** Real host folder of each logical folder listed so far, to see a link loop. */
  const listed = new Map<string, string>();

  /** Does `host` repeat the real folder of one of the named ancestors of `path`? */
  function loops(path: string, host: string): boolean {
    for (let i = path.lastIndexOf("/"); i >= 0; i = path.lastIndexOf("/", i - 1)) {
      if (listed.get(i === 0 ? "/" : path.slice(0, i)) === host) return true;
      if (i === 0) break;
    }
    return false;
  }

  /** The kind of an entry, following a symbolic link only where the root allows it. */
  async function kindOf(path: string, info: Deno.FileInfo | Deno.DirEntry) {
    if (!info.isSymlink) return info.isDirectory ? "dir" : info.isFile ? "file" : null;
    const uri = root.uriOf(path);
    try {
      const target = await root.realPath(path);
      if (root.hidden?.(target)) return null;
      const stat = await Deno.stat(target.host);
      // A link must not reach what its target's own rights would refuse.
      if (stat.isDirectory) {
        if (root.mayList(target.logical)) return "dir";
        warn(`'${uri}' links to a folder you may not list; skipped`);
      } else if (stat.isFile) {
        if (root.mayRead(target.logical)) return "file";
        warn(`'${uri}' links to a file you may not read; skipped`);
      }
    } catch (e) {
      warn(`cannot follow the link '${uri}' (${reason(e)}); skipped`);
    }
    return null;
  }

  return {
    async list(path) {
      const uri = root.uriOf(path);
      if (!root.mayList(path)) {
        warn(`no right to list folder '${uri}'; skipped`);
        return null;
      }
      const out: WalkEntry[] = [];
      try {
        const target = await root.realPath(path);
        if (root.hidden?.(target)) return null;
        if (target.logical !== path && !root.mayList(target.logical)) {
          warn(`'${uri}' leads to a folder you may not list; skipped`);
          return null;
        }
        if (loops(path, target.host)) {
          warn(`'${uri}' leads back into a folder above it (a link loop); skipped`);
          return null;
        }
        listed.set(path, target.host);
        for await (const e of Deno.readDir(target.host)) {
          if (isTableTempName(e.name)) continue; // a save in progress, or a killed one
          const child = `${path.replace(/\/$/, "")}/${e.name}`;
          if (root.hidden?.({ logical: child, host: join(target.host, e.name) })) continue;
          const kind = await kindOf(child, e);
          if (kind) out.push({ name: e.name, kind });
        }
      } catch (e) {
        warn(`cannot list folder '${uri}' (${reason(e)}); skipped`);
        return null;
      }
      return out;
    },
    async probe(path) {
      // Whether a name exists in a folder one may not list is not one's business: without a
      // right on the path itself it is not looked at, so it is refused the same way whether it
      // exists or not (a literal path names a file without listing its folder).
      const slash = path.lastIndexOf("/");
      const parent = slash <= 0 ? "/" : path.slice(0, slash);
      if (!root.mayList(parent) && !root.mayRead(path) && !root.mayList(path)) return null;
      try {
        if (isTableTempName(path.slice(slash + 1))) return null;
        const host = root.hostPath(path);
        if (root.hidden?.({ logical: path, host })) return null;
        return await kindOf(path, await Deno.lstat(host));
      } catch {
        return null;
      }
    },
  };
}

/** The reason of a file system error, without the host path Deno puts in its message. */
export function reason(e: unknown): string {
  if (e instanceof Deno.errors.NotFound) return "it does not exist";
  if (e instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (e instanceof Deno.errors.NotADirectory) return "not a folder";
  // Our own refusals (PathError, a link out of a datastore) name no host path.
  if (e instanceof Error && (e.name === "PathError" || e.constructor === Error)) return e.message;
  return e instanceof Error ? e.name : String(e);
}
