/**
 * The server log: one line per event on stderr (stdout is kept for what the CLI prints, such
 * as tokens and the listening address). Nothing secret goes into it: callers log names and
 * paths, never tokens or query strings.
 *
 * Lines for stderr are batched: `console.error` per line is a synchronous write to a pipe,
 * which was some 5% of the server's CPU under load with a line per request. Lines are queued
 * in order and written by one asynchronous write per batch, started by a timer FLUSH_MS after
 * the first line of the batch (a microtask was too soon: the write of stderr completes at
 * once, so batches were a line or two and the writes cost as much as before); what arrives
 * while a write is in flight goes into the next one. `flush()` (at shutdown) waits for
 * everything queued, and an `unload` listener writes what is left synchronously should the
 * process end otherwise.
 */

export type LogLevel = "INFO" | "WARN" | "ERROR";

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  /** An unexpected failure; the stack goes to the log, never to a client. */
  error(message: string, error?: unknown): void;
  /** Resolves once every line logged so far has been written. */
  flush(): Promise<void>;
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}

/** C0 and C1 control characters, DEL, and the Unicode line and paragraph separators. */
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/g;

/**
 * `text` with every control character written as an escape (`\n`, `\x1b`, `\u2028`), so that
 * text from a request (a decoded path, a user name, a message quoting either) can never start
 * a line of its own, forge one, or send a terminal escape sequence.
 *
 * @example escapeControl("/healthz\n2026 ERROR forged") // "/healthz\\n2026 ERROR forged"
 */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => {
    switch (c) {
      case "\n":
        return "\\n";
      case "\r":
        return "\\r";
      case "\t":
        return "\\t";
    }
    const code = c.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** Where lines go: `write` takes one line (without its newline); `flush` waits for them. */
export interface LineSink {
  write(line: string): void;
  flush(): Promise<void>;
}

/** The synchronous part of a writer, as Deno.stderr has it (tests pass their own). */
export interface ByteWriter {
  write(bytes: Uint8Array): Promise<number>;
  writeSync(bytes: Uint8Array): number;
}

const encoder = new TextEncoder();

/** How long a line may wait for others to share its write. */
export const FLUSH_MS = 10;

/**
 * A sink writing lines to `out` in batches, in the order they came. A failed write (stderr
 * closed) loses that batch and is not retried: the log must never take the server down.
 */
export function batchedSink(out: ByteWriter = Deno.stderr): LineSink {
  let queued: string[] = [];
  /** Settles when the current batch has been written; null while nothing is in flight. */
  let writing: Promise<void> | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const take = (): Uint8Array | null => {
    if (queued.length === 0) return null;
    const text = queued.join("\n") + "\n";
    queued = [];
    return encoder.encode(text);
  };

  const drain = async (): Promise<void> => {
    for (let bytes = take(); bytes !== null; bytes = take()) {
      try {
        for (let at = 0; at < bytes.length;) at += await out.write(bytes.subarray(at));
      } catch {
        // stderr is gone; nothing sensible is left to do with the line.
      }
    }
  };

  const start = () => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (writing !== null) return;
    writing = drain().finally(() => {
      writing = null;
      // Lines queued between the last take and here.
      if (queued.length > 0) start();
    });
  };

  const writeRestSync = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const bytes = take();
    if (bytes === null) return;
    try {
      for (let at = 0; at < bytes.length;) at += out.writeSync(bytes.subarray(at));
    } catch {
      // as above
    }
  };
  // The process may end without a flush (an exception, Deno.exit): the queue is written then.
  globalThis.addEventListener("unload", writeRestSync);

  return {
    write(line) {
      queued.push(line);
      if (queued.length === 1 && writing === null && timer === undefined) {
        timer = setTimeout(start, FLUSH_MS);
      }
    },
    async flush() {
      while (writing !== null || queued.length > 0) {
        start();
        await writing;
      }
    },
  };
}

/**
 * A logger writing `<ISO time> <LEVEL> <message>` lines to `sink` (stderr, batched, by
 * default) or to a plain function (each line at once).
 */
export function createLogger(
  sink: LineSink | ((line: string) => void) = batchedSink(),
): Logger {
  const { write, flush }: LineSink = typeof sink === "function"
    ? { write: sink, flush: () => Promise.resolve() }
    : sink;
  // Every line is escaped here, the one place lines are made: a caller cannot forget it.
  const emit = (level: LogLevel, message: string, detail?: string) =>
    write(`${new Date().toISOString()} ${level} ${escapeControl(message)}${detail ?? ""}`);
  return {
    info: (message) => emit("INFO", message),
    warn: (message) => emit("WARN", message),
    // A stack keeps its lines, each escaped and indented: none can pass for a line of its own.
    error: (message, error) =>
      emit(
        "ERROR",
        message,
        error === undefined
          ? undefined
          : describe(error).split("\n").map((l) => `\n    ${escapeControl(l)}`).join(""),
      ),
    flush,
  };
}

/** A logger that keeps its lines in memory, for tests. */
export function memoryLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  return { lines, ...createLogger((line) => lines.push(line)) };
}
