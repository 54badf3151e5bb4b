/**
 * `save(path)`: writes the rows to a stored table and passes them on. The table is replaced
 * atomically when the input ends; a failed or cancelled query aborts the writer, leaving the
 * earlier table as it was.
 */

import { createTableWriter } from "../table/table_writer.ts";
import type { Schema } from "../types.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "./context.ts";
import { SchemaObserver } from "./schema_observer.ts";

export async function* saveRows(
  input: BatchStream,
  target: { real: string; schema: Schema; open?: boolean },
  ctx: ExecContext,
): BatchStream {
  const observer = new SchemaObserver(target.schema, target.open ?? false);
  const writer = await createTableWriter(target.real, target.schema);
  let committed = false;
  try {
    for await (const batch of input) {
      checkCancelled(ctx.signal);
      observer.observe(batch);
      await writer.write(batch);
      yield batch;
    }
    checkCancelled(ctx.signal);
    await writer.commit(observer.schema());
    committed = true;
  } finally {
    if (!committed) await writer.abort();
  }
}
