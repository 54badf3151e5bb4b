/**
 * A real Trawl server (tests/api/server.ts) whose `cloudapi://` stores each talk to an emulator
 * of their own, on a clock of their own: cases of a table can then run side by side in one
 * server without their faults, clocks or stored hours getting mixed up.
 *
 *   const c = await cloudServer();
 *   const store = await c.addStore({ seed: {...} }, { readTimeout: 300 });
 *   const { ids } = await c.syncQuery(readScript(store.name, FAMILIES[0], FROM, TO));
 */

import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "../api/server.ts";
import type { DetectionDeps } from "../../routes/schedules.ts";
import { finished, type Status } from "../api/client.ts";
import type { SchemeRegistry } from "../../connectors/file/registry.ts";
import {
  type CloudApiDeps,
  openCloudApiStore,
} from "../../connectors/cloudapi/cloudapi_datastore.ts";
import { ConnectorPool } from "../../actors/connector_pool.ts";
import { FetchFlights } from "../../connectors/cloudapi/fetch_flights.ts";
import { SubscriptionMemory } from "../../connectors/cloudapi/subscriptions.ts";
import { TokenProvider } from "../../connectors/cloudapi/token_provider.ts";
import { cloudHomeAccess } from "../../home/cloud_access.ts";
import { homeLayout } from "../../home/layout.ts";
import { splitUri } from "../../connectors/cloudapi/uri_pattern.ts";
import type { RequestStats } from "../../connectors/cloudapi/cloud_request.ts";
import { CloudEmulator, type EmulatorOptions } from "../emulator/emulator.ts";
import { baseStore, CLIENT, emulatorSettings, HOUR, NOW, SECRET, TENANT } from "./harness.ts";
import { cleanUp, withDeadline } from "../support/deadline.ts";

export const SCRIPT_HEADERS = { "Content-Type": "text/vnd.engine.script" };

/** One log of one family, as a test table row. */
export interface FamilyLog {
  readonly name: string;
  /** The path after the store in cloudapi:// URIs. */
  readonly path: string;
  readonly api: "graph" | "manage";
  /** The record field with the id. */
  readonly idField: "id" | "Id";
  /** The emulator's records of [from, to) visible at `now`. */
  expected(e: CloudEmulator, from: number, to: number, now: number): string[];
}

function signIns(kind: string) {
  return (e: CloudEmulator, from: number, to: number, now: number) =>
    e.data(TENANT).signIns
      .filter((s) => s.time >= from && s.time < to && s.availableAt <= now)
      .filter((s) => (s.record.signInEventTypes as string[]).includes(kind))
      .map((s) => String(s.record.id)).sort();
}

/** The logs the tests query: each family, two kinds of cloud activity sign-ins. */
export const FAMILIES: readonly FamilyLog[] = [
  {
    name: "directory_service audits",
    path: "directory_service/audits",
    api: "graph",
    idField: "id",
    expected: (e, from, to, now) =>
      e.data(TENANT).audits
        .filter((s) => s.time >= from && s.time < to && s.availableAt <= now)
        .map((s) => String(s.record.id)).sort(),
  },
  {
    name: "directory_service signins",
    path: "directory_service/logins",
    api: "graph",
    idField: "id",
    // v1.0 has interactive sign-ins only.
    expected: signIns("interactiveUser"),
  },
  {
    name: "cloud_activity ni-signins",
    path: "cloud_activity/ni",
    api: "graph",
    idField: "id",
    expected: signIns("nonInteractiveUser"),
  },
  {
    name: "cloud_activity sp-signins",
    path: "cloud_activity/sp",
    api: "graph",
    idField: "id",
    expected: signIns("servicePrincipal"),
  },
  {
    name: "productivity_suite Audit.Mail",
    path: "productivity_suite/exchange",
    api: "manage",
    idField: "Id",
    // Content becomes listable when its blob was created; records are placed by CreationTime.
    expected: (e, from, to, now) =>
      e.data(TENANT).blobs
        .filter((b) => b.contentType === "Audit.Exchange" && b.created < now)
        .flatMap((b) => b.records)
        .filter((r) => {
          const t = Date.parse(String(r.CreationTime) + "Z");
          return t >= from && t < to;
        })
        .map((r) => String(r.Id)).sort(),
  },
];

/** The definition every case starts from: all five logs, one file per hour. */
export function storeDefinition(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return baseStore({
    fileNameIncludesHour: true,
    activityLogs: "ni:ni-signins|2 h|15 min, sp:sp-signins|2 h|15 min",
    readTimeout: "2 s",
    connectTimeout: "1 s",
    acl: { users: { alice: ["read"] }, groups: {} },
    ...extra,
  });
}

export interface CloudStore {
  readonly name: string;
  readonly emulator: CloudEmulator;
  /** The store's and its emulator's "now"; move it to let time pass. */
  readonly clock: { now: number };
  readonly stats: RequestStats;
}

export interface QueryOutcome {
  readonly status: number;
  /** Every response body the query produced (status polls included). */
  readonly bodies: string[];
  /** The ids of the rows, in the order they came (200 only). */
  readonly ids: string[];
  /** The last status of an async query. */
  readonly last?: Status;
}

