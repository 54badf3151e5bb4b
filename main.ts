/**
 * Trawl's entry point: the CLI (`serve`, `user ...`) and the server start. It only wires the
 * modules together; see docs/architecture.md.
 */

import { convertRules } from "./connectors/sigma/convert.ts";
import { DEFAULT_MAPPINGS, parseMapping, type SigmaMapping } from "./connectors/sigma/mapping.ts";
import { dirname, resolve as resolvePath } from "node:path";
import { statfsSync } from "node:fs";
import { Command, parseCommandLine, USAGE, UsageError } from "./home/command_line.ts";
import { ensureHome, type HomeLayout, homeLayout, readTextIfExists } from "./home/layout.ts";
import { createLogger, type Logger } from "./home/log.ts";
import { FsResourceTree } from "./home/resource_tree.ts";
import { RightsError } from "./home/rights.ts";
import { RightsFile, runRightsCommand, StorageRights } from "./home/rights_file.ts";
import { StorageResourceTree } from "./home/storage_tree.ts";
import type { ResourceTree } from "./engine/contracts/resource_tree.ts";
import type { Grant } from "./home/rights.ts";
import type { Edition } from "./home/license.ts";
import { loadSettings, type SettingKey, type Settings, SettingsError } from "./home/settings.ts";
import { runUserCommand } from "./home/user_commands.ts";
import { UserStore, UserStoreError } from "./home/user_store.ts";
import { type AppDeps, createApp } from "./routes/app.ts";
import { connectionsAllowedByFds, serveGuarded } from "./routes/guarded_server.ts";
import { detectionSettings } from "./routes/schedules.ts";
import {
  idsToRemember,
  rememberIds,
  startSupervisor,
  type SupervisorRef,
} from "./actors/supervisor.ts";
import { workerThreadsEnded } from "./actors/worker_threads.ts";
import { createWebSocketInspector } from "@statelyai/inspect";
import { createScanWorkers } from "./actors/scan_workers.ts";
import { DistributedScans } from "./actors/distributed_scans.ts";
import { workerKvPath } from "./actors/worker_tree.ts";
import { QueryMetrics } from "./actors/query_metrics.ts";
import { createDatastoreRegistry } from "./connectors/file/registry.ts";
import { cloudApiSettings } from "./connectors/cloudapi/cloudapi_datastore.ts";
import { DatastoreKinds } from "./connectors/datastore_kind.ts";
import { fileKind } from "./connectors/file/file_kind.ts";
import { cloudApiKind } from "./connectors/cloudapi/cloudapi_kind.ts";
import { azblobKind } from "./connectors/azblob/azblob_kind.ts";
import { TokenProvider } from "./connectors/cloudapi/token_provider.ts";
import { FetchFlights } from "./connectors/cloudapi/fetch_flights.ts";
import { SubscriptionMemory } from "./connectors/cloudapi/subscriptions.ts";
import { ConnectorPool } from "./actors/connector_pool.ts";
import { sweepSpillFiles } from "./actors/result_store.ts";
import { ResultQuota } from "./actors/result_quota.ts";
import { cloudHomeAccess } from "./home/cloud_access.ts";
import { datastoreFiles } from "./home/datastore_files.ts";
import { DatastoreAdmin } from "./actors/datastore_admin.ts";
import { sweepStaleTempFiles } from "./engine/table/temp_files.ts";
import type { Storage } from "./engine/contracts/storage.ts";
import { StorageError } from "./engine/contracts/storage.ts";
import { FileStorage } from "./home/storage/file_storage.ts";
import { openStorage } from "./home/storage/open_storage.ts";
import { KvStorage } from "./home/storage/kv_storage.ts";
import { PgStorage } from "./home/storage/pg_storage.ts";
import { SharedBuckets } from "./actors/shared_buckets.ts";
import { SharedQueries } from "./actors/shared_queries.ts";

export interface ServerOptions {
  /** The home folder; created (with an admin user) when it does not exist yet. */
  readonly home: string;
  /** `--set key=value` overrides of settings.conf. */
  readonly overrides?: Readonly<Record<string, string>>;
  /** Where the first-start token and the listening address are printed (stdout by default). */
  readonly out?: (line: string) => void;
  readonly log?: Logger;
  /** Aborting it stops the server gracefully. */
  readonly signal?: AbortSignal;
}

