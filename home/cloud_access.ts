/**
 * What the `cloudapi://` connector reads from the home, as plain functions: where fetched hours
 * go (the home's folder, or the KV several servers share), the text of a store's definition,
 * and the edition. main.ts hands it to the connector.
 */

import { join } from "node:path";
import { type HomeLayout, readTextIfExists } from "./layout.ts";
import { type Edition, LicenseError, readLicense } from "./license.ts";
import { datastoreFiles } from "./datastore_files.ts";
import type { Storage } from "../engine/contracts/storage.ts";

export interface CloudHomeAccess {
  readonly cloudDir: string;
  /** A storage shared by servers (KV): fetched hours go there instead of `cloudDir`. */
  readonly hourStorage?: Storage;
  readonly definitionText: (store: string) => Promise<string | null>;
  readonly edition: () => Promise<Edition>;
}

/**
 * The connector's view of `layout`, its definitions read from `storage` when given (a KV shared
 * by several servers); `store` names are checked by the connector before use.
 */
export function cloudHomeAccess(layout: HomeLayout, storage?: Storage): CloudHomeAccess {
  const folder = join(layout.dataDir, "system", "datastores");
  const definitions = storage === undefined ? undefined : datastoreFiles(layout, storage);
  return {
    cloudDir: layout.cloudApiDir,
    // With the files storage the hours stay host files under cloudDir, as always.
    ...(storage !== undefined && storage.kind !== "files" ? { hourStorage: storage } : {}),
    definitionText: (store) =>
      definitions === undefined
        ? readTextIfExists(join(folder, `${store}.json`))
        : definitions.read(store),
    edition: async () => {
      try {
        return await readLicense(layout);
      } catch (e) {
        // The problem names the file as conf/license, never a host path: safe to show.
        if (e instanceof LicenseError) throw new Error(e.problem);
        throw e;
      }
    },
  };
}
