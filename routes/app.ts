/**
 * The HTTP application, built from its dependencies so that tests call `app.request(...)`
 * without a socket and main.ts serves the same app.
 *
 *   GET /healthz          no token
 *   GET /                 the web console (console/), no token for its assets
 *   GET /metrics          Prometheus text; an admin's token unless metrics.public
 *   GET /API/v1.0/openapi.json   no token (routes/contract.ts)
 *   /API/v1.0/...         Bearer token required; one sub-app per resource, mounted below
 */

import { Hono } from "hono";
import type { HomeLayout } from "../home/layout.ts";
import type { Logger } from "../home/log.ts";
import type { ColumnCacheConfig, DatastoreRegistry, ResourceTree } from "../engine/mod.ts";
import type { Settings } from "../home/settings.ts";
import type { UserStore } from "../home/user_store.ts";
import { requireUser } from "./auth.ts";
import type { AppEnv } from "./env.ts";
import { errorHandler, notFoundHandler } from "./errors.ts";
import { healthRoutes } from "./health.ts";
import { requestLog } from "./request_log.ts";
import { whoamiRoutes } from "./whoami.ts";
import type { SupervisorRef } from "../actors/supervisor.ts";
import type { ScanWorkerPool } from "../actors/scan_workers.ts";
import type { ResultQuota } from "../actors/result_quota.ts";
import type { SharedQueries } from "../actors/shared_queries.ts";
import { queryRoutes } from "./queries.ts";
import { syncRoutes } from "./sync.ts";
import { tableRoutes } from "./tables.ts";
import { resourceRoutes } from "./resources.ts";
import { checkRoutes } from "./check.ts";
import { compression } from "./compress.ts";
import { datastoreRoutes } from "./datastores.ts";
import type { DatastoreAdmin } from "../actors/datastore_admin.ts";
import type { ConnectorStatus } from "../actors/connector_pool.ts";
import { queryEventRoutes } from "./query_events.ts";
import { queryListRoutes } from "./query_list.ts";
import { QueryDirectory } from "../actors/query_directory.ts";
import { languageRoutes } from "./language.ts";
import { machineRoutes } from "./machines.ts";
import { patternRoutes } from "./patterns.ts";
import { consoleRoutes } from "./console.ts";
import { filePreviewRoutes } from "./file_preview.ts";
import type { QueryMetrics } from "../actors/query_metrics.ts";
import type { FamilyCounters } from "../actors/connector_pool.ts";
import { metricsRoutes } from "./metrics.ts";
import { openApiDocument } from "./contract.ts";
import { sigmaRoutes } from "./sigma.ts";
import { type DetectionDeps, scheduleRoutes } from "./schedules.ts";

/** Everything the routes need, built in main.ts. */
export interface AppDeps {
  readonly home: HomeLayout;
  readonly settings: Settings;
  readonly users: UserStore;
  readonly tree: ResourceTree;
  readonly log: Logger;
  /** The workers queries' scans run on (query.workers). */
  readonly scanWorkers?: ScanWorkerPool | undefined;
  /** The column cache (cache.enabled, on a host's disk only); absent: none. */
  readonly columnCache?: ColumnCacheConfig | undefined;
  /** Owns every query actor (actors/supervisor.ts); without it the query routes are absent. */
  readonly supervisor?: SupervisorRef;
  readonly datastores?: DatastoreRegistry;
  /** The connector actors' state, for `GET /machines` (admins). */
  readonly connectors?: { status(): readonly ConnectorStatus[] };
  /** Datastore definitions over HTTP; without it /datastores is absent. */
  readonly datastoreAdmin?: DatastoreAdmin;
  /** Each user's share of the results held; without it, no per-user limit. */
  readonly resultQuota?: ResultQuota;
  /** Servers sharing a KV: the registry of queries across them (actors/shared_queries.ts). */
  readonly sharedQueries?: SharedQueries | undefined;
  /** How often a silent events stream gets a comment (routes/query_events.ts; tests). */
  readonly heartbeatMs?: number | undefined;
  /** Scheduled detections and their alerts (routes/schedules.ts); absent: no /schedules. */
  readonly detections?: DetectionDeps | undefined;
  /** What /metrics shows besides the supervisor's gauges. */
  readonly metrics?: {
    readonly queries?: QueryMetrics;
    readonly cloud?: ReadonlyMap<string, FamilyCounters>;
  };
}

export const API_PREFIX = "/API/v1.0";

/** The API's resources, each a sub-app mounted under /API/v1.0. */
function apiRoutes(deps: AppDeps): Hono<AppEnv> {
  const api = new Hono<AppEnv>();
  api.route("/", whoamiRoutes(deps));
  const { supervisor, datastores } = deps;
  if (supervisor && datastores) {
    const directory = new QueryDirectory(supervisor, deps.sharedQueries);
    const queryDeps = {
      ...deps,
      supervisor,
      datastores,
      resultsDir: deps.home.resultsDir,
      directory,
    };
    api.route("/", queryListRoutes(directory));
    api.route("/", queryEventRoutes(queryDeps, { heartbeatMs: deps.heartbeatMs }));
    api.route("/", queryRoutes(queryDeps, deps.log));
    api.route("/", syncRoutes(queryDeps));
    api.route("/", tableRoutes(queryDeps));
    api.route("/", checkRoutes(queryDeps));
    if (deps.detections) {
      api.route(
        "/",
        scheduleRoutes(queryDeps, deps.users, deps.detections, deps.datastoreAdmin),
      );
    }
  }
  if (deps.datastoreAdmin) api.route("/", datastoreRoutes(deps.datastoreAdmin));
  api.route("/", languageRoutes());
  api.route("/", machineRoutes(deps.supervisor, deps.connectors));
  api.route("/", patternRoutes(deps.settings));
  api.route("/", sigmaRoutes(deps.tree));
  api.route("/", filePreviewRoutes(deps.tree));
  const stores = deps.datastoreAdmin;
  api.route(
    "/",
    resourceRoutes({
      tree: deps.tree,
      maxBytes: deps.settings["resource.maxBytes"],
      mayReadStore: stores && (async (user, name) => (await stores.get(user, name)) !== null),
    }),
  );
  return api;
}

export function createApp(deps: AppDeps): Hono<AppEnv> {
  // Not strict: the synchronous `POST /API/v1.0/` is the sub-app's "/" (also without the slash).
  const app = new Hono<AppEnv>({ strict: false });
  if (deps.settings["log.requests"]) app.use(requestLog(deps.log));
  app.use(compression());
  app.route("/", healthRoutes());
  app.route("/", consoleRoutes());
  app.route(
    "/",
    metricsRoutes({
      users: deps.users,
      public: deps.settings["metrics.public"],
      supervisor: deps.supervisor,
      queries: deps.metrics?.queries,
      cloud: deps.metrics?.cloud,
    }),
  );
  // Before the token check: the description needs none.
  let openApi: string | undefined;
  app.get(`${API_PREFIX}/openapi.json`, (c) => {
    openApi ??= JSON.stringify(
      openApiDocument("1.0", { datastoreTypes: deps.datastoreAdmin?.types() ?? [] }),
    );
    return c.body(openApi, 200, { "Content-Type": "application/json; charset=UTF-8" });
  });
  // Also matches the prefix itself (the synchronous `POST /API/v1.0/`).
  app.use(`${API_PREFIX}/*`, requireUser(deps.users));
  app.route(API_PREFIX, apiRoutes(deps));
  app.notFound(notFoundHandler);
  app.onError(errorHandler(deps.log));
  return app;
}
