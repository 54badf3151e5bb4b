/**
 * Stored log files and their fetch state. A file is JSON lines (one record per line, so
 * READ_JSON reads it); beside it a hidden sidecar `.<file name>.state.json` records, per hour,
 * when it was last fetched and how many records it had. Both are written atomically and durably
 * (engine/fs/atomic_write.ts), data first, so a crash never leaves a state that claims missing
 * data.
 */

import { dirname, join } from "node:path";
import { writeFileAtomic } from "../../engine/fs/atomic_write.ts";

export interface HourState {
  /** Epoch ms of the last complete fetch of the hour. */
  readonly fetchedAt: number;
  readonly records: number;
  /**
   * Epoch ms of the last time records of this hour came in with another hour's fetch (a suite
   * log's late content), without the hour being fetched: its records changed all the same.
   */
  readonly touchedAt?: number;
}

/** A text that changes whenever the hour's stored records may have (actors/scheduler.ts). */
export function hourStamp(state: HourState | undefined): string | null {
  return state ? `${state.fetchedAt}/${state.records}/${state.touchedAt ?? ""}` : null;
}

export interface FileState {
  /** Keyed by the hour's start, epoch ms as a decimal string. */
  readonly hours: Readonly<Record<string, HourState>>;
}

export type LogRecord = Record<string, unknown>;

/** Host path of the sidecar state of `file`. */
export function statePath(file: string): string {
  const dir = dirname(file);
  const name = file.slice(dir.length + 1);
  return join(dir, `.${name}.state.json`);
}

/** The fetch state of `file`, empty when it has none (or an unreadable one). */
export async function readState(file: string): Promise<FileState> {
  try {
    const parsed = JSON.parse(await Deno.readTextFile(statePath(file)));
    if (parsed && typeof parsed === "object" && parsed.hours) return parsed as FileState;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound) && !(e instanceof SyntaxError)) throw e;
  }
  return { hours: {} };
}

/** Reads the records of a stored file; none when it does not exist. */
export async function readRecords(file: string): Promise<LogRecord[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
  return parseRecordLines(text);
}

/** Writes `text` to `path` atomically and durably, creating folders as needed. */
async function writeAtomic(path: string, text: string): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, text);
}

/**
 * In-flight work per host file. Module-wide on purpose: a file is one per process, so every store
 * and server instance in the process must queue on the same entry; entries go when idle, so
 * there is nothing to stop at shutdown.
 */
const locks = new Map<string, Promise<unknown>>();

/** Runs `work` with `file` to itself within this process (two queries fetching one hour). */
export function withFileLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  const before = locks.get(file) ?? Promise.resolve();
  const run = before.catch(() => {}).then(work);
  const tail = run.catch(() => {});
  locks.set(file, tail);
  tail.then(() => {
    if (locks.get(file) === tail) locks.delete(file);
  });
  return run;
}

export interface MergeOptions {
  readonly idField: string;
  readonly timeField: string;
  /** Hours to mark as fetched now, with the records each had. */
  readonly fetched: ReadonlyMap<number, number>;
  /** Hours, fetched before and not now, that `records` holds records of (marked `touchedAt`). */
  readonly touched?: ReadonlySet<number>;
  readonly now: number;
}

/**
 * Merges `records` into `file` (same id: the newer copy wins; no record twice), sorted by time,
 * then records the fetched hours in the state. Call inside withFileLock.
 */
export async function mergeIntoFile(
  file: string,
  records: readonly LogRecord[],
  options: MergeOptions,
): Promise<number> {
  const all = mergeRecords(await readRecords(file), records, options);
  if (all.length > 0 || records.length > 0) await writeAtomic(file, recordLines(all));
  if (options.fetched.size > 0 || (options.touched?.size ?? 0) > 0) {
    const hours = markFetched(await readState(file), options);
    await writeAtomic(statePath(file), JSON.stringify({ hours }, null, 1) + "\n");
  }
  return all.length;
}

/** `stored` and `records` as one list (same id: the newer copy wins), sorted by time. */
export function mergeRecords(
  stored: readonly LogRecord[],
  records: readonly LogRecord[],
  options: Pick<MergeOptions, "idField" | "timeField">,
): LogRecord[] {
  const byId = new Map<string, LogRecord>();
  const anonymous: LogRecord[] = [];
  for (const r of [...stored, ...records]) {
    const id = r[options.idField];
    if (id === undefined || id === null) anonymous.push(r);
    else byId.set(String(id), r);
  }
  const all = [...byId.values(), ...anonymous];
  const t = options.timeField;
  all.sort((a, b) => String(a[t] ?? "").localeCompare(String(b[t] ?? "")));
  return all;
}

/** The text of a stored file: one record per line. */
export function recordLines(records: readonly LogRecord[]): string {
  return records.map((r) => JSON.stringify(r)).join("\n") + "\n";
}

/** Parses the text of a stored file. */
export function parseRecordLines(text: string): LogRecord[] {
  const out: LogRecord[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() !== "") out.push(JSON.parse(line));
  }
  return out;
}

/** The hours of `state` with the hours of `options.fetched` marked as fetched now. */
export function markFetched(
  state: FileState,
  options: Pick<MergeOptions, "fetched" | "now" | "touched">,
): Record<string, HourState> {
  const hours: Record<string, HourState> = { ...state.hours };
  for (const hour of options.touched ?? []) {
    const before = hours[String(hour)];
    // An hour never fetched stays so: it is fetched (whole) when read.
    if (before && !options.fetched.has(hour)) {
      hours[String(hour)] = { ...before, touchedAt: options.now };
    }
  }
  for (const [hour, count] of options.fetched) {
    hours[String(hour)] = { fetchedAt: options.now, records: count };
  }
  return hours;
}
