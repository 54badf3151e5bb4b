/**
 * What the `cloudapi://` connector reads from the home, as plain functions: where fetched hours
 * go, the text of a store's definition, and the edition. main.ts hands it to the connector.
 */

import { join } from "node:path";
import { type HomeLayout, readTextIfExists } from "./layout.ts";
import { type Edition, LicenseError, readLicense } from "./license.ts";

export interface CloudHomeAccess {
  readonly cloudDir: string;
  readonly definitionText: (store: string) => Promise<string | null>;
  readonly edition: () => Promise<Edition>;
}

/** The connector's view of `layout`; `store` names are checked by the connector before use. */
export function cloudHomeAccess(layout: HomeLayout): CloudHomeAccess {
  const folder = join(layout.dataDir, "system", "datastores");
  return {
    cloudDir: layout.cloudApiDir,
    definitionText: (store) => readTextIfExists(join(folder, `${store}.json`)),
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
