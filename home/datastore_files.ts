/**
 * The datastore definitions of the home: `<home>/data/system/datastores/<name>.json` with the
 * files storage, the same key in a KV (engine/contracts/storage.ts) when several servers share one. Names
 * are checked here before they become keys; every write replaces a definition whole.
 */

import { createHash } from "node:crypto";
import type { HomeLayout } from "./layout.ts";
import type { Storage, StorageKey } from "../engine/contracts/storage.ts";
import { FileStorage } from "./storage/file_storage.ts";

/** Store names: letters, digits, `_`, `-`, `.` inside; 1 to 64 of them. */
export const STORE_NAME = /^[A-Za-z0-9_-](?:[A-Za-z0-9_.-]{0,62}[A-Za-z0-9_-])?$/;

/** Where the definitions are, as a storage key (under the home's root). */
export const DATASTORES_KEY: StorageKey = ["data", "system", "datastores"];

/** A definition's text and its ETag (a quoted hash of its storage version). */
export interface VersionedDefinition {
  readonly text: string;
  readonly etag: string;
}

export interface DatastoreFiles {
  /** The names of the stored definitions, sorted. */
  names(): Promise<string[]>;
  /** A definition's text; null when there is none. */
  read(name: string): Promise<string | null>;
  /** A definition's text with its ETag; null when there is none. */
  readVersioned(name: string): Promise<VersionedDefinition | null>;
  /**
   * Writes a definition; with `expected`, only over the definition of that ETag (`null`: only
   * where there is none). Returns the new ETag, or null when `expected` did not hold.
   */
  write(name: string, text: string, expected?: string | null): Promise<string | null>;
  /** False when there was none. */
  remove(name: string): Promise<boolean>;
}

/** The ETag of a storage version: its hash, so no inode or versionstamp is shown. */
function etagOf(version: string): string {
  return `"${createHash("sha256").update(version).digest("base64url").slice(0, 22)}"`;
}

/** The definitions of `layout` in `storage` (the home's files unless another is given). */
export function datastoreFiles(
  layout: HomeLayout,
  storage: Storage = new FileStorage(layout.dir),
): DatastoreFiles {
  const key = (name: string) => {
    if (!STORE_NAME.test(name)) throw new Error(`'${name}' is not a datastore name`);
    return [...DATASTORES_KEY, `${name}.json`];
  };
  return {
    async names() {
      const names: string[] = [];
      for await (const found of storage.list(DATASTORES_KEY)) {
        if (found.length !== DATASTORES_KEY.length + 1) continue;
        const file = found.at(-1)!;
        const name = file.slice(0, -".json".length);
        if (file.endsWith(".json") && STORE_NAME.test(name)) names.push(name);
      }
      return names.sort();
    },
    async read(name) {
      const stored = await storage.get(key(name));
      return stored === null ? null : new TextDecoder().decode(stored.value);
    },
    async readVersioned(name) {
      const stored = await storage.get(key(name));
      if (stored === null) return null;
      return { text: new TextDecoder().decode(stored.value), etag: etagOf(stored.version) };
    },
    async write(name, text, expected) {
      let expectedVersion: string | null | undefined = undefined;
      if (expected !== undefined) {
        const current = await storage.version(key(name));
        if (
          expected === null ? current !== null : current === null || etagOf(current) !== expected
        ) {
          return null;
        }
        expectedVersion = current;
      }
      const written = await storage.put(key(name), new TextEncoder().encode(text), {
        expectedVersion,
      });
      return written.ok && written.version !== null ? etagOf(written.version) : null;
    },
    async remove(name) {
      const k = key(name);
      if ((await storage.version(k)) === null) return false;
      await storage.delete(k);
      return true;
    },
  };
}
