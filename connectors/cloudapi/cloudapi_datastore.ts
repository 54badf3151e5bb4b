/**
 * The `cloudapi://` datastore: opens a store's definition (Enterprise license and the store's
 * ACL required), and lists the hour files a pattern matches, fetching each hour that the
 * refresh policy says is due before it is listed.
 */

import { join } from "node:path";
import type { Datastore, FileEntry, ListOptions } from "../../engine/contracts/datastore.ts";
import type { User } from "../../engine/contracts/user.ts";
import { QueryError } from "../../engine/front/diagnostics.ts";
import { parseInterval } from "../../engine/values/interval.ts";
import { type CloudApiDefinition, parseDefinition } from "./definition.ts";
import { readableDefinition } from "../store_acl.ts";
import { type Family, FAMILY_SPECS, logTypeOf } from "./families.ts";
import { type CloudHosts, type HostOverrides, hostsFor } from "./hosts.ts";
import { hourFilePath, hourlyFiles } from "./file_layout.ts";
import { dayStart, hoursBetween, hourStart } from "./zoned_hours.ts";
import { recordsInRange } from "./record_filter.ts";
import { HOUR_MS, needsFetch } from "./refresh_policy.ts";
import { hourStamp, type LogRecord } from "./hour_store.ts";
import { folderHourFiles, type HourFiles, storageHourFiles } from "./hour_files.ts";
import { HourLeases } from "./hour_lease.ts";
import { type Storage, StorageError } from "../../engine/contracts/storage.ts";
import type { LogSpec } from "./log_list.ts";
import { mayNameLog, pathMatcher, splitUri } from "./uri_pattern.ts";
import { TokenError, TokenProvider, type TokenRequest } from "./token_provider.ts";
import { type Budget, budgetOf, type Pacer } from "./pacer.ts";
import type { FetchFlights } from "./fetch_flights.ts";
import type { SubscriptionMemory } from "./subscriptions.ts";
import { type ApiClient, createApiClient } from "./api_client.ts";
import { CloudRequestError, type RequestStats } from "./cloud_request.ts";
import { fetchGraphWindow } from "./graph_fetcher.ts";
import { creationTime, fetchSuiteContent } from "./suite_fetcher.ts";
import { hideSecrets } from "../secret_text.ts";

/** The flat settings the connector reads (see home/settings.ts). */
export interface CloudApiSettings extends HostOverrides {
  /**
   * The server's zone (`server.timeZone`): where a store without `timeZone` cuts its hours.
   * The process's zone when absent.
   */
  readonly serverTimeZone?: string | undefined;
  /**
   * The provider's limit of one tenant's Graph `auditLogs` requests (directory and activity
   * logs together), the ceiling the adaptive rate stays under.
   */
  readonly graphRateLimit?: number;
  readonly graphRateTimeunit?: string | number;
  readonly suiteRateLimit?: number;
  readonly suiteRateTimeunit?: string | number;
  /**
   * `PublisherIdentifier` of Management Activity API calls: the publisher's tenant GUID. Each
   * store's own tenant GUID when absent.
   */
  readonly publisherIdentifier?: string;
  /** With a shared storage: how long a fetch lease lasts unless renewed (`cloudapi.fetchLease`). */
  readonly fetchLeaseMs?: number;
}

