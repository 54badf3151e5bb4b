/** `filter(cond)` / `filter_out(cond)`: a row passes when the condition is true (null is false). */

import type { RowFn } from "../plan/plan.ts";
import type { Row } from "../values/values.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "../plan/context.ts";

/**
 * Rows between two looks at the query's time slice inside a batch: a condition may take
 * milliseconds a row (a regular expression over long lines through re2js), and a batch of a
 * thousand such rows in one go held the server's event loop for seconds.
 */
export const ROWS_PER_LOOK = 8;

export async function* filterRows(
  input: BatchStream,
  condition: RowFn,
  options: { negated: boolean; ctx: ExecContext },
): BatchStream {
  const { negated, ctx } = options;
  const slicer = ctx.slicer;
  for await (const batch of input) {
    checkCancelled(ctx.signal);
    // filter_out drops the rows where the condition is true; null is not true, so it keeps them.
    if (slicer === undefined) {
      const out = batch.filter((row) => (condition(row) === true) !== negated);
      if (out.length > 0) yield out;
      continue;
    }
    const out: Row[] = [];
    for (let i = 0; i < batch.length; i++) {
      const row = batch[i]!;
      if ((condition(row) === true) !== negated) out.push(row);
      if (i % ROWS_PER_LOOK === ROWS_PER_LOOK - 1 && slicer.due()) await slicer.turn();
    }
    if (out.length > 0) yield out;
  }
}