export interface RunningServer {
  /** `http://127.0.0.1:8388/` */
  readonly url: string;
  readonly port: number;
  readonly deps: AppDeps & { readonly lifetimes: Lifetimes };
  /** Settles when the server has stopped. */
  readonly finished: Promise<void>;
  /** Stops accepting connections and waits for the requests in flight. */
  shutdown(): Promise<void>;
}

/** Objects that live as long as the server: built once here, stopped at shutdown. */
export interface Lifetimes {
  /** Cloud tokens, cached per client and API. */
  readonly tokens: TokenProvider;
  /** The connector actors: per-tenant token buckets for the cloud APIs. */
  readonly pacer: ConnectorPool;
  /** Stately's inspector, when `inspect.statelyUrl` is set. */
  readonly inspector?: { stop(): void };
  /** The queries' delays (retention): XState's own unless a test gives a SimulatedClock. */
  readonly clock?: Parameters<typeof startSupervisor>[1]["clock"];
}

/**
 * The host files of a local KV (SQLite's database and its journals): they hold the datastore
 * definitions' credentials, so no FILE datastore may read them, whatever its root.
 */
function kvFiles(storage: Storage): string[] {
  if (!(storage instanceof KvStorage) || /^https?:/i.test(storage.where)) return [];
  const file = resolvePath(storage.where);
  return [file, `${file}-wal`, `${file}-shm`, `${file}-journal`];
}

/**
 * Where the resource tree and the rights are kept when not in the home's files: in the storage
 * (a KV shared by several servers, or the edge entry's only state). Made by `storagePlace`.
 */
export interface TreePlace {
  readonly tree: ResourceTree;
  readonly rights: { grants(): readonly Grant[] };
  /** Makes a user's folder (on their first authentication, or when added). */
  readonly makeUserFolder: (name: string) => Promise<void>;
  /** The edition, when not the home's conf/license (the edge has no home). */
  readonly edition?: () => Promise<Edition>;
  /** Ends its background work (the rights' checks), before the storage closes. */
  readonly stop?: () => void;
  /**
   * The KV file scan workers open to read this tree (actors/worker_tree.ts workerKvPath);
   * absent: the queries of this server scan on one thread (the edge, a remote KV).
   */
  readonly scanKv?: string | undefined;
}

/**
 * The tree and rights in `storage`: loads the rights document (a bad one stops the start with a
 * RightsError) and makes the top folders. `seedRights`, when given and the storage has no rights
 * yet, is written as the first rights document (a home's conf/rights.json).
 */
export async function storagePlace(
  storage: Storage,
  log: Logger,
  seedRights?: string | null,
): Promise<TreePlace> {
  const rights = new StorageRights(
    storage,
    (e) => log.warn(`${e.message}; keeping the previous rights`),
  );
  if (seedRights != null && await rights.isMissing()) {
    await rights.write(seedRights);
    log.info("rights: the home's conf/rights.json was written to the shared storage");
  }
  await rights.load();
  const tree = new StorageResourceTree(storage, rights);
  await tree.ensureRoots();
  return {
    tree,
    rights,
    makeUserFolder: (name) => tree.ensureFolder(["users", name]),
    stop: () => rights.stop(),
  };
}

/** cache.maxBytes by default: a tenth of the free disk where `dir` is (1 GiB if unknown). */
function defaultCacheBytes(dir: string): number {
  for (let at = dir;; at = dirname(at)) {
    try {
      const s = statfsSync(at);
      return Math.floor((Number(s.bavail) * Number(s.bsize)) / 10);
    } catch {
      if (dirname(at) === at) return 1 << 30;
    }
  }
}

/**
 * Builds what the routes depend on. Without `place` the tree and rights are the home's files
 * (`<home>/data`, `conf/rights.json`); with one (storagePlace) nothing here touches the disk,
 * and scan workers run only when the place names the KV file they may open (`scanKv`).
 */
