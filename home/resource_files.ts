/**
 * The files of the resource tree on the local disk: stat, list, read with an ETag, write
 * atomically with preconditions, delete, move (the `TreeFiles` of engine/contracts/resource_tree.ts for
 * home/resource_tree.ts). Rights are the caller's business (routes/resources.ts asks the tree);
 * this module works on host paths the tree resolved.
 *
 * Preconditions and the write they guard run under one lock per host path, so two writers with
 * the same `If-Match` cannot both win: the second sees the first's ETag and gets `precondition`.
 * The ETag of a file is a hash of its content.
 */

import { basename, dirname, join } from "node:path";
import { openAtomic, writeFileAtomic } from "../engine/fs/atomic_write.ts";
import {
  type AtomicOutput,
  type Preconditions,
  ResourceConflict,
  type TreeFileInfo,
  type TreeFiles,
} from "../engine/contracts/resource_tree.ts";
import { openFile } from "../engine/fs/open_file.ts";

export { type Preconditions, ResourceConflict };

export type ResourceKind = "folder" | "script" | "table" | "pattern" | "datastore" | "file";

export interface ResourceInfo {
  readonly kind: ResourceKind;
  readonly size: number;
  /** Epoch milliseconds. */
  readonly modified: number;
}

/** The kind of an entry by its name and place: the console and clients switch on it. */
export function kindOf(canonical: string, isFolder: boolean): ResourceKind {
  if (isFolder) return "folder";
  if (canonical.startsWith("/system/datastores/") && canonical.endsWith(".json")) {
    return "datastore";
  }
  if (canonical.endsWith(".sx")) return "script";
  if (canonical.endsWith(".sxt")) return "table";
  if (canonical.endsWith(".sxp")) return "pattern";
  return "file";
}

/** The strong ETag of some bytes: a quoted, shortened SHA-256. */
export async function etagOf(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return `"${digest.toBase64({ alphabet: "base64url", omitPadding: true }).slice(0, 27)}"`;
}

/** Throws ResourceConflict "precondition" when `current` (an ETag, null: absent) fails `p`. */
export function checkPreconditions(current: string | null, p: Preconditions): void {
  if (p.ifNoneMatch !== undefined && current !== null) {
    throw new ResourceConflict("precondition", "the resource exists (If-None-Match: *)");
  }
  if (p.ifMatch !== undefined) {
    // Strong comparison (RFC 9110 13.1.1): a weak tag never matches.
    const wanted = p.ifMatch.split(",").map((t) => t.trim()).filter((t) => !t.startsWith("W/"));
    const ok = current !== null && (wanted.includes("*") || wanted.includes(current));
    if (!ok) {
      throw new ResourceConflict(
        "precondition",
        current === null
          ? "the resource does not exist (If-Match)"
          : "the resource has changed since it was read (If-Match does not match its ETag)",
      );
    }
  }
}

/** The file operations of the tree on the local disk (locations are host paths). */
export const fsTreeFiles: TreeFiles = {
  hostFiles: true,
  child: (folder, name) => join(folder, name),
  stat: (real, options) => statPath(real, options?.followLinks ?? true),
  list: listFolder,
  read: readResource,
  open: (real, signal, from) => openFile(real, signal, from),
  write: writeResource,
  openAtomic: openAtomicOutput,
  mkdir: makeFolder,
  remove: removeResource,
  move: moveResource,
};

async function statPath(real: string, follow: boolean): Promise<TreeFileInfo | null> {
  try {
    const info = follow ? await Deno.stat(real) : await Deno.lstat(real);
    return {
      isFolder: info.isDirectory,
      size: info.isDirectory ? 0 : info.size,
      modified: info.mtime?.getTime() ?? 0,
      ...(info.ino !== null ? { identity: `${info.dev}:${info.ino}` } : {}),
    };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) return null;
    throw e;
  }
}

/** A table's replacement in a hidden temporary file beside it (engine/fs/atomic_write.ts). */
async function openAtomicOutput(real: string): Promise<AtomicOutput> {
  const out = await openAtomic(real);
  return {
    write: (bytes) => out.write(bytes),
    async patchStart(bytes) {
      await out.file.seek(0, Deno.SeekMode.Start);
      await out.write(bytes);
      await out.file.seek(0, Deno.SeekMode.End);
    },
    async *readFrom(from) {
      await out.file.seek(from, Deno.SeekMode.Start);
      const buf = new Uint8Array(1 << 20);
      for (;;) {
        const n = await out.file.read(buf);
        if (n === null) break;
        yield buf.slice(0, n);
      }
      await out.file.seek(0, Deno.SeekMode.End);
    },
    commit: () => out.commit(),
    abort: () => out.abort(),
  };
}

