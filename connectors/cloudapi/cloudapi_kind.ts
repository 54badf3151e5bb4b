/**
 * The CLOUDAPI datastore kind (connectors/datastore_kind.ts): `cloudapi://<store>/...` reads the
 * audit logs of a cloud tenant (definition.ts, cloudapi_datastore.ts), with a connection test
 * (connection_check.ts). Its client secret is bound to the tenant, the application (client) and
 * the plan, which picks the login host a token is asked of.
 */

import type { DatastoreKind } from "../datastore_kind.ts";
import { parseDefinition } from "./definition.ts";
import { type CloudApiDeps, cloudApiFactory } from "./cloudapi_datastore.ts";
import { checkConnection } from "./connection_check.ts";

/** The log id of each family, as listings name a store's logs (`directory_service/audits`). */
const LOG_IDS: Readonly<Record<string, string>> = {
  directory: "directory_service",
  activity: "cloud_activity",
  suite: "productivity_suite",
};

export function cloudApiKind(deps: CloudApiDeps): DatastoreKind {
  const { settings } = deps;
  const testDeps = {
    tokens: deps.tokens,
    hosts: settings,
    publisher: settings?.publisherIdentifier,
  };
  return {
    type: "CLOUDAPI",
    scheme: "cloudapi",
    storeKey: "cloudapiStore",
    description: "audit logs of a cloud tenant, fetched by the hour: cloudapi://<store>/<path>",
    secretKeys: ["secret"],
    boundKeys: ["tenantId", "clientId", "suitePlan"],
    check(name, json) {
      const parsed = parseDefinition(name, json);
      if (!parsed.ok) return parsed;
      const def = parsed.definition;
      return {
        ok: true,
        families: [...new Set(def.logs.map((l) => l.family))],
        logs: def.logs.map((l) => `${LOG_IDS[l.family]}/${l.uriName}`),
        test: () => checkConnection(def, testDeps),
      };
    },
    factory: cloudApiFactory(deps),
  };
}