export interface CloudServer extends AsyncDisposable {
  readonly s: TestServer;
  /** A store of its own, over an emulator of its own, defined with `definition`. */
  addStore(
    emulator?: Partial<EmulatorOptions>,
    definition?: Record<string, unknown>,
  ): Promise<CloudStore>;
  /** Runs `script` through `POST /API/v1.0/`. */
  syncQuery(script: string, idField?: string): Promise<QueryOutcome>;
  /** Runs `script` through `POST /queries`, polls until finished, then reads the result. */
  asyncQuery(script: string, idField?: string): Promise<QueryOutcome>;
}

/** Options of the server: a sink for its log lines. */

/**
 * The cloud connector's parts for a server whose home is `home`, on `emulator` (every host), with
 * its own pacer `pool` and the test's `clock`: what main.ts gives it, with a short backoff.
 */
export function emulatorDeps(
  home: string,
  emulator: CloudEmulator,
  pool: ConnectorPool,
  clock: { now: number },
): CloudApiDeps {
  return {
    ...cloudHomeAccess(homeLayout(home)),
    settings: emulatorSettings(emulator.url),
    tokens: new TokenProvider(),
    pacer: pool,
    flights: new FetchFlights(),
    subscriptions: new SubscriptionMemory(),
    now: () => clock.now,
    backoffMs: 5,
  };
}

export async function cloudServer(
  options: {
    readonly logLine?: (line: string) => void;
    /** The server's /schedules (tests/sigma/schedule_cloudapi_test.ts). */
    readonly detections?: Partial<Omit<DetectionDeps, "storage">>;
  } = {},
): Promise<CloudServer> {
  const s = await startTestServer({ "query.maxRunning": "32" }, {
    logLine: options.logLine,
    detections: options.detections,
  });
  try {
    await Deno.writeTextFile(`${s.home}/conf/license`, "edition = enterprise\n");
  } catch (e) {
    await s[Symbol.asyncDispose]();
    throw e;
  }
  const stores = new Map<string, { deps: CloudApiDeps; emulator: CloudEmulator }>();
  (s.deps.datastores as SchemeRegistry).register("cloudapi", (uri, user) => {
    const store = stores.get(splitUri(uri)?.store ?? "");
    if (!store) throw new Error(`test: no store for ${uri}`);
    return openCloudApiStore(uri, user, store.deps);
  });
  const pools: ConnectorPool[] = [];
  let next = 0;
  return {
    s,
    async addStore(emulatorOptions = {}, definition = storeDefinition()) {
      const name = `store${next++}`;
      const clock = { now: NOW };
      const emulator = new CloudEmulator({
        tenants: [{ tenantId: TENANT, clientId: CLIENT, secret: SECRET }],
        seed: { from: NOW - 6 * HOUR, to: NOW, perHour: 4, ...emulatorOptions.seed },
        now: () => clock.now,
        graphPageSize: 2,
        contentPageSize: 2,
        ...emulatorOptions,
      });
      await emulator.start();
      const stats: RequestStats = { requests: 0, throttled: 0, retries: 0 };
      const pool = new ConnectorPool();
      pools.push(pool);
      stores.set(name, {
        emulator,
        deps: { ...emulatorDeps(s.home, emulator, pool, clock), stats },
      });
      await s.write(
        `/system/datastores/${name}.json`,
        JSON.stringify({ type: "CLOUDAPI", cloudapiStore: definition }),
      );
      return { name, emulator, clock, stats };
    },
    async syncQuery(script, idField = "id") {
      const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
        method: "POST",
        headers: SCRIPT_HEADERS,
        body: script,
      });
      const text = await res.text();
      return { status: res.status, bodies: [text], ids: idsOf(res.status, text, idField) };
    },
    async asyncQuery(script, idField = "id") {
      const bodies: string[] = [];
      const res = await s.fetch("alice", "/API/v1.0/queries?scriptPath=/user", {
        method: "POST",
        headers: SCRIPT_HEADERS,
        body: script,
      });
      const posted = await res.text();
      bodies.push(posted);
      assert.equal(res.status, 201, posted);
      const id = JSON.parse(posted).queryId as string;
      const last = await finished(s, id);
      bodies.push(JSON.stringify(last));
      const result = await s.fetch("alice", `/API/v1.0/queries/${id}/result`);
      const text = await result.text();
      bodies.push(text);
      return { status: result.status, bodies, ids: idsOf(result.status, text, idField), last };
    },
    [Symbol.asyncDispose]: () =>
      cleanUp([
        ...pools.map((p) => () => p.stop()),
        () => s[Symbol.asyncDispose](),
        ...[...stores.values()].map(({ emulator }) => () =>
          withDeadline(emulator.stop(), 10_000, "an emulator's shutdown")
        ),
      ]),
  };
}

function idsOf(status: number, text: string, idField: string): string[] {
  if (status !== 200) return [];
  return (JSON.parse(text) as Record<string, unknown>[]).map((r) => String(r[idField]));
}

/** `READ_JSON` of a log of `store` over the hours [from, to). */
export function readScript(store: string, log: FamilyLog, from: number, to: number): string {
  return `READ_JSON(src: 'cloudapi://${store}/${log.path}/**', ` +
    `from: TIMESTAMP('${new Date(from).toISOString()}'), ` +
    `to: TIMESTAMP('${new Date(to).toISOString()}'))`;
}

/** The ids seen more than once. */
export function duplicatesOf(ids: readonly string[]): string[] {
  const seen = new Set<string>();
  return ids.filter((id) => seen.has(id) || !seen.add(id));
}