export interface CloudApiDeps {
  /** Where fetched hour files are kept: `<home>/engine_data/cloud_api`. */
  readonly cloudDir: string;
  /**
   * The storage several servers share (Deno KV), when the server has one: fetched hours and their
   * state are kept there instead of `cloudDir`, and a lease per store and hour lets one server
   * fetch it (hour_files.ts, hour_lease.ts).
   */
  readonly hourStorage?: Storage;
  /** The text of a store's definition (`/system/datastores/<store>.json`), null when absent. */
  readonly definitionText: (store: string) => Promise<string | null>;
  /**
   * The installation's edition (`community`, `enterprise`); throws an Error whose message says
   * what is wrong with a licence that cannot be read as one.
   */
  readonly edition: () => Promise<string>;
  readonly settings?: CloudApiSettings;
  /** One per process (main.ts): tokens are cached and shared by every store and query. */
  readonly tokens: TokenProvider;
  /** One per process (main.ts): the per-tenant token buckets. */
  readonly pacer: Pacer;
  /** One per process (main.ts): one fetch of a store's hour at a time. */
  readonly flights: FetchFlights;
  /** One per process (main.ts): suite subscriptions seen enabled, and start times. */
  readonly subscriptions: SubscriptionMemory;
  /** The clock the refresh policy and windows use (tests move it). */
  readonly now?: () => number;
  /** First retry delay. */
  readonly backoffMs?: number;
  readonly stats?: RequestStats;
}

const PROVIDER_DEFAULTS: Record<Budget, { limit: number; unitMs: number }> = {
  graph: { limit: 25, unitMs: 10_000 },
  manage: { limit: 60_000, unitMs: 60_000 },
};

/** The connector's part of the service settings (`cloudapi.*` flat keys). */
export function cloudApiSettings(flat: Readonly<Record<string, unknown>>): CloudApiSettings {
  const pick = (k: string) => flat[`cloudapi.${k}`] as never;
  return {
    serverTimeZone: flat["server.timeZone"] as string | undefined,
    loginHost: pick("loginHost"),
    graphHost: pick("graphHost"),
    manageHost: pick("manageHost"),
    graphRateLimit: pick("graphRateLimit"),
    graphRateTimeunit: pick("graphRateTimeunit"),
    suiteRateLimit: pick("suiteRateLimit"),
    suiteRateTimeunit: pick("suiteRateTimeunit"),
    publisherIdentifier: pick("publisherIdentifier"),
    fetchLeaseMs: pick("fetchLease"),
  };
}

/** A factory for the datastore registry: `register("cloudapi", cloudApiFactory(deps))`. */
export function cloudApiFactory(deps: CloudApiDeps) {
  return (uri: string, user: User): Promise<Datastore> => openCloudApiStore(uri, user, deps);
}

/** Opens the store a `cloudapi://` URI names, for `user`; throws QueryError when it cannot. */
export async function openCloudApiStore(
  uri: string,
  user: User,
  deps: CloudApiDeps,
): Promise<Datastore> {
  if (await editionOf(deps, uri) !== "enterprise") {
    throw new QueryError({
      code: "LICENSE_REQUIRED",
      message:
        `'${uri}': cloud logs (cloudapi://) need the Enterprise license; this installation has the Community license`,
    });
  }
  const parts = splitUri(uri);
  if (!parts || !/^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/.test(parts.store)) {
    throw new QueryError({
      code: "NOT_FOUND",
      message: `'${uri}' names no datastore: expected cloudapi://<store>/<log_id>/<log_name>/...`,
    });
  }
  const text = await deps.definitionText(parts.store);
  const json = readableDefinition(parts.store, text, "cloudapiStore", user);
  const parsed = parseDefinition(parts.store, json);
  if (!parsed.ok) {
    throw new QueryError({ code: "BAD_DATASTORE", message: parsed.problems.join("; ") });
  }
  return new CloudApiStore(parsed.definition, deps);
}

/** The edition; a malformed license file is a plain LICENSE_REQUIRED, not a crash. */
async function editionOf(deps: CloudApiDeps, uri: string): Promise<string> {
  try {
    return await deps.edition();
  } catch (e) {
    throw new QueryError({
      code: "LICENSE_REQUIRED",
      message:
        `'${uri}': cloud logs (cloudapi://) need the Enterprise license, and conf/license cannot be read as one: ${
          (e as Error).message
        }`,
    });
  }
}

