/**
 * `@[table.sxt]`: the rows of a stored table, read in batches. (Stored scripts `@[x.sx](...)`
 * are inlined by the planner as their own plan; see engine/planning/views.ts.)
 */

import { CorruptTable, readTable } from "../table/table_reader.ts";
import type { Row } from "../values/values.ts";
import type { TreeFiles } from "../contracts/resource_tree.ts";
import { QueryError } from "../front/diagnostics.ts";
import { BATCH_ROWS, type BatchStream, checkCancelled, type ExecContext } from "../plan/context.ts";

export async function* storedTableSource(
  table: { canonical: string; real: string; files: TreeFiles },
  ctx: ExecContext,
): BatchStream {
  let out: Row[] = [];
  try {
    for await (const chunk of readTable(table.files, table.real, ctx.signal, table.canonical)) {
      checkCancelled(ctx.signal);
      for (const row of Array.isArray(chunk) ? chunk : [chunk]) {
        out.push(row as Row);
        if (out.length >= BATCH_ROWS) {
          yield out;
          out = [];
        }
      }
    }
  } catch (e) {
    if (e instanceof QueryError || ctx.signal.aborted) throw e;
    if (e instanceof CorruptTable) {
      throw new QueryError({ code: "CORRUPT_TABLE", message: e.message });
    }
    // The system's message would name the host path of the table's location: not told.
    throw new QueryError({
      code: "RUNTIME_ERROR",
      message: `the stored table ${table.canonical} cannot be read`,
    });
  }
  if (out.length > 0) yield out;
}
