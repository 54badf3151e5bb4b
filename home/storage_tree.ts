/**
 * The resource tree in the storage (engine/contracts/storage.ts), for servers that share a Deno KV and for
 * the edge entry, which have no folder of their own. Paths resolve and rights hold exactly as in
 * the files tree (home/resource_tree.ts); a location is the canonical path.
 *
 * Keys:
 *
 *   ["data", ...segments]   a file's bytes (a stored table is one value: the KV backend chunks it
 *                           and switches it in one commit, so a reader never sees half a table)
 *   ["meta", ...segments]   what is there: `{"folder": true, "modified"}` for a folder,
 *                           `{"size", "modified"}` for a file (written in the same commit)
 *
 * The datastore definitions (`data/system/datastores/<name>.json`, home/datastore_files.ts) are
 * the same keys: they are files of this tree without a "meta" key, and `/system/datastores` is
 * a folder because keys are below it. A file's ETag is a hash of its storage version, so an
 * `If-Match` write is a compare-and-swap: of two writers with the same ETag one wins and the
 * other gets a conflict, across every server on the KV. There are no symbolic links. Removing
 * or moving a folder goes file by file (each file atomically, the folder as a whole not).
 */

import { createHash } from "node:crypto";
import type { User } from "../engine/contracts/user.ts";
import type {
  AtomicOutput,
  Preconditions,
  ResolvedPath,
  ResourceTree,
  Right,
  TreeEntry,
  TreeFileInfo,
} from "../engine/contracts/resource_tree.ts";
import { ResourceConflict } from "../engine/contracts/resource_tree.ts";
import { PathError, refuse } from "../engine/contracts/resource_path.ts";
import {
  type CommitEntry,
  MAX_COMMIT_KEYS,
  type Storage,
  type StorageKey,
} from "../engine/contracts/storage.ts";
import { type Grant, may } from "./rights.ts";
import { TREE_ROOTS } from "./layout.ts";
import { canonicalSegments } from "./resource_tree.ts";
import { checkPreconditions } from "./resource_files.ts";

const DATA = "data";
const META = "meta";

interface Meta {
  readonly folder?: boolean;
  readonly size?: number;
  readonly modified: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The ETag of a storage version: its hash, so no versionstamp is shown. */
function etagOfVersion(version: string): string {
  return `"${createHash("sha256").update(version).digest("base64url").slice(0, 27)}"`;
}

function segmentsOf(real: string): string[] {
  return real.split("/").filter((s) => s !== "");
}

function nameOf(real: string): string {
  return segmentsOf(real).at(-1) ?? "/";
}

function parentOf(real: string): string {
  const segments = segmentsOf(real);
  return "/" + segments.slice(0, -1).join("/");
}

export class StorageResourceTree implements ResourceTree {
  readonly hostFiles = false;
  readonly root: string;

  /** `rights` supplies the grants (of conf/rights.json, or a fixed list in tests). */
  constructor(
    private readonly storage: Storage,
    private readonly rights: { grants(): readonly Grant[] } = { grants: () => [] },
  ) {
    this.root = `${storage.kind}:${DATA}`;
  }

  /** Makes the top folders (/users, /shared, /system) where they are not yet. */
  async ensureRoots(): Promise<void> {
    for (const root of TREE_ROOTS) await this.ensureFolder([root]);
  }

  /** Makes the folder (and its parents) unless it exists: a user's folder on first use. */
  async ensureFolder(segments: readonly string[]): Promise<void> {
    for (let i = 1; i <= segments.length; i++) {
      const real = "/" + segments.slice(0, i).join("/");
      const info = await this.stat(real);
      if (info?.isFolder) continue;
      if (info) throw new ResourceConflict("exists", `${real} is a file, not a folder`);
      await this.#putMeta(real, { folder: true, modified: Date.now() }, null);
    }
  }

