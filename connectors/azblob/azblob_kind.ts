/**
 * The AZBLOB datastore kind (connectors/datastore_kind.ts): `azblob://<store>/...` reads blobs
 * of an Azure storage account in place (definition.ts, azblob_datastore.ts). Its account key or
 * SAS token is bound to the endpoint and the account it was given for.
 */

import type { DatastoreKind } from "../datastore_kind.ts";
import { AZBLOB_SECRET_KEYS, parseAzblobDefinition } from "./definition.ts";
import { type AzblobDeps, azblobFactory } from "./azblob_datastore.ts";

export function azblobKind(deps: AzblobDeps): DatastoreKind {
  return {
    type: "AZBLOB",
    scheme: "azblob",
    storeKey: "azblobStore",
    description: "blobs of an Azure storage account: azblob://<store>/<container>/<path>",
    secretKeys: AZBLOB_SECRET_KEYS,
    boundKeys: ["endpoint", "accountName"],
    check(name, json) {
      const parsed = parseAzblobDefinition(name, json);
      return parsed.ok ? { ok: true, families: [], logs: [] } : parsed;
    },
    factory: azblobFactory(deps),
  };
}