export function buildDeps(
  home: HomeLayout,
  settings: Settings,
  log: Logger,
  lifetimes: Lifetimes = { tokens: new TokenProvider(), pacer: new ConnectorPool() },
  /** Where the state lives (the `storage` setting); the home's files by default. */
  storage: Storage = new FileStorage(home.dir),
  place?: TreePlace,
  /** The settings given in the settings file or on the command line (loadSettings). */
  explicit: ReadonlySet<SettingKey> = new Set(),
): AppDeps & {
  readonly lifetimes: Lifetimes;
  readonly datastoreKinds: DatastoreKinds;
  readonly distributedScans?: DistributedScans;
} {
  let rights: { grants(): readonly Grant[] };
  let tree: ResourceTree;
  if (place) {
    ({ rights, tree } = place);
  } else {
    const file = new RightsFile(
      home.rightsFile,
      (e) => log.warn(`${e.message}; keeping the previous rights`),
    );
    file.load(); // a bad rights.json stops the start instead of being ignored
    rights = file;
    tree = new FsResourceTree(home.dataDir, file);
  }
  const limits = {
    maxRunning: settings["query.maxRunning"],
    maxQueued: settings["query.maxQueued"],
    retentionMs: settings["query.retention"],
    expiredMemoryMs: settings["query.expiredMemory"],
  };
  const statelyUrl = settings["inspect.statelyUrl"];
  const inspector = statelyUrl ? createWebSocketInspector({ url: statelyUrl }) : undefined;
  if (inspector) lifetimes = { ...lifetimes, inspector };
  // Servers sharing a KV share the tenants' token buckets (the fetched hours: cloudHomeAccess).
  if (storage.kind !== "files") lifetimes.pacer.share(new SharedBuckets(storage));
  // With the files storage the definitions are read through the tree (links checked), as always.
  const definitions = datastoreFiles(home, storage);
  const fileDefinitions = storage.kind === "files"
    ? undefined
    : (store: string) => definitions.read(store);
  const hiddenHostPaths = kvFiles(storage);
  const datastores = createDatastoreRegistry(tree, fileDefinitions, { hiddenHostPaths });
  const access = {
    ...cloudHomeAccess(home, storage),
    ...(place?.edition ? { edition: place.edition } : {}),
  };
  const queryMetrics = new QueryMetrics();
  // Servers sharing a KV count their queries together and answer for each other's.
  const sharedQueries = storage.kind === "kv" || storage.kind === "pg"
    ? new SharedQueries(storage, {
      ...limits,
      maxRunningPerServer: !explicit.has("query.maxRunning"),
      leaseMs: settings["cluster.lease"],
      log,
    })
    : undefined;
  // Each kind of datastore: one line (connectors/README.md).
  const kinds = new DatastoreKinds(datastores);
  kinds.register(fileKind(tree, fileDefinitions, hiddenHostPaths));
  kinds.register(cloudApiKind({
    ...access,
    settings: cloudApiSettings(settings),
    tokens: lifetimes.tokens,
    pacer: lifetimes.pacer,
    flights: new FetchFlights(),
    subscriptions: new SubscriptionMemory(),
  }));
  kinds.register(azblobKind({ definitionText: access.definitionText }));
  const supervisor = startSupervisor(limits, {
    log,
    inspect: inspector?.inspect,
    metrics: queryMetrics,
    gate: sharedQueries,
    ...(lifetimes.clock ? { clock: lifetimes.clock } : {}),
  });
  // Servers sharing a KV: the lease and the polls start with the supervisor they gate.
  sharedQueries?.start(supervisor).catch((e) =>
    log.warn(`shared queries: could not start: ${(e as Error).message}`)
  );
  // Workers rebuild the tree from host paths, or from the KV file it is in (place.scanKv).
  const pool = tree.hostFiles || place?.scanKv !== undefined
    ? createScanWorkers({
      count: settings["query.workers"],
      dataDir: home.dataDir,
      grants: () => rights.grants(),
      ...(settings["query.workerBacklog"] ? { backlogDir: home.resultsDir } : {}),
      nice: settings["query.workerNice"],
      laneBytes: settings["query.laneBytes"],
      // Loaded when the server starts: the first query would wait ~300 ms for them.
      warm: settings["query.warmWorkers"],
      ...(place?.scanKv === undefined ? {} : { storage: place.scanKv }),
    })
    : undefined;
  // Servers sharing a PostgreSQL spread a large scan over all of them (cluster.distributeBytes).
  const distributed =
    pool && storage instanceof PgStorage && settings["cluster.distributeBytes"] > 0
      ? new DistributedScans({
        storage,
        pool,
        distributeBytes: settings["cluster.distributeBytes"],
        answerBytes: settings["cluster.shareAnswerBytes"],
        minShareBytes: settings["cluster.minShareBytes"],
        leaseMs: settings["cluster.lease"],
        log,
      })
      : undefined;
  if (!distributed && settings["cluster.distributeBytes"] > 0) {
    log.warn(
      "cluster.distributeBytes is set, but scans are spread only with storage = pg: and scan workers: this server keeps its scans",
    );
  }
  return {
    home,
    settings,
    lifetimes,
    users: UserStore.forHome(home, storage, place?.makeUserFolder),
    tree,
    log,
    datastores,
    connectors: lifetimes.pacer,
    datastoreKinds: kinds,
    datastoreAdmin: new DatastoreAdmin(definitions, kinds),
    resultQuota: new ResultQuota({
      maxResults: settings["query.maxResultsPerUser"],
      maxBytes: settings["query.maxResultBytesPerUser"],
      memoryBytes: settings["query.resultMemoryTotalBytes"],
    }),
    scanWorkers: distributed?.workers() ?? pool,
    ...(distributed ? { distributedScans: distributed } : {}),
    // The column cache: where the server has a disk of its own, as for the scan workers (not
    // the edge entry, which has none).
    ...(settings["cache.enabled"] && (tree.hostFiles || place?.scanKv !== undefined)
      ? {
        columnCache: {
          dir: home.cacheDir,
          maxBytes: settings["cache.maxBytes"] ?? defaultCacheBytes(home.engineDataDir),
        },
      }
      : {}),
    supervisor,
    sharedQueries,
    metrics: { queries: queryMetrics, cloud: lifetimes.pacer.counters },
  };
}

