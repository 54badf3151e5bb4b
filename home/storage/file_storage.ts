/**
 * The files backend of engine/contracts/storage.ts, the default: a key is a path under a root folder (the
 * home), so `["conf", "users.json"]` is `<home>/conf/users.json` as it always was. Each value is
 * replaced atomically (engine/fs/atomic_write.ts); the version is the file's identity (inode,
 * size, mtime, ctime: a rename makes a new inode), so a change made by another process (the CLI)
 * is seen. Compare-and-swap and commits are serialized within this process; across processes the
 * files backend is for one server (several servers share a KV instead). A commit checks every
 * expected version before it writes anything, then replaces the files one by one: a crash in the
 * middle can leave some written (each of them whole).
 */

import { dirname, join } from "node:path";
import {
  checkCommit,
  checkKey,
  type CommitEntry,
  showKey,
  type Storage,
  StorageError,
  type StorageKey,
  type StoredStream,
  type StoredValue,
  type WriteOptions,
  type WriteResult,
} from "../../engine/contracts/storage.ts";
import { writeFileAtomic } from "../../engine/fs/atomic_write.ts";
import { fileVersionSync, versionOf } from "../file_version.ts";

const MISSING = "missing";

/** The StorageError for a failure of the file system, naming what was being done. */
/** The bytes of an open file to its end; the file is closed at the end, on failure and on return. */
async function* piecesOf(file: Deno.FsFile, doing: string): AsyncGenerator<Uint8Array> {
  try {
    for await (const piece of file.readable) yield piece;
  } catch (e) {
    throw fsFailure(e, doing);
  } finally {
    try {
      file.close();
    } catch { /* closed with its readable */ }
  }
}

function fsFailure(e: unknown, doing: string): unknown {
  if (e instanceof StorageError || !(e instanceof Error)) return e;
  const code = (e as { code?: unknown }).code;
  const why = code === "ENOSPC"
    ? "no space left on the device"
    : code === "EDQUOT"
    ? "the disk quota is exhausted"
    : code === "EROFS"
    ? "the file system is read-only"
    : e instanceof Deno.errors.PermissionDenied
    ? "permission denied"
    : undefined;
  return why === undefined ? e : new StorageError(`${doing}: ${why}`, { cause: e });
}

export class FileStorage implements Storage {
  readonly kind = "files";
  /** Writes of this process, one after the other (a compare-and-swap is a check, then a write). */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(readonly root: string) {}

  #path(key: StorageKey): string {
    checkKey(key);
    return join(this.root, ...key);
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => {});
    return run;
  }

  #current(key: StorageKey): string | null {
    const version = fileVersionSync(this.#path(key));
    return version === MISSING ? null : version;
  }

  version(key: StorageKey): Promise<string | null> {
    // Synchronous stat: some 4 µs where the asynchronous one costs ~50 µs of thread-pool trip.
    try {
      return Promise.resolve(this.#current(key));
    } catch (e) {
      return Promise.reject(fsFailure(e, `reading ${showKey(key)}`));
    }
  }

  async get(key: StorageKey): Promise<StoredValue | null> {
    const path = this.#path(key);
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, { read: true });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw fsFailure(e, `reading ${showKey(key)}`);
    }
    try {
      // The version of the file opened, so value and version belong together.
      const info = await file.stat();
      if (!info.isFile) throw new StorageError(`${showKey(key)} is a folder, not a value`);
      const value = new Uint8Array(await new Response(file.readable).arrayBuffer());
      return { value, version: versionOf(info) };
    } catch (e) {
      throw fsFailure(e, `reading ${showKey(key)}`);
    }
  }

  async stream(key: StorageKey, from = 0): Promise<StoredStream | null> {
    checkKey(key);
    const doing = `reading ${showKey(key)}`;
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.#path(key), { read: true });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw fsFailure(e, doing);
    }
    try {
      // A writer replaces the file by a rename: the one opened stays whole to the end.
      const info = await file.stat();
      if (!info.isFile) throw new StorageError(`${showKey(key)} is a folder, not a value`);
      if (from > 0) await file.seek(from, Deno.SeekMode.Start);
      return { size: info.size, version: versionOf(info), pieces: piecesOf(file, doing) };
    } catch (e) {
      file.close();
      throw fsFailure(e, doing);
    }
  }

  put(key: StorageKey, value: Uint8Array, options: WriteOptions = {}): Promise<WriteResult> {
    return this.commit([{ key, value, expectedVersion: options.expectedVersion }]);
  }

  delete(
    key: StorageKey,
    options: Pick<WriteOptions, "expectedVersion"> = {},
  ): Promise<WriteResult> {
    return this.commit([{ key, value: null, expectedVersion: options.expectedVersion }]);
  }

  async *list(prefix: StorageKey): AsyncIterable<StorageKey> {
    checkKey(prefix, true);
    yield* this.#walk(join(this.root, ...prefix), prefix);
  }

  async *#walk(dir: string, prefix: StorageKey): AsyncIterable<StorageKey> {
    const entries: Deno.DirEntry[] = [];
    try {
      for await (const entry of Deno.readDir(dir)) entries.push(entry);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) return;
      throw fsFailure(e, `listing ${showKey(prefix)}`);
    }
    // Hidden names are temporary files of atomic writes, never values.
    const names = entries.filter((e) => !e.name.startsWith(".")).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    );
    for (const entry of names) {
      const key = [...prefix, entry.name];
      if (entry.isDirectory) yield* this.#walk(join(dir, entry.name), key);
      else if (entry.isFile) yield key;
    }
  }

  async commit(entries: readonly CommitEntry[]): Promise<WriteResult> {
    checkCommit(entries);
    return await this.#exclusive(async () => {
      for (const entry of entries) {
        if (entry.expectedVersion === undefined) continue;
        if (this.#current(entry.key) !== entry.expectedVersion) {
          return { ok: false, conflict: entry.key };
        }
      }
      let version: string | null = null;
      for (const { key, value } of entries) {
        const path = this.#path(key);
        try {
          if (value === null) {
            await Deno.remove(path).catch((e) => {
              if (!(e instanceof Deno.errors.NotFound)) throw e;
            });
            version = null;
          } else {
            await Deno.mkdir(dirname(path), { recursive: true });
            await writeFileAtomic(path, value, { mode: 0o600 });
            version = this.#current(key);
          }
        } catch (e) {
          throw fsFailure(e, `writing ${showKey(key)}`);
        }
      }
      // One key: its new version; several: the last one's (callers of commit re-read).
      return { ok: true, version };
    });
  }

  close(): void {}
}
