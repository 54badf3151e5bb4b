/**
 * Where a store's fetched hour files and their fetch state are kept: host files under
 * `<home>/engine_data/cloud_api/<store>/` (the files storage, hour_store.ts), or values of the
 * server's Storage (a Deno KV shared by several servers), where a second server reading the same
 * store and hour uses what the first one fetched.
 *
 * In a Storage a file `<path>` of store `<store>` is two keys written in one atomic commit:
 *
 *   ["cloud_api", <store>, "data", ...path]    the JSON lines (chunked by the backend when large)
 *   ["cloud_api", <store>, "state", ...path]   { hours, size, modified }: the fetch state
 *
 * so a reader never sees records without their state or a state that claims missing records. A
 * merge reads both and commits on both versions (compare-and-swap): two servers merging hours into
 * one day file at once both land, neither is lost. Both keys expire (`expireIn`) when the last
 * hour they hold has left the family's time window (its `*TimeWindow`): no query reads it then.
 */

import { join } from "node:path";
import { type Storage, StorageError, type StorageKey } from "../../engine/contracts/storage.ts";
import { HOUR_MS } from "./refresh_policy.ts";
import {
  type FileState,
  type LogRecord,
  markFetched,
  mergeIntoFile,
  type MergeOptions,
  mergeRecords,
  parseRecordLines,
  readState,
  recordLines,
  withFileLock,
} from "./hour_store.ts";

export interface StoredFile {
  readonly size: number;
  /** Epoch ms of the last write. */
  readonly modified: number;
}

/** The hour files of one store; `path` is `/`-separated, relative to the store's folder. */
export interface HourFiles {
  readState(path: string): Promise<FileState>;
  /**
   * Merges `records` into the file and marks `options.fetched` in its state, as one change; the
   * backend may drop the file `retainMs` after the end of the last hour its state holds.
   */
  merge(
    path: string,
    records: readonly LogRecord[],
    options: MergeOptions & {
      readonly retainMs: number;
    },
  ): Promise<void>;
  /** The file's size and time, or null when it holds nothing. */
  stat(path: string): Promise<StoredFile | null>;
  open(path: string, signal: AbortSignal): Promise<ReadableStream<Uint8Array>>;
}

/** The files storage: host files, as always (hour_store.ts). */
export function folderHourFiles(root: string): HourFiles {
  return {
    readState: (path) => readState(join(root, path)),
    merge: async (path, records, options) => {
      const file = join(root, path);
      await withFileLock(file, () => mergeIntoFile(file, records, options));
    },
    stat: async (path) => {
      try {
        const info = await Deno.stat(join(root, path));
        return { size: info.size, modified: info.mtime?.getTime() ?? 0 };
      } catch {
        return null;
      }
    },
    open: async (path, signal) => {
      const f = await Deno.open(join(root, path), { read: true });
      signal.addEventListener("abort", () => {
        try {
          f.close();
        } catch { /* already closed */ }
      }, { once: true });
      return f.readable;
    },
  };
}

interface StoredState extends FileState {
  /** Bytes of the data value; absent when no records were ever written. */
  readonly size?: number | undefined;
  readonly modified?: number | undefined;
}

/** Merges retried when another server changed the file between our read and our commit. */
const MERGE_ATTEMPTS = 20;

/** A Storage (the KV shared by several servers): see the header. */
export function storageHourFiles(storage: Storage, store: string): HourFiles {
  const key = (kind: "data" | "state", path: string): StorageKey => [
    "cloud_api",
    store,
    kind,
    ...path.split("/"),
  ];
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  const stateOf = async (path: string) => {
    const stored = await storage.get(key("state", path));
    return { stored, state: stored ? parseState(decode(stored.value)) : { hours: {} } };
  };
  return {
    readState: async (path) => (await stateOf(path)).state,
    merge: async (path, records, options) => {
      for (let attempt = 0; attempt < MERGE_ATTEMPTS; attempt++) {
        const data = await storage.get(key("data", path));
        const { stored, state } = await stateOf(path);
        const before = data ? parseRecordLines(decode(data.value)) : [];
        const all = mergeRecords(before, records, options);
        const writeData = all.length > 0 || records.length > 0;
        const bytes = writeData ? new TextEncoder().encode(recordLines(all)) : undefined;
        const next: StoredState = {
          hours: markFetched(state, options),
          ...(bytes ? { size: bytes.length, modified: Date.now() } : {
            size: state.size,
            modified: state.modified,
          }),
        };
        const last = Math.max(...Object.keys(next.hours).map(Number), options.now - HOUR_MS);
        const expireInMs = Math.max(HOUR_MS, last + HOUR_MS + options.retainMs - options.now);
        const result = await storage.commit([
          ...(bytes
            ? [{
              key: key("data", path),
              value: bytes,
              expectedVersion: data?.version ?? null,
              expireInMs,
            }]
            : []),
          {
            key: key("state", path),
            value: new TextEncoder().encode(JSON.stringify(next)),
            expectedVersion: stored?.version ?? null,
            expireInMs,
          },
        ]);
        if (result.ok) return;
      }
      throw new StorageError(`cloud hour file '${store}/${path}': too many concurrent writers`);
    },
    stat: async (path) => {
      const { state } = await stateOf(path);
      return state.size === undefined ? null : { size: state.size, modified: state.modified ?? 0 };
    },
    open: async (path) => {
      const data = await storage.get(key("data", path));
      const bytes = data?.value ?? new Uint8Array();
      return new ReadableStream({
        start(controller) {
          if (bytes.length > 0) controller.enqueue(bytes);
          controller.close();
        },
      });
    },
  };
}

function parseState(text: string): StoredState {
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === "object" && parsed.hours) return parsed as StoredState;
  } catch { /* a state that is not JSON counts as none */ }
  return { hours: {} };
}
