/**
 * For tests: a real resource tree in a fresh temp folder, with files written from a map of
 * virtual paths to contents, and the ListOptions a query of `user` would pass.
 */

import { dirname, join } from "node:path";
import { FsResourceTree } from "../../home/resource_tree.ts";
import type { Grant } from "../../home/rights.ts";
import type { User } from "../../engine/contracts/user.ts";
import type { FileEntry, ListOptions, Warning } from "../../engine/contracts/datastore.ts";
import { MemoryBudget, ProgressMeter } from "../../engine/plan/context.ts";
import { openFile } from "../../connectors/file/open_file.ts";
import { treeStore } from "../../connectors/file/tree_store.ts";
import type { Datastore } from "../../engine/contracts/datastore.ts";

export interface TempTree {
  readonly tree: FsResourceTree;
  /** The datastore of plain tree paths over this tree (what a query's sources list through). */
  readonly store: Datastore;
  /** The temp folder; the tree is its `data/`. */
  readonly dir: string;
  /** Writes a file at a canonical path (`/shared/logs/a.log`), creating its folders. */
  write(path: string, content: string | Uint8Array): Promise<void>;
  /** Host path of a canonical path. */
  host(path: string): string;
  /** List options for `user`, collecting warnings into `warnings`. */
  options(user: User, extra?: Partial<ListOptions>): ListOptions & { warnings: Warning[] };
  remove(): Promise<void>;
}

export const alice: User = { name: "alice", groups: [], admin: false };
export const bob: User = { name: "bob", groups: [], admin: false };

export async function makeTempTree(
  files: Record<string, string> = {},
  grants: readonly Grant[] = [],
): Promise<TempTree> {
  const dir = await Deno.makeTempDir({ prefix: "trawl-file-" });
  const data = join(dir, "data");
  for (const root of ["users/alice", "users/bob", "shared", "system"]) {
    await Deno.mkdir(join(data, root), { recursive: true });
  }
  const tree = new FsResourceTree(data, { grants: () => grants });
  const host = (path: string) => join(data, ...path.split("/").filter((s) => s !== ""));
  const write = async (path: string, content: string | Uint8Array) => {
    await Deno.mkdir(dirname(host(path)), { recursive: true });
    if (typeof content === "string") await Deno.writeTextFile(host(path), content);
    else await Deno.writeFile(host(path), content);
  };
  for (const [path, content] of Object.entries(files)) await write(path, content);
  return {
    tree,
    store: treeStore(tree),
    dir,
    write,
    host,
    options(user, extra = {}) {
      const warnings: Warning[] = [];
      return {
        user,
        workDir: `/users/${user.name}`,
        timeZone: "UTC",
        signal: new AbortController().signal,
        onWarning: (w: Warning) => warnings.push(w),
        warnings,
        ...extra,
      };
    },
    remove: () => Deno.remove(dir, { recursive: true }),
  };
}

/** Everything an async iterable yields. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** An ExecContext for source tests, collecting warnings and progress reports. */
export function testContext(signal = new AbortController().signal) {
  const warnings: Warning[] = [];
  const reports: number[] = [];
  return {
    signal,
    timeZone: "UTC",
    now: 0,
    warn: (w: Warning) => warnings.push(w),
    progress: new ProgressMeter((f) => reports.push(f)),
    memory: new MemoryBudget(1 << 30),
    warnings,
    reports,
  };
}

/** The entry of a host file, read through openFile. */
export async function hostEntry(path: string): Promise<FileEntry> {
  const info = await Deno.stat(path);
  return {
    uri: path,
    size: info.size,
    modified: info.mtime?.getTime() ?? 0,
    pathTime: null,
    open: (signal) => openFile(path, signal),
  };
}

/** Opens a host file for reading, as the file datastores do (tests of the scanners). */
export function openHostFile(
  path: string,
  signal: AbortSignal,
): Promise<ReadableStream<Uint8Array>> {
  return openFile(path, signal);
}
