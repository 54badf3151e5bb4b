/**
 * A real Trawl server for end-to-end tests: a fresh home in a temp folder, users alice and bob,
 * the deps main.ts builds, served as main.ts serves them on 127.0.0.1 with a free port.
 *
 *   await using s = await startTestServer({ "query.retention": "1 s" });
 *   const res = await s.fetch("alice", "/API/v1.0/queries/...", { method: "GET" });
 */

import { join } from "node:path";
import { ensureHome } from "../../home/layout.ts";
import { createLogger } from "../../home/log.ts";
import { loadSettings } from "../../home/settings.ts";
import type { Grant } from "../../home/rights.ts";
import { buildDeps, type Lifetimes } from "../../main.ts";
import { TokenProvider } from "../../connectors/cloudapi/token_provider.ts";
import { ConnectorPool } from "../../actors/connector_pool.ts";
import type { DatastoreKind } from "../../connectors/datastore_kind.ts";
import { type AppDeps, createApp } from "../../routes/app.ts";
import { type DetectionDeps, detectionSettings } from "../../routes/schedules.ts";
import { FileStorage } from "../../home/storage/file_storage.ts";
import { cleanUp, withDeadline } from "../support/deadline.ts";
import { connectionsAllowedByFds, serveGuarded } from "../../routes/guarded_server.ts";

export interface TestServer extends AsyncDisposable {
  readonly url: string;
  readonly deps: AppDeps;
  readonly home: string;
  readonly tokens: Readonly<Record<string, string>>;
  /** A request as `user` (Authorization added) to a path under the server. */
  fetch(user: string, path: string, init?: RequestInit): Promise<Response>;
  /** Writes a file under the home's `data/` (a tree path like `/shared/x.log`). */
  write(treePath: string, content: string | Uint8Array): Promise<string>;
}

/** How long one request of a test may take before it fails (a hung handler fails its test). */
const REQUEST_TIMEOUT_MS = 60_000;

export async function startTestServer(
  overrides: Record<string, string> = {},
  options: {
    readonly grants?: readonly Grant[];
    /** Receives every server log line (by default only ERROR lines are printed). */
    readonly logLine?: ((line: string) => void) | undefined;
    /** The queries' delays (`query.retention`): a SimulatedClock the test advances. */
    readonly clock?: Lifetimes["clock"];
    /** More datastore kinds, registered as main.ts registers its own. */
    readonly kinds?: readonly DatastoreKind[];
    /**
     * /schedules, by default on the home's files storage (a test may hand a storage shared by
     * several servers); the test ticks (no loop of its own) and sets its clock.
     */
    readonly detections?: Partial<DetectionDeps> | undefined;
  } = {},
): Promise<TestServer> {
  const dir = await Deno.makeTempDir({ prefix: "trawl-api-" });
  // What is started so far, stopped in reverse order if the start fails or at dispose.
  const stops: (() => unknown)[] = [() => Deno.remove(dir, { recursive: true })];
  const stopAll = () => cleanUp(stops.toReversed());
  try {
    const home = await ensureHome(dir);
    if (options.grants) await Deno.writeTextFile(home.rightsFile, JSON.stringify(options.grants));
    const { settings } = loadSettings(null, {
      "server.timeZone": "UTC",
      // One scan thread unless a test asks for workers: dozens of test servers run at once on
      // two cores, and tests/api/workers_test.ts runs the API on real workers.
      "query.workers": "1",
      // Loaded when a test's query needs one: most tests never do.
      "query.warmWorkers": "false",
      // Workers at the server's own priority: on a busy machine the other test files' processes
      // (at nice 0) would starve niced workers, a query over a few MB then taking minutes. The
      // tests of the priority itself set it (workers_test.ts, guarantee_test.ts).
      "query.workerNice": "0",
      ...overrides,
    });
    const log = createLogger((line) => {
      options.logLine?.(line);
      // deno-lint-ignore no-console
      if (line.includes(" ERROR ")) console.error(line);
    });
    const deps = buildDeps(
      home,
      settings,
      log,
      options.clock === undefined ? undefined : {
        tokens: new TokenProvider(),
        pacer: new ConnectorPool(),
        clock: options.clock,
      },
    );
    for (const kind of options.kinds ?? []) deps.datastoreKinds.register(kind);
    stops.push(
      () => deps.supervisor?.stop(),
      () => deps.lifetimes.pacer.stop(),
      () => deps.scanWorkers?.close(),
    );
    const tokens: Record<string, string> = {
      alice: await deps.users.add("alice", {}),
      bob: await deps.users.add("bob", {}),
    };
    const app = createApp({
      ...deps,
      detections: {
        storage: new FileStorage(home.dir),
        server: "test",
        // The settings' (alerts.*, detections.*), but no loop of its own: the tests tick.
        ...detectionSettings(settings),
        tickMs: 0,
        ...options.detections,
      },
    });
    // Served as main.ts serves it: behind the connection guard.
    const server = await serveGuarded(app.fetch, {
      hostname: "127.0.0.1",
      port: 0,
      maxConnections: Math.min(settings["server.maxConnections"], connectionsAllowedByFds()),
      headersTimeoutMs: settings["server.headersTimeout"],
      bodyTimeoutMs: settings["server.bodyTimeout"],
      idleTimeoutMs: settings["server.idleTimeout"],
      log,
    });
    // A response left open would keep shutdown() waiting for ever: the test fails instead.
    stops.push(() => withDeadline(server.shutdown(), 10_000, "the test server's shutdown"));
    const url = `http://127.0.0.1:${server.addr.port}`;
    return {
      url,
      deps,
      home: dir,
      tokens,
      fetch(user, path, init = {}) {
        const headers = new Headers(init.headers);
        if (!headers.has("Authorization")) headers.set("Authorization", `Bearer ${tokens[user]}`);
        const signal = init.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS);
        return fetch(url + path, { ...init, headers, signal });
      },
      async write(treePath, content) {
        const real = join(home.dataDir, treePath);
        await Deno.mkdir(join(real, ".."), { recursive: true });
        if (typeof content === "string") await Deno.writeTextFile(real, content);
        else await Deno.writeFile(real, content);
        return real;
      },
      [Symbol.asyncDispose]: stopAll,
    };
  } catch (e) {
    await stopAll().catch(() => {});
    throw e;
  }
}
