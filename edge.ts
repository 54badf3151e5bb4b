/**
 * The edge entry: Trawl as `export default { fetch }` for `deno serve` and edge platforms, with
 * all of its state in a Deno KV and nothing on a file system of its own (docs/deployment.md,
 * "3. The edge entry"):
 *
 *   TRAWL_STORAGE=kv:/srv/trawl/state.kv TRAWL_BOOTSTRAP_TOKEN=trawl_... \
 *     deno serve --unstable-kv --allow-net --allow-env \
 *       --allow-read=/srv/trawl --allow-write=/srv/trawl --port 8388 edge.ts
 *
 * Configuration comes from the environment only:
 *
 * - `TRAWL_STORAGE`: `kv:<path of a KV file>` or `kv:<https URL of a remote KV>` (required);
 * - `TRAWL_BOOTSTRAP_TOKEN`: the token of the admin `admin`, created on the first start, when the
 *   KV has no users (no console shows a printed token here); ignored once there are users;
 * - `TRAWL_SET_<key>`: a setting, as `--set <key>=<value>` would give it. A dot in the key may be
 *   written as `__` for platforms whose variable names take no dots: `TRAWL_SET_query__maxRunning=4`
 *   and `TRAWL_SET_query.maxRunning=4` are the same;
 * - `TRAWL_LICENSE`: the text of a licence file (the edition of the cloud connector; community
 *   without it).
 *
 * What differs from `main.ts serve`: the resource tree, rights, users and datastore definitions are
 * in the KV (as for several servers on one KV); results stay in memory (`query.resultMemoryBytes`
 * is raised to `query.maxResultBytesPerUser`, itself 256 MiB unless set, and
 * `query.resultMemoryTotalBytes` to 4096 TiB, so no result spills to a disk: the per-user quota
 * bounds them); no scan workers; no subprocess. FILE datastores name host folders,
 * which an edge process may not read: their queries fail with the permission error.
 */

import { buildDeps, storagePlace } from "./main.ts";
import { createApp } from "./routes/app.ts";
import { createLogger, type Logger } from "./home/log.ts";
import { type Storage, StorageError } from "./engine/contracts/storage.ts";
import { homeLayout } from "./home/layout.ts";
import { loadSettings, type SettingKey, type Settings } from "./home/settings.ts";
import { parseLicense } from "./home/license.ts";
import { openStorage, parseStorageSetting, STORAGE_FORM } from "./home/storage/open_storage.ts";
import { KvStorage } from "./home/storage/kv_storage.ts";
import { TOKEN_PATTERN } from "./home/tokens.ts";

/** `query.maxResultBytesPerUser` on the edge unless set (a server's default is 1 GiB). */
export const EDGE_RESULT_BYTES = "256 MiB";
/** The edge's pool for all results in memory: none in effect (a spill would need a disk). */
const EDGE_NO_POOL = "4096 TiB";

/** The prefix of settings given in the environment. */
export const SETTING_PREFIX = "TRAWL_SET_";

/** Thrown for an environment the edge entry cannot start with; the message says what to set. */
export class EdgeConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EdgeConfigError";
  }
}

/** The settings `TRAWL_SET_<key>` variables give, keys with `__` read as dots. */
export function settingsFromEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(SETTING_PREFIX) || name.length === SETTING_PREFIX.length) continue;
    out[name.slice(SETTING_PREFIX.length).replaceAll("__", ".")] = value;
  }
  return out;
}