/** Starts the server; throws SettingsError or RightsError for a home it cannot run with. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  // deno-lint-ignore no-console
  const out = options.out ?? ((line: string) => console.log(line));
  const log = options.log ?? createLogger();
  const layout = homeLayout(options.home);
  const { settings, warnings, explicit } = loadSettings(
    await readTextIfExists(layout.settingsFile),
    options.overrides ?? {},
  );
  warnings.forEach((w) => log.warn(w));
  await ensureHome(layout.dir);
  // Temp files of saves that a crash or a kill interrupted: never visible, but they take space.
  const swept = await sweepStaleTempFiles(layout.dataDir);
  if (swept > 0) log.info(`removed ${swept} stale temporary table file(s)`);
  // Spilled results of a server that was killed: no query of this process knows them.
  const spills = await sweepSpillFiles(layout.resultsDir);
  if (spills > 0) log.info(`removed ${spills} result spill file(s) left by an earlier run`);

  const storage = await openStorage(settings.storage, layout.dir);
  if (storage instanceof KvStorage) {
    // Chunks of values whose writer was killed before switching to them: never read, but kept.
    const orphans = await storage.sweepOrphanChunks();
    if (orphans > 0) {
      log.info(`removed the chunks of ${orphans} value(s) an interrupted write left`);
    }
  }
  // Replaced values' chunks kept for their readers, and values whose retention ended.
  if (storage instanceof PgStorage) await storage.sweep();
  // With a KV the resource tree and the rights are in it too, shared by every server on it.
  const place = storage.kind === "files" ? undefined : {
    ...await storagePlace(storage, log, await readTextIfExists(layout.rightsFile)),
    // Its scan workers open the same KV file (not a remote KV, nor one in memory).
    scanKv: workerKvPath(settings.storage),
  };
  const deps = buildDeps(layout, settings, log, undefined, storage, place, explicit);
  if (deps.supervisor && storage.kind === "files") {
    await restoreIds(storage, deps.supervisor, log);
  }
  // Its lease is in the KV before the first query is taken.
  if (deps.supervisor) await deps.sharedQueries?.start(deps.supervisor);
  await deps.distributedScans?.start();
  // Only where there are no users at all; of servers starting together on one KV, one creates it.
  const token = await deps.users.bootstrapAdmin("admin");
  if (token !== undefined) {
    out(`Created the home ${layout.dir} with the admin user 'admin'. Its token, shown only once:`);
    out(token);
  }

  // Scheduled detections: due schedules and alerts looked at every `detections.tick`
  // (docs/detections.md).
  let stopDetections: (() => Promise<void>) | undefined;
  const app = createApp({
    ...deps,
    detections: {
      storage,
      server: `server-${crypto.randomUUID().slice(0, 8)}`,
      ...detectionSettings(settings),
      started: (stop) => stopDetections = stop,
      warn: (message) => log.warn(message),
    },
  });
  const maxConnections = Math.min(settings["server.maxConnections"], connectionsAllowedByFds());
  if (maxConnections < settings["server.maxConnections"]) {
    log.info(
      `server.maxConnections lowered to ${maxConnections}: the open-file limit allows no more`,
    );
  }
  // Not Deno.serve alone: it bounds neither connections nor the time to send headers.
  const server = await serveGuarded(app.fetch, {
    hostname: settings["wgui.host"],
    port: settings["wgui.port"],
    maxConnections,
    headersTimeoutMs: settings["server.headersTimeout"],
    bodyTimeoutMs: settings["server.bodyTimeout"],
    idleTimeoutMs: settings["server.idleTimeout"],
    log,
    signal: options.signal,
  });
  options.signal?.addEventListener("abort", () => {
    const reason = options.signal?.reason;
    log.info(typeof reason === "string" ? `shutting down (${reason})` : "shutting down");
  }, { once: true });
  const address = server.addr;
  const host = address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname;
  const url = `http://${host}:${address.port}/`;
  // The log is written in batches: what the start logged (settings warnings) comes first.
  await log.flush();
  out(`Trawl listening on ${url}`);
  return {
    url,
    port: address.port,
    deps,
    // Idle scan workers and the storage end with the server.
    finished: server.finished.finally(async () => {
      await stopDetections?.();
      // Its unfinished queries are marked FAILED for the other servers, its lease goes.
      await deps.sharedQueries?.stop();
      // Its shares are given back to the other servers.
      await deps.distributedScans?.stop();
      // The queries still running stop (their engines are aborted) before what they use
      // (workers, storage) is closed under them.
      deps.supervisor?.stop();
      deps.scanWorkers?.close();
      if (deps.supervisor && storage.kind === "files") await saveIds(storage, deps.supervisor, log);
      place?.stop?.();
      await storage.close();
    }),
    shutdown: () => server.shutdown(),
  };
}

/**
 * Where a server stopping keeps the ids of its queries, so that after a restart they answer 410
 * rather than 404 (files storage; servers sharing a KV keep their queries' records in it).
 */
