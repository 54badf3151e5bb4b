/**
 * LIST: one row per matched file, without reading any of them:
 * `uri` STRING, `size` LONG, `modified` TIMESTAMP, `path_time` ?TIMESTAMP.
 *
 *   listSource(store.list(uri, options), ctx)
 */

import type { FileEntry } from "../contracts/datastore.ts";
import { type Field, scalar, type Schema } from "../values/types.ts";
import { type Row, Timestamp } from "../values/values.ts";
import { BATCH_ROWS, type BatchStream, checkCancelled, type ExecContext } from "../plan/context.ts";

/** The schema of LIST's rows. */
export const LIST_SCHEMA: Schema = [
  { name: "uri", type: scalar("STRING"), nullable: false },
  { name: "size", type: scalar("LONG"), nullable: false },
  { name: "modified", type: scalar("TIMESTAMP"), nullable: false },
  { name: "path_time", type: scalar("TIMESTAMP"), nullable: true },
] satisfies readonly Field[];

export async function* listSource(
  files: AsyncIterable<FileEntry> | Iterable<FileEntry>,
  ctx: ExecContext,
): BatchStream {
  let rows: Row[] = [];
  for await (const f of files) {
    checkCancelled(ctx.signal);
    rows.push({
      uri: f.uri,
      size: f.size,
      modified: new Timestamp(f.modified),
      path_time: f.pathTime === null ? null : new Timestamp(f.pathTime),
    });
    if (rows.length >= BATCH_ROWS) {
      yield rows;
      rows = [];
    }
  }
  if (rows.length > 0) yield rows;
}
