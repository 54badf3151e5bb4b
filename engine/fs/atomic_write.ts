/**
 * Writing a file so that readers see either the old or the new content, never a mix, and a
 * crash after the commit loses neither: the bytes go to a hidden temporary file in the same
 * folder, which is synced, renamed over the target (atomic within one folder on POSIX file
 * systems), and then the folder is synced so that the rename itself is durable. Every file the
 * server replaces (stored tables, users.json, cloud log hours and their state) goes through here.
 *
 * The temporary name is `.<name>.tmp-<12 hex digits>`: engine/table/temp_files.ts knows it, so
 * listings skip such files and the start-up sweep removes those a killed process left behind.
 */

import { createHash } from "node:crypto";
import { basename, dirname, join } from "node:path";

/** A replacement of one file being written; nothing is visible under `path` before `commit`. */
export interface AtomicFile {
  /** The file that will be replaced. */
  readonly path: string;
  /** The hidden temporary file the bytes go to. */
  readonly tempPath: string;
  /** The temporary file, open for reading and writing (a writer may seek back and patch). */
  readonly file: Deno.FsFile;
  /** Writes all of `bytes` at the current position. */
  write(bytes: Uint8Array): Promise<void>;
  /** Syncs and closes the temporary file, renames it over `path`, syncs the folder. */
  commit(): Promise<void>;
  /** Closes and removes the temporary file; `path` is untouched. Safe to call more than once. */
  abort(): Promise<void>;
}

export interface AtomicWriteOptions {
  /** Permission bits of the new file (e.g. 0o600 for secrets); the umask applies. */
  readonly mode?: number;
}

/**
 * Bytes of a file's name kept in its temporary name; a longer one is cut and followed by a hash
 * of the whole, so the temporary name stays within the 255 bytes file systems allow.
 */
const TEMP_NAME_BYTES = 160;
const encoder = new TextEncoder();

/** A fresh temporary name beside `path`, in the form the sweep and the listings know. */
export function tempPathFor(path: string): string {
  const random = crypto.getRandomValues(new Uint8Array(6));
  const suffix = Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
  return join(dirname(path), `.${tempStem(basename(path))}.tmp-${suffix}`);
}

function tempStem(name: string): string {
  if (encoder.encode(name).length <= TEMP_NAME_BYTES) return name;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 16);
  // Cut by code points under the byte budget (a UTF-8 character takes up to 4 bytes).
  let stem = "";
  for (const c of name) {
    if (encoder.encode(stem + c).length > TEMP_NAME_BYTES - 17) break;
    stem += c;
  }
  return `${stem}~${hash}`;
}

/**
 * Starts replacing `path`: the caller writes (streaming, as much as it likes), then commits or
 * aborts. On any error of `commit` the temporary file is removed and the error rethrown.
 *
 * @example
 * const out = await openAtomic("/data/t.sxt");
 * try { await out.write(bytes); await out.commit(); } catch (e) { await out.abort(); throw e; }
 */
export async function openAtomic(
  path: string,
  options: AtomicWriteOptions = {},
): Promise<AtomicFile> {
  const tempPath = tempPathFor(path);
  const file = await Deno.open(tempPath, {
    read: true,
    write: true,
    createNew: true,
    ...(options.mode === undefined ? {} : { mode: options.mode }),
  });
  let state: "open" | "committed" | "aborted" = "open";

  async function abort(): Promise<void> {
    if (state !== "open") return;
    state = "aborted";
    try {
      file.close();
    } catch { /* closed by a failed commit */ }
    await Deno.remove(tempPath).catch(() => {});
  }

  return {
    path,
    tempPath,
    file,
    async write(bytes) {
      if (state !== "open") throw new Error(`the replacement of ${path} is ${state}`);
      let off = 0;
      while (off < bytes.length) off += await file.write(bytes.subarray(off));
    },
    async commit() {
      if (state !== "open") throw new Error(`the replacement of ${path} is ${state}`);
      try {
        await file.sync();
        file.close();
        await Deno.rename(tempPath, path);
      } catch (e) {
        await abort();
        throw e;
      }
      state = "committed";
      await syncFolder(dirname(path));
    },
    abort,
  };
}

/** Replaces `path` with `data` (text is written as UTF-8), atomically and durably. */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const out = await openAtomic(path, options);
  try {
    await out.write(typeof data === "string" ? new TextEncoder().encode(data) : data);
    await out.commit();
  } catch (e) {
    await out.abort();
    throw e;
  }
}

/**
 * Makes the renames in `dir` durable. Not every platform can open a folder (Windows cannot);
 * there the rename is as durable as the platform makes it, which is not an error.
 */
export async function syncFolder(dir: string): Promise<void> {
  let folder: Deno.FsFile;
  try {
    folder = await Deno.open(dir, { read: true });
  } catch {
    return;
  }
  try {
    await folder.sync();
  } finally {
    folder.close();
  }
}
