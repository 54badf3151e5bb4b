/**
 * `save(path)`: writes the rows to a stored table and passes them on. The table is replaced
 * atomically when the input ends; a failed or cancelled query aborts the writer, leaving the
 * earlier table as it was.
 */

import { createTableWriter } from "../table/table_writer.ts";
import { storageError } from "../table/storage_error.ts";
import type { Schema } from "../values/types.ts";
import type { TreeFiles } from "../contracts/resource_tree.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "../plan/context.ts";
import { SchemaObserver } from "./schema_observer.ts";

export async function* saveRows(
  input: BatchStream,
  target: {
    real: string;
    canonical: string;
    files: TreeFiles;
    schema: Schema;
    open?: boolean | undefined;
  },
  ctx: ExecContext,
): BatchStream {
  const observer = new SchemaObserver(target.schema, target.open ?? false);
  const writer = createTableWriter(target.files, target.real, target.schema);
  // A full disk or a refused name is a plain query error naming the table, not a bug.
  const doing = `saving the table '${target.canonical}'`;
  let committed = false;
  try {
    for await (const batch of input) {
      checkCancelled(ctx.signal);
      observer.observe(batch);
      try {
        await writer.write(batch);
      } catch (e) {
        throw storageError(e, doing);
      }
      yield batch;
    }
    checkCancelled(ctx.signal);
    try {
      await writer.commit(observer.schema());
    } catch (e) {
      throw storageError(e, doing);
    }
    committed = true;
  } finally {
    if (!committed) await writer.abort();
  }
}
