/**
 * The server log: one line per event on stderr (stdout is kept for what the CLI prints, such
 * as tokens and the listening address). Nothing secret goes into it: callers log names and
 * paths, never tokens or query strings.
 */

export type LogLevel = "INFO" | "WARN" | "ERROR";

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  /** An unexpected failure; the stack goes to the log, never to a client. */
  error(message: string, error?: unknown): void;
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}

/** A logger writing `<ISO time> <LEVEL> <message>` lines through `write` (stderr by default). */
export function createLogger(
  write: (line: string) => void = (line) => console.error(line),
): Logger {
  const emit = (level: LogLevel, message: string) =>
    write(`${new Date().toISOString()} ${level} ${message}`);
  return {
    info: (message) => emit("INFO", message),
    warn: (message) => emit("WARN", message),
    error: (message, error) =>
      emit("ERROR", error === undefined ? message : `${message}\n${describe(error)}`),
  };
}

/** A logger that keeps its lines in memory, for tests. */
export function memoryLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  return { lines, ...createLogger((line) => lines.push(line)) };
}
