/** A home folder with a cloudapi store definition, an emulator, and a way to list through both. */

import { join } from "node:path";
import { CloudEmulator, type EmulatorOptions } from "../emulator/emulator.ts";
import type { FileEntry, Warning } from "../../engine/contracts/datastore.ts";
import {
  type CloudApiDeps,
  type CloudApiSettings,
  openCloudApiStore,
} from "../../connectors/cloudapi/cloudapi_datastore.ts";
import { ConnectorPool } from "../../actors/connector_pool.ts";
import { FetchFlights } from "../../connectors/cloudapi/fetch_flights.ts";
import { SubscriptionMemory } from "../../connectors/cloudapi/subscriptions.ts";
import { TokenProvider } from "../../connectors/cloudapi/token_provider.ts";
import { cloudHomeAccess } from "../../home/cloud_access.ts";
import { homeLayout } from "../../home/layout.ts";
import type { RequestStats } from "../../connectors/cloudapi/cloud_request.ts";
import type { User } from "../../engine/contracts/user.ts";
import { cleanUp, withDeadline } from "../support/deadline.ts";

export const TENANT = "contoso.onmicrosoft.com";
export const CLIENT = "11111111-2222-3333-4444-555555555555";
export const SECRET = "Sup3r.S3cret~Value";
/** A fixed "now": 2026-03-10 12:30 UTC. */
export const NOW = Date.UTC(2026, 2, 10, 12, 30);
export const HOUR = 3_600_000;
export const ADMIN: User = { name: "root", groups: [], admin: true };

export interface Harness extends AsyncDisposable {
  readonly home: string;
  readonly emulator: CloudEmulator;
  readonly clock: { now: number };
  readonly stats: RequestStats;
  /** The connector actors (the adapted Graph rate can be read from it). */
  readonly pool: ConnectorPool;
  deps(): CloudApiDeps;
  writeDefinition(name: string, store: Record<string, unknown>): Promise<void>;
  list(uri: string, opts?: { from?: number; to?: number; user?: User }): Promise<{
    files: FileEntry[];
    warnings: Warning[];
    progress: number[];
  }>;
  read(file: FileEntry): Promise<Record<string, unknown>[]>;
  /** Stops the pool and the emulator and removes the home, each even if another fails. */
  close(): Promise<void>;
}

/** Starts an emulator and makes a home with an enterprise license. */

/** The connector's settings with every host on the emulator at `url`, and a generous rate. */
export function emulatorSettings(url: string): CloudApiSettings {
  return {
    serverTimeZone: "UTC",
    loginHost: url,
    graphHost: url,
    manageHost: url,
    graphRateLimit: 1000,
    graphRateTimeunit: "1 sec",
  };
}

export async function harness(
  options: Partial<EmulatorOptions> = {},
  license = "enterprise",
  /** Settings over the defaults, given the emulator's URL. */
  settings: (emulatorUrl: string) => Partial<CloudApiSettings> = () => ({}),
): Promise<Harness> {
  const home = await Deno.makeTempDir({ prefix: "trawl_cloudapi_" });
  await Deno.mkdir(join(home, "conf"), { recursive: true });
  await Deno.mkdir(join(home, "data", "system", "datastores"), { recursive: true });
  await Deno.writeTextFile(join(home, "conf", "license"), `edition = ${license}\n`);
  const clock = { now: NOW };
  const emulator = new CloudEmulator({
    tenants: [{ tenantId: TENANT, clientId: CLIENT, secret: SECRET }],
    seed: { from: NOW - 48 * HOUR, to: NOW, perHour: 6, ...options.seed },
    now: () => clock.now,
    graphPageSize: 4,
    contentPageSize: 5,
    ...options,
  });
  try {
    await withDeadline(emulator.start(), 10_000, "the emulator's start");
  } catch (e) {
    await cleanUp([() => emulator.stop(), () => Deno.remove(home, { recursive: true })]);
    throw e;
  }
  const stats: RequestStats = { requests: 0, throttled: 0, retries: 0 };
  const tokens = new TokenProvider();
  const pool = new ConnectorPool();
  const flights = new FetchFlights();
  const subscriptions = new SubscriptionMemory();
  const deps = (): CloudApiDeps => ({
    ...cloudHomeAccess(homeLayout(home)),
    settings: { ...emulatorSettings(emulator.url), ...settings(emulator.url) },
    tokens,
    pacer: pool,
    flights,
    subscriptions,
    now: () => clock.now,
    backoffMs: 10,
    stats,
  });
  return {
    home,
    emulator,
    clock,
    stats,
    pool,
    deps,
    async writeDefinition(name, store) {
      await Deno.writeTextFile(
        join(home, "data", "system", "datastores", `${name}.json`),
        JSON.stringify({ type: "CLOUDAPI", cloudapiStore: store }),
      );
    },
    async list(uri, opts = {}) {
      const warnings: Warning[] = [];
      const progress: number[] = [];
      const user = opts.user ?? ADMIN;
      const store = await openCloudApiStore(uri, user, deps());
      const files: FileEntry[] = [];
      for await (
        const f of store.list(uri, {
          user,
          workDir: "/",
          timeZone: "UTC",
          from: opts.from,
          to: opts.to,
          signal: new AbortController().signal,
          onWarning: (w) => warnings.push(w),
          onProgress: (p) => progress.push(p),
        })
      ) files.push(f);
      return { files, warnings, progress };
    },
    async read(file) {
      const stream = await file.open(new AbortController().signal);
      const text = await new Response(stream).text();
      return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
    },
    close,
    [Symbol.asyncDispose]: close,
  };
  function close(): Promise<void> {
    return cleanUp([
      () => pool.stop(),
      () => withDeadline(emulator.stop(), 10_000, "the emulator's shutdown"),
      () => Deno.remove(home, { recursive: true }),
    ]);
  }
}

/** The base definition of the tests' store. */
export function baseStore(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    clientId: CLIENT,
    tenantId: TENANT,
    secret: SECRET,
    timeZone: "UTC",
    directoryLogs: "audits:audits|2 h|15 min, logins:signins|2 h|15 min",
    activityLogs: "ni:ni-signins|2 h|15 min",
    suiteLogs: "exchange:Audit.Mail|2 h|15 min",
    maxErrorRetries: 3,
    readTimeout: "1 sec",
    connectTimeout: "1 sec",
    ...extra,
  };
}

/** The ids the emulator holds for a Graph log type in [from, to), visible at the harness's now. */
export function graphIds(
  h: Harness,
  kind: "audits" | "interactiveUser" | "nonInteractiveUser",
  from: number,
  to: number,
): string[] {
  const data = h.emulator.data(TENANT);
  const source = kind === "audits"
    ? data.audits
    : data.signIns.filter((s) => (s.record.signInEventTypes as string[]).includes(kind));
  return source.filter((s) => s.time >= from && s.time < to && s.availableAt <= h.clock.now)
    .map((s) => String(s.record.id)).sort();
}

/** Every record of every listed file, with the ids seen more than once. */
export async function allRecords(
  h: Harness,
  files: FileEntry[],
  idField = "id",
): Promise<{ ids: string[]; duplicates: string[] }> {
  const ids: string[] = [];
  for (const f of files) for (const r of await h.read(f)) ids.push(String(r[idField]));
  const seen = new Set<string>();
  const duplicates = ids.filter((id) => seen.has(id) || !seen.add(id));
  return { ids, duplicates };
}