/** Builds the app from the environment: opens the KV, makes the admin, wires the routes. */
export async function startEdge(env: Readonly<Record<string, string>>) {
  const log = createLogger();
  const where = env.TRAWL_STORAGE;
  if (where === undefined || !parseStorageSetting(where) || where === "files") {
    throw new EdgeConfigError(`set TRAWL_STORAGE to ${STORAGE_FORM.replace(/'files', /, "")}`);
  }
  const token = env.TRAWL_BOOTSTRAP_TOKEN;
  if (token !== undefined && token !== "" && !TOKEN_PATTERN.test(token)) {
    throw new EdgeConfigError(
      "TRAWL_BOOTSTRAP_TOKEN must be 'trawl_' and 43 characters of A-Z a-z 0-9 _ - (as tokens are made)",
    );
  }
  const overrides: Record<string, string> = {
    // An edge process has less memory than a server: a smaller share per user unless set.
    "query.maxResultBytesPerUser": EDGE_RESULT_BYTES,
    ...settingsFromEnv(env),
    storage: where,
  };
  if (!("query.resultMemoryBytes" in overrides)) {
    // Results in memory only (a spill would need a disk); the per-user quota bounds them.
    overrides["query.resultMemoryBytes"] = overrides["query.maxResultBytesPerUser"]!;
  }
  if (!("query.resultMemoryTotalBytes" in overrides)) {
    // No pool for all results either: the per-user quota bounds them.
    overrides["query.resultMemoryTotalBytes"] = EDGE_NO_POOL;
  }
  const { settings, warnings, explicit } = loadSettings(null, overrides);
  warnings.forEach((w) => log.warn(w));
  const storage = await openStorage(settings.storage, "/");
  try {
    return await serveOn(storage, settings, explicit, env, log);
  } catch (e) {
    storage.close(); // the next request starts again from scratch
    throw e;
  }
}

async function serveOn(
  storage: Storage,
  settings: Settings,
  explicit: ReadonlySet<SettingKey>,
  env: Readonly<Record<string, string>>,
  log: Logger,
) {
  if (storage instanceof KvStorage) {
    const orphans = await storage.sweepOrphanChunks();
    if (orphans > 0) {
      log.info(`removed the chunks of ${orphans} value(s) an interrupted write left`);
    }
  }
  const licence = env.TRAWL_LICENSE;
  const edition = licence === undefined ? "community" : parseLicense(licence, "TRAWL_LICENSE");
  const place = await storagePlace(storage, log);
  // A home that is never read or written: its paths only name places in messages.
  const layout = homeLayout("/trawl-edge");
  const deps = buildDeps(layout, settings, log, undefined, storage, {
    ...place,
    edition: () => Promise.resolve(edition),
  }, explicit);
  const token = env.TRAWL_BOOTSTRAP_TOKEN;
  if (token !== undefined && token !== "") {
    if (await deps.users.bootstrapAdmin("admin", token) !== undefined) {
      log.info("created the admin user 'admin' with the token of TRAWL_BOOTSTRAP_TOKEN");
    }
  } else if (!(await deps.users.exists())) {
    log.warn("there are no users: set TRAWL_BOOTSTRAP_TOKEN to create the admin");
  }
  await log.flush();
  return { app: createApp(deps), deps, storage };
}

let started: ReturnType<typeof startEdge> | undefined;

export default {
  async fetch(request: Request): Promise<Response> {
    // Started by the first request; a start that failed (a KV not reachable yet, a mistake in
    // the environment) is tried again by the next one, and the request fails with its error.
    const starting = started ??= startEdge(Deno.env.toObject());
    starting.catch(() => {
      if (started === starting) started = undefined;
    });
    let app;
    try {
      ({ app } = await starting);
    } catch (e) {
      return await failedStart(e);
    }
    return await app.fetch(request);
  },
} satisfies Deno.ServeDefaultExport;

/**
 * The answer while the edge cannot start, in the API's error form: an environment to fix says
 * what to set (`500 NOT_CONFIGURED`), a KV not reachable is `503 STORAGE_UNAVAILABLE`, anything
 * else a bug (`500 INTERNAL`, the details in the log only).
 */
async function failedStart(e: unknown): Promise<Response> {
  const log = createLogger();
  const [status, code, message] = e instanceof EdgeConfigError
    ? [500, "NOT_CONFIGURED", e.message]
    : e instanceof StorageError
    ? [503, "STORAGE_UNAVAILABLE", e.publicMessage]
    : [500, "INTERNAL", "the server could not start; its log says why"];
  if (code === "INTERNAL") log.error("the edge could not start", e);
  else log.error(`the edge could not start: ${message}`);
  await log.flush();
  return new Response(JSON.stringify({ code, message }), {
    status,
    headers: {
      "Content-Type": "application/json; charset=UTF-8",
      ...(status === 503 ? { "Retry-After": "5" } : {}),
    },
  });
}