/** The zone a store cuts its hours in: its own, else the server's; never the querying user's. */
export function storageZone(def: CloudApiDefinition, settings?: CloudApiSettings): string {
  return def.timeZone ?? settings?.serverTimeZone ??
    Intl.DateTimeFormat().resolvedOptions().timeZone ?? "UTC";
}

/** One stored hour of a store, as `hourStates` tells it (actors/scheduler.ts `CloudHour`). */
export interface StoredHour {
  /** `<store>/<log>/<hour start>`. */
  readonly key: string;
  readonly hour: number;
  /** The next hour's start (an hour later, but for the zones' shifts). */
  readonly end: number;
  /** Changes whenever the hour's stored records may have; null: never fetched. */
  readonly stamp: string | null;
  /** A read would fetch the hour now (never fetched, or within its lag and due again). */
  readonly due: boolean;
}

/** A datastore that tells its stored hours' fetch state (the `cloudapi://` one). */
export interface HourStateSource {
  hourStates(pattern: string, from: number, to: number): Promise<StoredHour[]>;
}

/** Does `store` tell its stored hours' fetch state? */
export function hasHourStates(store: unknown): store is HourStateSource {
  return typeof (store as Partial<HourStateSource> | null)?.hourStates === "function";
}

interface Candidate {
  readonly log: LogSpec;
  readonly path: string;
  /** Hours this file holds that the query wants. */
  readonly hours: number[];
}

/** The lease's length when no setting gives one. */
const DEFAULT_LEASE_MS = 30_000;

class CloudApiStore implements Datastore {
  readonly #files: HourFiles;
  readonly #leases: HourLeases | undefined;
  readonly #hosts: CloudHosts;
  readonly #tokens: TokenProvider;
  readonly #pool: Pacer;
  readonly #now: () => number;

  constructor(readonly def: CloudApiDefinition, readonly deps: CloudApiDeps) {
    const shared = deps.hourStorage;
    this.#files = shared
      ? storageHourFiles(shared, def.name)
      : folderHourFiles(join(deps.cloudDir, def.name));
    this.#leases = shared
      ? new HourLeases(shared, {
        leaseMs: deps.settings?.fetchLeaseMs ?? DEFAULT_LEASE_MS,
      })
      : undefined;
    this.#hosts = hostsFor(def.suitePlan, deps.settings);
    this.#tokens = deps.tokens;
    this.#pool = deps.pacer;
    this.#now = deps.now ?? (() => Date.now());
  }

