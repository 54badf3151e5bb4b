/**
 * Trawl's entry point: the CLI (`serve`, `user ...`) and the server start. It only wires the
 * modules together; see docs/architecture.md.
 */

import { Command, parseCommandLine, USAGE, UsageError } from "./engine/home/command_line.ts";
import { ensureHome, type HomeLayout, homeLayout, readTextIfExists } from "./engine/home/layout.ts";
import { createLogger, type Logger } from "./engine/home/log.ts";
import { FsResourceTree } from "./engine/home/resource_tree.ts";
import { RightsError } from "./engine/home/rights.ts";
import { RightsFile } from "./engine/home/rights_file.ts";
import { loadSettings, type Settings, SettingsError } from "./engine/home/settings.ts";
import { runUserCommand } from "./engine/home/user_commands.ts";
import { UserStore, UserStoreError } from "./engine/home/user_store.ts";
import { type AppDeps, createApp } from "./routes/app.ts";
import { startSupervisor } from "./actors/supervisor.ts";
import { createDatastoreRegistry } from "./connectors/file/registry.ts";
import { cloudApiFactory, cloudApiSettings } from "./connectors/cloudapi/cloudapi_datastore.ts";
import { sweepStaleTempFiles } from "./engine/table/temp_files.ts";

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
  readonly deps: AppDeps;
  /** Settles when the server has stopped. */
  readonly finished: Promise<void>;
  /** Stops accepting connections and waits for the requests in flight. */
  shutdown(): Promise<void>;
}

/** Builds what the routes depend on. Later parts add theirs here (supervisor, datastores). */
export function buildDeps(home: HomeLayout, settings: Settings, log: Logger): AppDeps {
  const rights = new RightsFile(
    home.rightsFile,
    (e) => log.warn(`${e.message}; keeping the previous rights`),
  );
  rights.load(); // a bad rights.json stops the start instead of being ignored
  const tree = new FsResourceTree(home.dataDir, rights);
  const datastores = createDatastoreRegistry(tree);
  datastores.register(
    "cloudapi",
    cloudApiFactory({ home: home.dir, settings: cloudApiSettings(settings) }),
  );
  return {
    home,
    settings,
    users: UserStore.forHome(home),
    tree,
    log,
    datastores,
    supervisor: startSupervisor({
      maxRunning: settings["query.maxRunning"],
      maxQueued: settings["query.maxQueued"],
      retentionMs: settings["query.retention"],
      expiredMemoryMs: settings["query.expiredMemory"],
    }),
  };
}

/** Starts the server; throws SettingsError or RightsError for a home it cannot run with. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const out = options.out ?? ((line: string) => console.log(line));
  const log = options.log ?? createLogger();
  const layout = homeLayout(options.home);
  const { settings, warnings } = loadSettings(
    await readTextIfExists(layout.settingsFile),
    options.overrides ?? {},
  );
  warnings.forEach((w) => log.warn(w));
  await ensureHome(layout.dir);
  // Temp files of saves that a crash or a kill interrupted: never visible, but they take space.
  const swept = await sweepStaleTempFiles(layout.dataDir);
  if (swept > 0) log.info(`removed ${swept} stale temporary table file(s)`);

  const deps = buildDeps(layout, settings, log);
  if (!(await deps.users.exists())) {
    const token = await deps.users.add("admin", { admin: true });
    out(`Created the home ${layout.dir} with the admin user 'admin'. Its token, shown only once:`);
    out(token);
  }

  const app = createApp(deps);
  const { promise: listening, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve({
    hostname: settings["wgui.host"],
    port: settings["wgui.port"],
    onListen: resolve,
    signal: options.signal,
  }, app.fetch);
  options.signal?.addEventListener("abort", () => log.info("shutting down"), { once: true });
  const address = await listening;
  const host = address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname;
  const url = `http://${host}:${address.port}/`;
  // The log is written in batches: what the start logged (settings warnings) comes first.
  await log.flush();
  out(`Trawl listening on ${url}`);
  return {
    url,
    port: address.port,
    deps,
    finished: server.finished,
    shutdown: () => server.shutdown(),
  };
}

/** Serves until SIGINT or SIGTERM, then stops gracefully. */
async function serve(command: Extract<Command, { kind: "serve" }>): Promise<number> {
  const stopping = new AbortController();
  const stop = () => stopping.abort();
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  // Listen before the server announces itself, so a signal right after that is handled.
  signals.forEach((s) => Deno.addSignalListener(s, stop));
  try {
    const server = await startServer({ ...command, signal: stopping.signal });
    await server.finished;
    // The queries' retention timers would keep the process alive for minutes after the
    // server has stopped.
    server.deps.supervisor?.stop();
    // The log is written in batches: the last lines (the requests that ended the service).
    await server.deps.log.flush();
  } finally {
    signals.forEach((s) => Deno.removeSignalListener(s, stop));
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
    console.error(`error: ${e.message}\n\n${USAGE}`);
    return 2;
  }
  try {
    switch (command.kind) {
      case "help":
        console.log(USAGE);
        return 0;
      case "serve":
        return await serve(command);
      default: {
        // Adding a user may be the first thing done with a home; the other commands need one.
        const home = command.kind === "user add"
          ? await ensureHome(command.home)
          : homeLayout(command.home);
        await runUserCommand(command, UserStore.forHome(home), (l) => console.log(l));
        return 0;
      }
    }
  } catch (e) {
    if (
      e instanceof SettingsError || e instanceof RightsError || e instanceof UserStoreError ||
      e instanceof Deno.errors.AddrInUse || e instanceof Deno.errors.PermissionDenied
    ) {
      console.error(`error: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

if (import.meta.main) Deno.exitCode = await main(Deno.args);