const REMEMBERED_IDS_KEY = ["engine_data", "remembered_ids.json"];

async function saveIds(storage: Storage, supervisor: SupervisorRef, log: Logger): Promise<void> {
  try {
    const ids = idsToRemember(supervisor);
    await storage.put(REMEMBERED_IDS_KEY, new TextEncoder().encode(JSON.stringify(ids)));
  } catch (e) {
    log.warn(`could not keep the query ids for the next start: ${(e as Error).message}`);
  }
}

async function restoreIds(storage: Storage, supervisor: SupervisorRef, log: Logger) {
  try {
    const stored = await storage.get(REMEMBERED_IDS_KEY);
    if (!stored) return;
    const ids = JSON.parse(new TextDecoder().decode(stored.value));
    const valid = Array.isArray(ids)
      ? ids.filter((e): e is [string, string, number] =>
        Array.isArray(e) && typeof e[0] === "string" && typeof e[1] === "string" &&
        typeof e[2] === "number"
      )
      : [];
    const n = rememberIds(supervisor, valid);
    if (n > 0) log.info(`remembered ${n} query id(s) of the last run as expired (410)`);
    await storage.delete(REMEMBERED_IDS_KEY);
  } catch (e) {
    log.warn(`could not read the query ids of the last run: ${(e as Error).message}`);
  }
}

