/**
 * Runs Trawl as a real subprocess for end-to-end tests: `main.ts serve` on a free port, and the
 * CLI commands. Other e2e tests may use it too.
 */

import { fileURLToPath as fromFileUrl } from "node:url";

export const REPO_ROOT = fromFileUrl(new URL("../../", import.meta.url));
const MAIN = fromFileUrl(new URL("../../main.ts", import.meta.url));
const TOKEN_LINE = /^trawl_[A-Za-z0-9_-]{43}$/;
/**
 * A CLI command that runs longer is killed (its test then fails on the exit code): meant for a
 * hang only. At load 15-17 on 2 cores, `user add` on a KV two servers write to was once killed at
 * 60 s without a word (it takes 4-7 s at load 10): opening the KV and then each of its calls wait
 * for the servers' write lock, up to 30 s and 5 s a call, each attempt blocked for SQLite's 5 s
 * busy timeout (home/storage/kv_storage.ts), which makes more than 60 s possible.
 */
const CLI_TIMEOUT_MS = 300_000;
/** How long a stopped server may take to exit before it is killed (and its test fails). */
const STOP_GRACE_MS = 15_000;

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** The last line of stdout (where `user add` and `user token` print the token). */
  readonly lastLine: string;
}

/** Runs `main.ts <args>` to completion; killed after CLI_TIMEOUT_MS. */
export async function runCli(args: readonly string[]): Promise<CliResult> {
  const started = Date.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--unstable-no-legacy-abort", "--allow-all", MAIN, ...args],
    cwd: REPO_ROOT,
    stdin: "null",
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
    signal: AbortSignal.timeout(CLI_TIMEOUT_MS),
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  let stderr = new TextDecoder().decode(out.stderr);
  if (out.signal !== null) {
    stderr += `\n(main.ts ${args.join(" ")} ended by ${out.signal} after ${
      Date.now() - started
    } ms; its output: ${JSON.stringify(stdout)})`;
  }
  return { code: out.code, stdout, stderr, lastLine: stdout.trimEnd().split("\n").at(-1) ?? "" };
}

export interface ServerProcess {
  /** `http://127.0.0.1:PORT` without a trailing slash. */
  readonly url: string;
  /** The admin token printed on first start, if this start printed one. */
  readonly firstToken: string | undefined;
  readonly stdout: string[];
  readonly stderr: string[];
  /**
   * Sends a signal and waits for the exit; returns the exit code. A server still running
   * STOP_GRACE_MS later is killed, and stop() throws.
   */
  stop(signal?: Deno.Signal): Promise<number>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Collects the lines of a stream; `onLine` sees each as it arrives. */
async function pump(
  stream: ReadableStream<Uint8Array>,
  lines: string[],
  onLine: (line: string) => void = () => {},
): Promise<void> {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      onLine(line);
    }
  }
  if (rest !== "") lines.push(rest);
}

/** How long a server may take to say it listens. */
const START_MS = 90_000;

/** Starts `main.ts serve --home <home> --set wgui.port=0 [args]` and waits until it listens. */
export async function startServerProcess(
  home: string,
  args: readonly string[] = [],
  options: {
    /** Runs the server under `ulimit -n <openFiles>` (through bash). */
    readonly openFiles?: number;
  } = {},
): Promise<ServerProcess> {
  const denoArgs = [
    "run",
    "--unstable-no-legacy-abort",
    "--allow-all",
    MAIN,
    "serve",
    "--home",
    home,
    "--set",
    "wgui.port=0",
    ...args,
  ];
  const [command, commandArgs] = options.openFiles === undefined ? [Deno.execPath(), denoArgs] : [
    "bash",
    ["-c", `ulimit -n ${options.openFiles} && exec "$0" "$@"`, Deno.execPath(), ...denoArgs],
  ];
  const child = new Deno.Command(command, {
    args: commandArgs,
    cwd: REPO_ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
  }).spawn();
  const stdout: string[] = [];
  const stderr: string[] = [];
  const listening = Promise.withResolvers<string>();
  const pumps = Promise.all([
    pump(child.stdout, stdout, (line) => {
      const m = /^Trawl listening on (http:\/\/\S+?)\/?$/.exec(line);
      if (m) listening.resolve(m[1]!);
    }),
    pump(child.stderr, stderr),
  ]);
  const status = child.status;
  status.then((s) =>
    listening.reject(new Error(`server exited (${s.code}) before listening:\n${stderr.join("\n")}`))
  );
  // Only a server that hangs: a start takes 1-3 s, 30 s or more on a machine short of memory.
  const timer = setTimeout(
    () =>
      listening.reject(
        new Error(`server did not start in ${START_MS / 1000} s:\n${stderr.join("\n")}`),
      ),
    START_MS,
  );
  let url: string;
  try {
    url = await listening.promise;
  } catch (e) {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await status;
    await pumps;
    throw e;
  } finally {
    clearTimeout(timer);
  }
  let stopped: Promise<number> | undefined;
  const stop = (signal: Deno.Signal = "SIGTERM") => {
    stopped ??= (async () => {
      try {
        child.kill(signal);
      } catch { /* already gone */ }
      let late: ReturnType<typeof setTimeout> | undefined;
      const killed = new Promise<"killed">((resolve) => {
        late = setTimeout(() => {
          try {
            child.kill("SIGKILL");
          } catch { /* gone meanwhile */ }
          resolve("killed");
        }, STOP_GRACE_MS);
      });
      const outcome = await Promise.race([status, killed]);
      clearTimeout(late);
      const { code } = await status;
      await pumps;
      if (outcome === "killed") {
        throw new Error(`the server did not exit within ${STOP_GRACE_MS} ms of ${signal}: killed`);
      }
      return code;
    })();
    return stopped;
  };
  return {
    url,
    firstToken: stdout.find((line) => TOKEN_LINE.test(line)),
    stdout,
    stderr,
    stop,
    [Symbol.asyncDispose]: async () => {
      await stop();
    },
  };
}