  async *list(pattern: string, options: ListOptions): AsyncIterable<FileEntry> {
    const parts = splitUri(pattern);
    const path = parts?.path ?? "";
    const match = pathMatcher(path);
    const logNames = this.def.logs.map((l) => `${FAMILY_SPECS[l.family].logId}/${l.uriName}`);
    if (!logNames.some((name) => mayNameLog(path, ...(name.split("/") as [string, string])))) {
      options.onWarning({
        level: "WARN",
        message: `no log of datastore '${this.def.name}' matches '${path}'; its logs: ${
          logNames.join(", ") || "none"
        }`,
      });
      return;
    }
    // One folder serves every user, so its hours cannot follow whoever queries.
    const zone = storageZone(this.def, this.deps.settings);
    const bounded = options.from !== undefined || options.to !== undefined;
    const candidates = this.#candidates(match, zone, options.from, options.to);
    await this.#fetchDue(candidates, zone, options);
    for (const c of candidates) {
      // A day file holds whichever hours earlier queries fetched: serve the asked hours only.
      const only = bounded && !hourlyFiles(this.def)
        ? {
          field: logTypeOf(c.log).timeField,
          from: c.hours[0]!,
          to: hourStart(c.hours[c.hours.length - 1]! + HOUR_MS + 1_000, zone),
        }
        : undefined;
      const info = await this.#files.stat(c.path).catch((e) => {
        throw this.#storageFailure(e, c.log, c.hours);
      });
      if (info === null) continue;
      const files = this.#files;
      yield {
        uri: `cloudapi://${this.def.name}/${c.path}`,
        size: info.size,
        modified: info.modified,
        // The column cache's identity: the stored fetch (a re-fetch writes a new time) and the
        // records it gives of it (those in the query's hours only).
        identity: `fetched:${info.modified}:${only ? JSON.stringify(only) : "all"}`,
        pathTime: hourlyFiles(this.def) ? c.hours[0]! : dayStart(c.hours[0]!, zone),
        open: async (signal) => {
          const readable = await files.open(c.path, signal);
          return only ? readable.pipeThrough(recordsInRange(only)) : readable;
        },
      };
    }
  }

  /** The files and hours of the logs `match` accepts, of [from, to) within the time windows. */
  #candidates(
    match: (path: string) => boolean,
    zone: string,
    from: number | undefined,
    to: number | undefined,
  ): Candidate[] {
    const now = this.#now();
    const candidates: Candidate[] = [];
    for (const log of this.def.logs) {
      const byPath = new Map<string, number[]>();
      const lo = Math.max(now - this.def.windowMs[log.family], from ?? -Infinity);
      const hi = Math.min(now, to ?? Infinity);
      if (!(lo < hi)) continue;
      for (const hour of hoursBetween(lo, hi, zone)) {
        const path = hourFilePath(log, hour, zone, this.def);
        if (!match(path)) continue;
        const list = byPath.get(path);
        if (list) list.push(hour);
        else byPath.set(path, [hour]);
      }
      for (const [path, hours] of byPath) candidates.push({ log, path, hours });
    }
    return candidates;
  }

  /**
   * The stored fetch state of every hour of [from, to) that `pattern` reads, without fetching
   * anything: its stamp (hour_store.ts `hourStamp`: changes whenever the hour's stored records
   * may have) and whether a read would fetch it now (not yet final, its update frequency past).
   */
  async hourStates(pattern: string, from: number, to: number): Promise<StoredHour[]> {
    const match = pathMatcher(splitUri(pattern)?.path ?? "");
    const zone = storageZone(this.def, this.deps.settings);
    const now = this.#now();
    const out: StoredHour[] = [];
    for (const c of this.#candidates(match, zone, from, to)) {
      const state = await this.#files.readState(c.path).catch((e) => {
        throw this.#storageFailure(e, c.log, c.hours);
      });
      for (const hour of c.hours) {
        const s = state.hours[String(hour)];
        out.push({
          key: `${this.def.name}/${c.log.uriName}/${hour}`,
          hour,
          end: hourStart(hour + HOUR_MS + 1_000, zone),
          stamp: hourStamp(s),
          due: needsFetch(c.log, hour, s, now),
        });
      }
    }
    return out;
  }

  /** Fetches every due hour of the candidates, reporting progress per hour. */
  async #fetchDue(candidates: Candidate[], zone: string, options: ListOptions): Promise<void> {
    const now = this.#now();
    const due = new Map<LogSpec, Map<number, string>>();
    let total = 0;
    for (const c of candidates) {
      const state = await this.#files.readState(c.path).catch((e) => {
        throw this.#storageFailure(e, c.log, c.hours);
      });
      for (const hour of c.hours) {
        if (needsFetch(c.log, hour, state.hours[String(hour)], now)) {
          let m = due.get(c.log);
          if (!m) due.set(c.log, m = new Map());
          m.set(hour, c.path);
          total++;
        }
      }
    }
    if (total === 0) return;
    let done = 0;
    const progress = (n: number) => {
      done += n;
      options.onProgress?.(Math.min(1, done / total));
    };
    for (const [log, hours] of due) {
      try {
        const client = await this.#client(log.family, options);
        if (logTypeOf(log).api === "suite") {
          await this.#fetchSuite(client, log, hours, { zone, progress, signal: options.signal });
        } else await this.#fetchGraph(client, log, hours, progress, options);
      } catch (e) {
        // Refused credentials are a wrong definition: the query fails. Anything else (an
        // outage past its retries) loses this log's hours, each said in a warning.
        if (e instanceof TokenError && e.badCredentials) {
          throw new QueryError({ code: "BAD_DATASTORE", message: this.#safe(e.message) });
        }
        if (!(e instanceof CloudRequestError) && !(e instanceof TokenError)) throw e;
        this.#lost(options, "ERROR", log, [...hours.keys()], e.message);
      }
    }
  }

  /** Says (and counts) that hours of a log could not be fetched: never a silent loss. */
  #lost(
    options: ListOptions,
    level: "WARN" | "ERROR",
    log: LogSpec,
    hours: number[],
    why: string,
  ): void {
    if (this.deps.stats) {
      this.deps.stats.lostHours = (this.deps.stats.lostHours ?? 0) + hours.length;
    }
    options.onLost?.(hours.length);
    const first = new Date(Math.min(...hours)).toISOString();
    const which = hours.length === 1
      ? `hour ${first}`
      : `${hours.length} hours from ${first} to ${new Date(Math.max(...hours)).toISOString()}`;
    options.onWarning({
      level,
      message: this.#safe(
        `datastore '${this.def.name}', log '${log.uriName}', ${which} given up (not fetched; the results lack them): ${why}`,
      ),
    });
  }

  /** Is `hour` of `path` still due (another query may just have fetched it)? */
  async #stillDue(log: LogSpec, path: string, hour: number): Promise<boolean> {
    const state = await this.#files.readState(path);
    return needsFetch(log, hour, state.hours[String(hour)], this.#now());
  }

  async #fetchGraph(
    client: ApiClient,
    log: LogSpec,
    hours: Map<number, string>,
    progress: (n: number) => void,
    options: ListOptions,
  ): Promise<void> {
    for (const [hour, path] of hours) {
      try {
        await this.deps.flights.run(
          `${this.def.name}|${log.uriName}|${hour}`,
          () =>
            this.#leased(
              [log.uriName, String(hour)],
              () => this.#stillDue(log, path, hour),
              async () => {
                const records = await fetchGraphWindow(client, log, hour, hour + HOUR_MS);
                await this.#store(log, path, records, new Map([[hour, records.length]]));
              },
              options.signal,
            ),
          { signal: options.signal, ownFailure: (e) => !isProviderFailure(e) },
        );
      } catch (e) {
        if (e instanceof StorageError) throw this.#storageFailure(e, log, [hour]);
        if (!(e instanceof CloudRequestError)) throw e;
        this.#lost(options, "WARN", log, [hour], e.message);
      }
      progress(1);
    }
  }

  async #fetchSuite(
    client: ApiClient,
    log: LogSpec,
    hours: Map<number, string>,
    { zone, progress, signal }: {
      zone: string;
      progress: (n: number) => void;
      signal: AbortSignal;
    },
  ): Promise<void> {
    // One fetch of a suite log at a time; the next one fetches only what is still due.
    const stillDue = async () => {
      const due = new Map<number, string>();
      for (const [hour, path] of hours) {
        if (await this.#stillDue(log, path, hour)) due.set(hour, path);
      }
      return due;
    };
    try {
      await this.deps.flights.run(
        `${this.def.name}|${log.uriName}`,
        () =>
          this.#leased([log.uriName], async () => (await stillDue()).size > 0, async () => {
            const due = await stillDue();
            if (due.size > 0) await this.#fetchSuiteHours(client, log, due, zone);
          }, signal),
        { signal, ownFailure: (e) => !isProviderFailure(e) },
      );
    } catch (e) {
      if (e instanceof StorageError) {
        throw this.#storageFailure(e, log, [...hours.keys()]);
      }
      throw e;
    }
    progress(hours.size);
  }

  async #fetchSuiteHours(
    client: ApiClient,
    log: LogSpec,
    hours: Map<number, string>,
    zone: string,
  ): Promise<void> {
    const starts = [...hours.keys()];
    const from = Math.min(...starts);
    // Content created up to the lag after an hour can still hold that hour's records.
    const to = Math.min(this.#now(), Math.max(...starts) + HOUR_MS + log.lagMs);
    const records = await fetchSuiteContent(client, log, from, to, this.deps.subscriptions);
    const byPath = new Map<
      string,
      { records: LogRecord[]; fetched: Map<number, number>; touched: Set<number> }
    >();
    for (const [hour, path] of hours) {
      if (!byPath.has(path)) {
        byPath.set(path, { records: [], fetched: new Map(), touched: new Set() });
      }
      byPath.get(path)!.fetched.set(hour, 0);
    }
    let untimed = 0;
    for (const r of records) {
      const t = creationTime(r);
      if (Number.isNaN(t)) {
        untimed++;
        continue;
      }
      const hour = hourStart(t, zone);
      const path = hours.get(hour) ?? hourFilePath(log, hour, zone, this.def);
      let entry = byPath.get(path);
      if (!entry) {
        byPath.set(path, entry = { records: [], fetched: new Map(), touched: new Set() });
      }
      entry.records.push(r);
      if (hours.has(hour)) entry.fetched.set(hour, (entry.fetched.get(hour) ?? 0) + 1);
      // A late record of an hour not fetched now: that hour's records changed.
      else entry.touched.add(hour);
    }
    if (untimed > 0) {
      client.onWarning({
        level: "WARN",
        message: this.#safe(
          `datastore '${this.def.name}', log '${log.uriName}': lost ${untimed} record(s) without a readable CreationTime (no hour to place them in)`,
        ),
      });
    }
    for (const [path, entry] of byPath) {
      await this.#store(log, path, entry.records, entry.fetched, entry.touched);
    }
  }

  /**
   * Runs `work` when `isDue()`: with a shared storage under the lease of `key` (this store's
   * hour or suite log), so that of several servers one fetches and the others use its result.
   */
  #leased(
    key: readonly string[],
    isDue: () => Promise<boolean>,
    work: () => Promise<void>,
    signal: AbortSignal,
  ): Promise<void> {
    if (this.#leases) {
      return this.#leases.run([this.def.name, "lease", ...key], isDue, work, signal, {
        // The provider's failure past its retries: the servers waiting for this one report it.
        messageOf: (e) => e instanceof CloudRequestError ? e.message : undefined,
        rethrow: (message) => new CloudRequestError(`${message} (fetched by another server)`),
      });
    }
    return (async () => {
      if (await isDue()) await work();
    })();
  }

  /**
   * The storage failed while a query needed hours of a log: a failure of the query naming the
   * store, the log and the hours (and what the storage said, without host paths). The stored
   * hours are as they were: a file and its state change in one commit or not at all.
   */
  #storageFailure(e: unknown, log: LogSpec, hours: number[]): unknown {
    if (!(e instanceof StorageError)) return e;
    const first = new Date(Math.min(...hours)).toISOString();
    const which = hours.length === 1
      ? `hour ${first}`
      : `hours ${first} to ${new Date(Math.max(...hours)).toISOString()}`;
    return new QueryError({
      code: "RUNTIME_ERROR",
      message: this.#safe(
        `datastore '${this.def.name}', log '${log.uriName}', ${which}: ${e.publicMessage} (nothing of the ${
          hours.length === 1 ? "hour" : "hours"
        } was stored)`,
      ),
    });
  }

  async #store(
    log: LogSpec,
    path: string,
    records: LogRecord[],
    fetched: Map<number, number>,
    touched?: Set<number>,
  ): Promise<void> {
    await this.#files.merge(path, records, {
      idField: logTypeOf(log).idField,
      timeField: logTypeOf(log).timeField,
      fetched,
      ...(touched && touched.size > 0 ? { touched } : {}),
      now: this.#now(),
      // No query reads the file once its last hour has left the family's time window.
      retainMs: this.def.windowMs[log.family],
    });
  }

  #tokenRequest(): TokenRequest {
    const def = this.def;
    return {
      store: def.name,
      tenantId: def.tenantId,
      clientId: def.clientId,
      secret: def.secret,
      hosts: this.#hosts,
      userAgent: def.userAgent,
      timeoutMs: def.connectTimeoutMs === 0 || def.readTimeoutMs === 0
        ? 0
        : def.connectTimeoutMs + def.readTimeoutMs,
      maxErrorRetries: def.maxErrorRetries,
      backoffMs: this.deps.backoffMs,
    };
  }

  async #client(family: Family, options: ListOptions): Promise<ApiClient> {
    const def = this.def;
    const tokenRequest = this.#tokenRequest();
    // The Management Activity API wants the tenant's GUID in its URLs, never a domain; and a
    // tenant's budget is one whether its stores name it by domain or by GUID.
    const guid = await this.#tokens.tenantGuid(
      tokenRequest,
      family === "suite" ? "manage" : "graph",
    );
    if (family === "suite" && !guid) {
      throw new TokenError(
        `datastore '${def.name}': could not find the tenant id (a GUID) of '${def.tenantId}' (neither the token's 'tid' claim nor ${this.#hosts.login}/${def.tenantId}/v2.0/.well-known/openid-configuration gave one); the Management Activity API needs it: give the GUID as 'tenantId'`,
      );
    }
    const keys = {
      tenant: guid ?? def.tenantId,
      family,
      providerLimit: providerLimit(budgetOf(family), this.deps.settings),
      store: def.name,
      storeLimit: def.rates[family],
    };
    const ctx = {
      store: def.name,
      signal: options.signal,
      connectTimeoutMs: def.connectTimeoutMs,
      readTimeoutMs: def.readTimeoutMs,
      maxErrorRetries: def.maxErrorRetries,
      userAgent: def.userAgent,
      acquire: (signal: AbortSignal) => this.#pool.acquire(keys, signal),
      throttled: (ms: number) => this.#pool.throttled(keys.tenant, family, ms),
      onWarning: options.onWarning,
      now: this.#now,
      backoffMs: this.deps.backoffMs,
      stats: this.deps.stats,
      onRequest: options.onRequest,
    };
    const tenantId = family === "suite" ? guid! : def.tenantId;
    return createApiClient({
      store: def.name,
      tenantId,
      publisher: this.deps.settings?.publisherIdentifier ?? tenantId,
      hosts: this.#hosts,
      now: this.#now,
      onWarning: options.onWarning,
      ...(options.onLost ? { onLost: options.onLost } : {}),
      token: (api, fresh) => this.#tokens.token(tokenRequest, api, fresh),
      context: () => ctx,
    });
  }

  /**
   * Belt and braces: no message leaves with the secret in it. Idempotent, so that a message
   * the token provider has already cleaned is not cleaned again into "(hidd(hidden)n)".
   */
  #safe(message: string): string {
    return hideSecrets(message, [this.def.secret]);
  }
}

/** A provider failure (the query itself was fine): a waiting query need not try again. */
function isProviderFailure(e: unknown): boolean {
  return e instanceof CloudRequestError || e instanceof TokenError;
}

function providerLimit(budget: Budget, settings: CloudApiSettings | undefined) {
  const d = PROVIDER_DEFAULTS[budget];
  const key = budget === "graph" ? "graph" : "suite";
  const s = (settings ?? {}) as Record<string, unknown>;
  const limit = s[`${key}RateLimit`];
  const unit = s[`${key}RateTimeunit`];
  const unitMs = typeof unit === "number" ? unit : typeof unit === "string"
    ? (() => {
      const r = parseInterval(unit);
      return r.ok ? r.millis : d.unitMs;
    })()
    : d.unitMs;
  return { limit: typeof limit === "number" && limit > 0 ? limit : d.limit, unitMs };
}