/** Serves until SIGINT or SIGTERM, then stops gracefully. */
async function serve(command: Extract<Command, { kind: "serve" }>): Promise<number> {
  const stopping = new AbortController();
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  // Listen before the server announces itself, so a signal right after that is handled. The
  // reason names the signal, which the log's "shutting down" line tells.
  const stops = signals.map((s) => [s, () => stopping.abort(s)] as const);
  stops.forEach(([s, stop]) => Deno.addSignalListener(s, stop));
  try {
    const server = await startServer({ ...command, signal: stopping.signal });
    await server.finished;
    // The supervisor stopped with the server (its retention timers would keep the process
    // alive for minutes); the pacer's and the inspector's timers too.
    server.deps.lifetimes.pacer.stop();
    server.deps.lifetimes.inspector?.stop();
    // The log is written in batches: the last lines (the requests that ended the service).
    await server.deps.log.flush();
    // The process exits next: not while a terminated worker's thread is still ending.
    if (!await workerThreadsEnded()) {
      server.deps.log.warn("a scan worker's thread had not ended 5 s after the server stopped");
      await server.deps.log.flush();
    }
  } finally {
    stops.forEach(([s, stop]) => Deno.removeSignalListener(s, stop));
  }
  return 0;
}

/** Runs the command line; returns the exit code (0 ok, 1 runtime error, 2 usage error). */
export async function main(args: readonly string[]): Promise<number> {
  let command: Command;
  try {
    command = parseCommandLine(args, { TRAWL_HOME: Deno.env.get("TRAWL_HOME") });
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    // deno-lint-ignore no-console
    console.error(`error: ${e.message}\n\n${USAGE}`);
    return 2;
  }
  try {
    switch (command.kind) {
      case "help":
        // deno-lint-ignore no-console
        console.log(USAGE);
        return 0;
      case "serve":
        return await serve(command);
      case "sigma convert":
        // deno-lint-ignore no-console
        return await runSigmaConvert(command, (l) => console.log(l));
      default: {
        // Adding a user may be the first thing done with a home; the other commands need one.
        const home = command.kind === "user add"
          ? await ensureHome(command.home)
          : homeLayout(command.home);
        // The users are where the home's settings.conf keeps the state (files or a KV).
        const { settings } = loadSettings(await readTextIfExists(home.settingsFile), {});
        const storage = await openStorage(settings.storage, home.dir);
        try {
          if (command.kind === "rights show" || command.kind === "rights set") {
            // deno-lint-ignore no-console
            await runRightsCommand(command, home.rightsFile, storage, (l) => console.log(l));
          } else {
            // deno-lint-ignore no-console
            await runUserCommand(command, UserStore.forHome(home, storage), (l) => console.log(l));
          }
        } finally {
          await storage.close();
        }
        return 0;
      }
    }
  } catch (e) {
    if (
      e instanceof SettingsError || e instanceof RightsError || e instanceof UserStoreError ||
      e instanceof StorageError ||
      e instanceof Deno.errors.AddrInUse || e instanceof Deno.errors.PermissionDenied
    ) {
      // deno-lint-ignore no-console
      console.error(`error: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

/**
 * `sigma convert`: each rule of the files, converted with the built-in mappings (a --mapping
 * file replaces the one of its target), printed as JSON; 1 when a file or mapping is unreadable.
 */
async function runSigmaConvert(
  command: Extract<Command, { kind: "sigma convert" }>,
  print: (line: string) => void,
): Promise<number> {
  let mappings: SigmaMapping[] = [...DEFAULT_MAPPINGS];
  const rules = [];
  try {
    for (const file of command.mappings) {
      const mapping = parseMapping(JSON.parse(await Deno.readTextFile(file)), file);
      mappings = [...mappings.filter((m) => m.target !== mapping.target), mapping];
    }
    for (const file of command.files) {
      const text = await Deno.readTextFile(file);
      for (
        const c of convertRules(text, {
          mappings,
          ...(command.target !== undefined ? { target: command.target } : {}),
          ...(command.store !== undefined ? { store: command.store } : {}),
        })
      ) {
        const { predicate: _, ...shown } = c;
        rules.push({ file, ...shown });
      }
    }
  } catch (e) {
    // deno-lint-ignore no-console
    console.error(`error: ${(e as Error).message}`);
    return 1;
  }
  print(JSON.stringify({ rules }, null, 2));
  return 0;
}

// Exits at once with the code, everything flushed and stopped before: not by letting the runtime
// tear itself down, which crashed (SIGSEGV, exit 139) in one of the runtime's own threads after
// a server stopped with SIGTERM, about one time in fourteen in a loop of the SIGTERM test at load 9.
if (import.meta.main) Deno.exit(await main(Deno.args));