/** The names in a folder with what they are; hidden temp files of saves and writes are left out. */
export async function listFolder(
  real: string,
): Promise<{ name: string; isFolder: boolean; size: number; modified: number }[]> {
  const out = [];
  for await (const entry of Deno.readDir(real)) {
    if (entry.name.startsWith(".")) continue;
    try {
      const info = await Deno.stat(join(real, entry.name));
      out.push({
        name: entry.name,
        isFolder: info.isDirectory,
        size: info.isDirectory ? 0 : info.size,
        modified: info.mtime?.getTime() ?? 0,
      });
    } catch {
      // A dangling link or an entry removed meanwhile: not listed.
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * In-flight writes per host path. Module-wide on purpose: a file is one per process, so every
 * tree and server instance in the process must queue on the same entry; entries go when idle,
 * so there is nothing to stop at shutdown.
 */
const locks = new Map<string, Promise<unknown>>();

/** Runs `work` alone for `key` (a host path) within this process. */
async function exclusive<T>(key: string, work: () => Promise<T>): Promise<T> {
  const before = locks.get(key) ?? Promise.resolve();
  const run = before.catch(() => {}).then(work);
  locks.set(key, run);
  try {
    return await run;
  } finally {
    if (locks.get(key) === run) locks.delete(key);
  }
}

async function currentEtag(real: string): Promise<string | null> {
  try {
    return await etagOf(await Deno.readFile(real));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/**
 * Writes `bytes` to `real` atomically under the preconditions; creates missing parent folders
 * only when `makeParents`. Returns whether it was created and the new ETag.
 */
export function writeResource(
  real: string,
  bytes: Uint8Array,
  preconditions: Preconditions = {},
): Promise<{ created: boolean; etag: string }> {
  return exclusive(real, async () => {
    const current = await currentEtag(real);
    checkPreconditions(current, preconditions);
    const info = await Deno.stat(dirname(real)).catch(() => null);
    if (!info?.isDirectory) {
      throw new ResourceConflict("not-folder", `the folder of '${basename(real)}' does not exist`);
    }
    await writeFileAtomic(real, bytes);
    return { created: current === null, etag: await etagOf(bytes) };
  });
}

/** Reads a file with its ETag. */
export async function readResource(real: string): Promise<{ bytes: Uint8Array; etag: string }> {
  const bytes = await Deno.readFile(real);
  return { bytes, etag: await etagOf(bytes) };
}

/** Creates a folder; `exists` when something is there already. */
export async function makeFolder(real: string): Promise<void> {
  try {
    await Deno.mkdir(real);
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) {
      throw new ResourceConflict("exists", "something of that name exists already");
    }
    if (e instanceof Deno.errors.NotFound) {
      throw new ResourceConflict("not-folder", "the parent folder does not exist");
    }
    throw e;
  }
}

/** Removes a file, or a folder (only empty unless `recursive`), under the preconditions. */
export function removeResource(
  real: string,
  options: { recursive: boolean; preconditions?: Preconditions },
): Promise<void> {
  return exclusive(real, async () => {
    const info = await Deno.lstat(real);
    if (!info.isDirectory && options.preconditions) {
      checkPreconditions(await currentEtag(real), options.preconditions);
    }
    if (info.isDirectory && !options.recursive) {
      for await (const _ of Deno.readDir(real)) {
        throw new ResourceConflict(
          "not-empty",
          "the folder is not empty (add ?recursive=true to remove it with its content)",
        );
      }
    }
    await Deno.remove(real, { recursive: options.recursive });
  });
}

/** Moves `from` to `to` (which must not exist): one rename, atomic within a file system. */
export function moveResource(from: string, to: string): Promise<void> {
  return exclusive(to, async () => {
    const there = await Deno.lstat(to).then(() => true, () => false);
    if (there) throw new ResourceConflict("exists", "the destination exists already");
    const parent = await Deno.stat(dirname(to)).catch(() => null);
    if (!parent?.isDirectory) {
      throw new ResourceConflict("not-folder", "the destination's folder does not exist");
    }
    await Deno.rename(from, to);
  });
}
