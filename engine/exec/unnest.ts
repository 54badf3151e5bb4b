/**
 * `unnest(array [as name])`: one row per element; a null or empty array gives no row.
 * `leftunnest(...)` keeps such a row once, with the element null (as a left join keeps a row
 * with no match).
 */

import type { RowFn } from "../plan/plan.ts";
import type { Row } from "../values/values.ts";
import { BATCH_ROWS, type BatchStream, checkCancelled, type ExecContext } from "../plan/context.ts";

export async function* unnestRows(
  input: BatchStream,
  spec: { array: RowFn; name: string; outer?: boolean },
  ctx: ExecContext,
): BatchStream {
  // An array of a million elements makes a million rows: they go out BATCH_ROWS at a time,
  // with turns of the event loop between batches (in the server's thread; a scan worker serves
  // nobody else).
  let out: Row[] = [];
  for await (const batch of input) {
    checkCancelled(ctx.signal);
    for (const row of batch) {
      const value = spec.array(row);
      if (!Array.isArray(value) || value.length === 0) {
        if (spec.outer) out.push({ ...row, [spec.name]: null });
        continue;
      }
      for (const element of value) {
        out.push({ ...row, [spec.name]: element });
        if (out.length >= BATCH_ROWS) {
          yield out;
          out = [];
          await ctx.slicer?.check();
        }
      }
    }
    // A batch's rows go out before the next batch is read.
    if (out.length > 0) {
      yield out;
      out = [];
    }
  }
}
