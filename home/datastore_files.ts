/**
 * The datastore definitions of the home: `<home>/data/system/datastores/<name>.json`. Names are
 * checked here before they become file names; writes are atomic.
 */

import { join } from "node:path";
import { type HomeLayout, readTextIfExists } from "./layout.ts";
import { writeFileAtomic } from "../engine/fs/atomic_write.ts";

/** Store names: letters, digits, `_`, `-`, `.` inside; 1 to 64 of them. */
export const STORE_NAME = /^[A-Za-z0-9_-](?:[A-Za-z0-9_.-]{0,62}[A-Za-z0-9_-])?$/;

export interface DatastoreFiles {
  /** The names of the stored definitions, sorted. */
  names(): Promise<string[]>;
  /** A definition's text; null when there is none. */
  read(name: string): Promise<string | null>;
  write(name: string, text: string): Promise<void>;
  /** False when there was none. */
  remove(name: string): Promise<boolean>;
}

export function datastoreFiles(layout: HomeLayout): DatastoreFiles {
  const folder = join(layout.dataDir, "system", "datastores");
  const file = (name: string) => {
    if (!STORE_NAME.test(name)) throw new Error(`'${name}' is not a datastore name`);
    return join(folder, `${name}.json`);
  };
  return {
    async names() {
      const names: string[] = [];
      try {
        for await (const entry of Deno.readDir(folder)) {
          const name = entry.name.slice(0, -".json".length);
          if (entry.isFile && entry.name.endsWith(".json") && STORE_NAME.test(name)) {
            names.push(name);
          }
        }
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      return names.sort();
    },
    read: (name) => readTextIfExists(file(name)),
    async write(name, text) {
      await Deno.mkdir(folder, { recursive: true });
      await writeFileAtomic(file(name), text, { mode: 0o600 });
    },
    async remove(name) {
      try {
        await Deno.remove(file(name));
        return true;
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return false;
        throw e;
      }
    },
  };
}
