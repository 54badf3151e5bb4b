/** Writes a whole stream of rows as a stored table, atomically (see engine/table/table_writer.ts), for tests. */

import type { Schema } from "../../engine/values/types.ts";
import type { Row } from "../../engine/values/values.ts";
import { createTableWriter } from "../../engine/table/table_writer.ts";
import { hostFiles } from "./host_files.ts";

/**
 * Replaces the table at `realPath` with `rows`. On an error or when `signal` aborts, the
 * temporary file is removed, the previous table is left as it was, and the error is rethrown.
 */
export async function writeTable(
  realPath: string,
  schema: Schema,
  rows: AsyncIterable<readonly Row[]>,
  signal?: AbortSignal,
): Promise<{ rows: number; bytes: number }> {
  const writer = createTableWriter(hostFiles, realPath, schema);
  try {
    for await (const batch of rows) {
      signal?.throwIfAborted();
      await writer.write(batch);
    }
    signal?.throwIfAborted();
  } catch (e) {
    await writer.abort();
    throw e;
  }
  return await writer.commit();
}
