/**
 * The FILE datastore kind (connectors/datastore_kind.ts): `file://<store>/...` reads a host
 * folder an admin named (file_store_definition.ts). It has no secret, so nothing to bind.
 */

import type { DatastoreKind } from "../datastore_kind.ts";
import type { ResourceTree } from "../../engine/contracts/resource_tree.ts";
import { parseFileStoreDefinition } from "./file_store_definition.ts";
import { fileStoreFactory } from "./registry.ts";

export function fileKind(
  tree: ResourceTree,
  /** Where definitions are read instead of the tree (a shared KV), as in createDatastoreRegistry. */
  definitionText?: (store: string) => Promise<string | null>,
  /** Files of this host no FILE store reads or lists (the KV's files), as in the registry. */
  hiddenHostPaths: readonly string[] = [],
): DatastoreKind {
  return {
    type: "FILE",
    scheme: "file",
    storeKey: "fileStore",
    description: "a folder of the server's host: file://<store>/<path>",
    secretKeys: [],
    boundKeys: [],
    check(name, json) {
      const parsed = parseFileStoreDefinition(name, json);
      return parsed.ok
        ? { ok: true, families: [], logs: [] }
        : { ok: false, problems: [parsed.problem] };
    },
    factory: fileStoreFactory(tree, definitionText, hiddenHostPaths),
  };
}