  resolve(user: User, path: string, workDir?: string): ResolvedPath {
    const segments = canonicalSegments(user, path, workDir);
    // The storage keeps no names starting with '.' (engine/contracts/storage.ts checkKey).
    const hidden = segments.find((s) => s.startsWith("."));
    if (hidden !== undefined) refuse(path, `a name may not start with '.' ('${hidden}')`);
    const canonical = "/" + segments.join("/");
    return { canonical, real: canonical, user };
  }

  may(user: User, right: Right, canonical: string): boolean {
    return may(user, right, canonical, this.rights.grants());
  }

  async realPath(resolved: ResolvedPath, right?: Right): Promise<string> {
    const user = resolved.user;
    if (user !== undefined && right && !this.may(user, right, resolved.canonical)) {
      throw new PathError(`path '${resolved.canonical}' is refused: you lack the ${right} right`);
    }
    return (await this.realTarget(resolved)).real;
  }

  async realTarget(resolved: ResolvedPath): Promise<ResolvedPath> {
    if ((await this.stat(resolved.real)) === null) {
      throw new Deno.errors.NotFound(`${resolved.canonical} does not exist`);
    }
    return { canonical: resolved.canonical, real: resolved.real };
  }

  child(folder: string, name: string): string {
    return folder === "/" ? `/${name}` : `${folder.replace(/\/$/, "")}/${name}`;
  }

  async stat(real: string): Promise<TreeFileInfo | null> {
    const segments = segmentsOf(real);
    if (segments.length === 0) return { isFolder: true, size: 0, modified: 0 };
    const meta = await this.#meta(segments);
    if (meta) {
      return meta.folder
        ? { isFolder: true, size: 0, modified: meta.modified }
        : { isFolder: false, size: meta.size ?? 0, modified: meta.modified };
    }
    // A file written beside the tree (a datastore definition), or a folder only implied by
    // the keys below it.
    const stored = await this.storage.get([DATA, ...segments]);
    if (stored) return { isFolder: false, size: stored.value.length, modified: 0 };
    if (await this.#hasKeysUnder(segments)) return { isFolder: true, size: 0, modified: 0 };
    return null;
  }

  async list(real: string): Promise<TreeEntry[]> {
    const segments = segmentsOf(real);
    const info = await this.stat(real);
    if (!info) throw new Deno.errors.NotFound(`${real} does not exist`);
    if (!info.isFolder) throw new Deno.errors.NotADirectory(`${real} is not a folder`);
    const entries = new Map<string, TreeEntry>();
    const depth = segments.length + 1;
    for await (const key of this.storage.list([META, ...segments])) {
      const name = key[depth]!;
      if (key.length === depth + 1) {
        const meta = await this.#meta(key.slice(1));
        if (!meta) continue; // removed meanwhile
        entries.set(name, {
          name,
          isFolder: meta.folder ?? false,
          size: meta.folder ? 0 : meta.size ?? 0,
          modified: meta.modified,
        });
      } else if (!entries.has(name)) {
        entries.set(name, { name, isFolder: true, size: 0, modified: 0 });
      }
    }
    for await (const key of this.storage.list([DATA, ...segments])) {
      const name = key[depth]!;
      const known = entries.get(name);
      if (known && (known.modified !== 0 || known.isFolder)) continue;
      if (key.length === depth + 1) {
        // A file without a meta key: its size is its value's.
        const stored = await this.storage.get(key);
        if (stored) {
          entries.set(name, { name, isFolder: false, size: stored.value.length, modified: 0 });
        }
      } else if (!known) {
        entries.set(name, { name, isFolder: true, size: 0, modified: 0 });
      }
    }
    return [...entries.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  async read(real: string): Promise<{ bytes: Uint8Array; etag: string }> {
    const stored = await this.storage.get([DATA, ...segmentsOf(real)]);
    if (!stored) throw new Deno.errors.NotFound(`${real} does not exist`);
    return { bytes: stored.value, etag: etagOfVersion(stored.version) };
  }

  async open(real: string, signal: AbortSignal, from = 0): Promise<ReadableStream<Uint8Array>> {
    const stored = await this.storage.stream([DATA, ...segmentsOf(real)], from);
    if (!stored) throw new Deno.errors.NotFound(`${real} does not exist`);
    // A piece at a time from the storage (a KV chunk is 60 kB): a log of gigabytes is never whole
    // in memory, and a scan worker reads from its share's start, not from the file's.
    const pieces = stored.pieces[Symbol.asyncIterator]();
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (signal.aborted) {
          controller.error(signal.reason ?? new DOMException("cancelled", "AbortError"));
          await pieces.return?.();
          return;
        }
        const next = await pieces.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel() {
        await pieces.return?.();
      },
    }, { highWaterMark: 0 });
  }

  async write(
    real: string,
    bytes: Uint8Array,
    preconditions: Preconditions = {},
  ): Promise<{ created: boolean; etag: string }> {
    const segments = segmentsOf(real);
    const meta = await this.#meta(segments);
    if (meta?.folder) throw new ResourceConflict("exists", "a folder of that name exists");
    const current = await this.storage.version([DATA, ...segments]);
    checkPreconditions(current === null ? null : etagOfVersion(current), preconditions);
    const parent = await this.stat(parentOf(real));
    if (!parent?.isFolder) {
      throw new ResourceConflict("not-folder", `the folder of '${nameOf(real)}' does not exist`);
    }
    const guarded = preconditions.ifMatch !== undefined || preconditions.ifNoneMatch !== undefined;
    const result = await this.storage.commit([
      { key: [DATA, ...segments], value: bytes, ...(guarded ? { expectedVersion: current } : {}) },
      { key: [META, ...segments], value: metaBytes({ size: bytes.length, modified: Date.now() }) },
    ]);
    if (!result.ok) {
      throw new ResourceConflict(
        "precondition",
        "the resource has changed since it was read (If-Match does not match its ETag)",
      );
    }
    return { created: current === null, etag: etagOfVersion(result.version!) };
  }

  // deno-lint-ignore require-await
  async openAtomic(real: string): Promise<AtomicOutput> {
    let parts: Uint8Array[] = [];
    let state: "open" | "committed" | "aborted" = "open";
    const whole = () => {
      if (parts.length === 1) return parts[0]!;
      const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) {
        out.set(p, at);
        at += p.length;
      }
      parts = [out];
      return out;
    };
    const open = () => {
      if (state !== "open") throw new Error(`the replacement of ${real} is ${state}`);
    };
    return {
      // deno-lint-ignore require-await
      async write(bytes) {
        open();
        parts.push(bytes.slice());
      },
      // deno-lint-ignore require-await
      async patchStart(bytes) {
        open();
        whole().set(bytes, 0);
      },
      async *readFrom(from) {
        yield whole().slice(from);
      },
      commit: async () => {
        open();
        await this.write(real, whole());
        state = "committed";
        parts = [];
      },
      // deno-lint-ignore require-await
      abort: async () => {
        if (state === "open") state = "aborted";
        parts = [];
      },
    };
  }

