/**
 * The queries' records (`queries/q/<id>`: owner, server, the status as the API shows it, schema,
 * fixed format, where the result is) and the tombstones of freed ones (`queries/gone/<id>`,
 * answered 410 until they expire). The server that took a query writes its record as it
 * changes; any server reads it.
 */

import type { QueryState } from "../query_machine.ts";
import { decodeJson, encodeJson, goneKey, recordKey, RECORDS } from "./keys.ts";
import { type CommitEntry, type Diagnostic, type Storage } from "../../engine/mod.ts";

/** Where a query's shared result is. */
export interface SharedResult {
  readonly count: number;
  readonly pages: number;
  readonly pageItems: number;
}

/** The status object as the API shows it (`state` inside). */
export type SharedStatus = Record<string, unknown> & { readonly state: QueryState };

/** A query's record in the storage. */
export interface SharedRecord {
  readonly queryId: string;
  readonly owner: string;
  /** The owner's time zone (User.timeZone), for the result read by an admin through another server. */
  readonly ownerTimeZone?: string;
  readonly server: string;
  /** Milliseconds since the epoch, when it was admitted. */
  readonly submitted: number;
  readonly scriptPath: string;
  readonly excerpt: string;
  readonly status: SharedStatus;
  /** The result's schema (schemaToJson), once known. */
  readonly schema?: unknown;
  /** The format fixed at POST (routes' FixedFormat), opaque here. */
  readonly fixedFormat?: unknown;
  /** Where its result is, once SUCCEEDED and stored; absent when it is not shared. */
  readonly result?: SharedResult;
  /** A synchronous query: its result is never kept, only its status. */
  readonly answered?: boolean;
  /** Freed or expired: the id answers 410 until the tombstone expires. */
  readonly freed?: boolean;
}

export interface Versioned {
  readonly record: SharedRecord;
  readonly version: string;
}

export class Records {
  constructor(
    readonly storage: Storage,
    readonly options: { readonly retentionMs: number; readonly expiredMemoryMs: number },
  ) {}

  /** The record of a query (or its tombstone), or null. */
  async get(queryId: string): Promise<Versioned | null> {
    const stored = await this.storage.get(recordKey(queryId)) ??
      await this.storage.get(goneKey(queryId));
    if (!stored) return null;
    return { record: decodeJson(stored) as SharedRecord, version: stored.version };
  }

  /**
   * The records of unfinished and retained queries (not freed, not answered synchronously) that
   * `visible` lets through; each is read, so this costs one read per query held.
   */
  async list(visible: (owner: string) => boolean): Promise<SharedRecord[]> {
    const records: SharedRecord[] = [];
    for await (const key of this.storage.list(RECORDS)) {
      const stored = await this.storage.get(key);
      if (!stored) continue;
      const record = decodeJson(stored) as SharedRecord;
      if (record.freed || record.answered || !visible(record.owner)) continue;
      records.push(record);
    }
    return records;
  }

  /** The commit entry that creates a new query's record. */
  create(record: SharedRecord): CommitEntry {
    return { key: recordKey(record.queryId), value: encodeJson(record), expectedVersion: null };
  }

  /** The commit entry that removes a record. */
  remove(queryId: string): CommitEntry {
    return { key: recordKey(queryId), value: null };
  }

  /** The commit entry of a finished query's record, over `version`: kept for the retention. */
  final(record: SharedRecord, version: string | null): CommitEntry {
    return {
      key: recordKey(record.queryId),
      value: encodeJson(record),
      expectedVersion: version,
      expireInMs: this.options.retentionMs,
    };
  }

  /** Writes an unfinished query's record over `version`: its new version, or null if lost. */
  async update(record: SharedRecord, version: string | null): Promise<string | null> {
    const written = await this.storage.put(recordKey(record.queryId), encodeJson(record), {
      expectedVersion: version,
    });
    return written.ok ? written.version : null;
  }

  /** Replaces the record by a tombstone (out of queries/q: listing does not read freed ones). */
  async tombstone(found: Versioned): Promise<void> {
    const { record, version } = found;
    const tombstone: SharedRecord = {
      queryId: record.queryId,
      owner: record.owner,
      server: record.server,
      submitted: record.submitted,
      scriptPath: "",
      excerpt: "",
      status: { state: record.status.state },
      freed: true,
    };
    await this.storage.commit([
      { key: recordKey(record.queryId), value: null, expectedVersion: version },
      {
        key: goneKey(record.queryId),
        value: encodeJson(tombstone),
        expireInMs: this.options.expiredMemoryMs,
      },
    ]);
  }
}

/** `record` marked FAILED at `now` with `message` (another server found it orphaned). */
export function failedRecord(record: SharedRecord, message: string, now: number): SharedRecord {
  const error: Diagnostic = { code: "RUNTIME_ERROR", message };
  return {
    ...record,
    status: {
      ...record.status,
      state: "FAILED",
      error,
      stateChanges: [
        ...(record.status.stateChanges as unknown[] ?? []),
        { millis: now, from: record.status.state, to: "FAILED" },
      ],
    },
  };
}