  async mkdir(real: string): Promise<void> {
    if ((await this.stat(real)) !== null) {
      throw new ResourceConflict("exists", "something of that name exists already");
    }
    const parent = await this.stat(parentOf(real));
    if (!parent?.isFolder) {
      throw new ResourceConflict("not-folder", "the parent folder does not exist");
    }
    const ok = await this.#putMeta(real, { folder: true, modified: Date.now() }, null);
    if (!ok) throw new ResourceConflict("exists", "something of that name exists already");
  }

  async remove(
    real: string,
    options: { recursive: boolean; preconditions?: Preconditions },
  ): Promise<void> {
    const segments = segmentsOf(real);
    const info = await this.stat(real);
    if (!info) throw new Deno.errors.NotFound(`${real} does not exist`);
    if (!info.isFolder) {
      const version = await this.storage.version([DATA, ...segments]);
      if (options.preconditions) {
        checkPreconditions(version === null ? null : etagOfVersion(version), options.preconditions);
      }
      const result = await this.storage.commit([
        { key: [DATA, ...segments], value: null, expectedVersion: version },
        { key: [META, ...segments], value: null },
      ]);
      if (!result.ok) {
        throw new ResourceConflict("precondition", "the resource has changed meanwhile");
      }
      return;
    }
    if (segments.length === 0) throw new ResourceConflict("not-empty", "the root stays");
    if (!options.recursive && await this.#hasKeysUnder(segments)) {
      throw new ResourceConflict(
        "not-empty",
        "the folder is not empty (add ?recursive=true to remove it with its content)",
      );
    }
    const keys: StorageKey[] = [];
    for (const prefix of [DATA, META]) {
      for await (const key of this.storage.list([prefix, ...segments])) keys.push(key);
    }
    keys.push([META, ...segments]);
    await this.#deleteAll(keys);
  }

  async move(from: string, to: string): Promise<void> {
    if ((await this.stat(to)) !== null) {
      throw new ResourceConflict("exists", "the destination exists already");
    }
    const parent = await this.stat(parentOf(to));
    if (!parent?.isFolder) {
      throw new ResourceConflict("not-folder", "the destination's folder does not exist");
    }
    const info = await this.stat(from);
    if (!info) throw new Deno.errors.NotFound(`${from} does not exist`);
    const source = segmentsOf(from);
    const target = segmentsOf(to);
    if (!info.isFolder) return await this.#moveFile(source, target);
    // A folder: its folders first, then each file in one commit, then the old folders.
    const folders: StorageKey[] = [[META, ...source]];
    const files: string[][] = [];
    for await (const key of this.storage.list([META, ...source])) {
      const meta = await this.#meta(key.slice(1));
      if (meta?.folder) folders.push(key);
    }
    for await (const key of this.storage.list([DATA, ...source])) files.push(key.slice(1));
    for (const key of folders) {
      const rest = key.slice(1 + source.length);
      await this.#putMeta("/" + [...target, ...rest].join("/"), {
        folder: true,
        modified: Date.now(),
      });
    }
    for (const file of files) await this.#moveFile(file, [...target, ...file.slice(source.length)]);
    await this.#deleteAll(folders.reverse());
  }

  async #moveFile(from: readonly string[], to: readonly string[]): Promise<void> {
    const stored = await this.storage.get([DATA, ...from]);
    if (!stored) throw new Deno.errors.NotFound(`/${from.join("/")} does not exist`);
    const meta = await this.#meta(from);
    const entries: CommitEntry[] = [
      { key: [DATA, ...to], value: stored.value, expectedVersion: null },
      {
        key: [META, ...to],
        value: metaBytes({ size: stored.value.length, modified: meta?.modified ?? Date.now() }),
      },
      { key: [DATA, ...from], value: null, expectedVersion: stored.version },
      { key: [META, ...from], value: null },
    ];
    const result = await this.storage.commit(entries);
    if (!result.ok) {
      throw new ResourceConflict("exists", "the destination or the source changed meanwhile");
    }
  }

  async #meta(segments: readonly string[]): Promise<Meta | null> {
    const stored = await this.storage.get([META, ...segments]);
    if (!stored) return null;
    try {
      return JSON.parse(decoder.decode(stored.value)) as Meta;
    } catch {
      return null;
    }
  }

  /** Writes a folder's meta key; with `expected` null only where none is. False on conflict. */
  async #putMeta(real: string, meta: Meta, expected?: null): Promise<boolean> {
    const result = await this.storage.put(
      [META, ...segmentsOf(real)],
      metaBytes(meta),
      expected === null ? { expectedVersion: null } : {},
    );
    return result.ok;
  }

  async #hasKeysUnder(segments: readonly string[]): Promise<boolean> {
    for (const prefix of [META, DATA]) {
      for await (const _ of this.storage.list([prefix, ...segments])) return true;
    }
    return false;
  }

  async #deleteAll(keys: readonly StorageKey[]): Promise<void> {
    for (let i = 0; i < keys.length; i += MAX_COMMIT_KEYS) {
      await this.storage.commit(
        keys.slice(i, i + MAX_COMMIT_KEYS).map((key) => ({ key, value: null })),
      );
    }
  }
}

function metaBytes(meta: Meta): Uint8Array {
  return encoder.encode(JSON.stringify(meta));
}
