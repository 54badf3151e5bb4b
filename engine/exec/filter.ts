/** `filter(cond)` / `filter_out(cond)`: a row passes when the condition is true (null is false). */

import type { RowFn } from "../plan.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "./context.ts";

export async function* filterRows(
  input: BatchStream,
  condition: RowFn,
  options: { negated: boolean; ctx: ExecContext },
): BatchStream {
  const { negated, ctx } = options;
  for await (const batch of input) {
    checkCancelled(ctx.signal);
    // filter_out drops the rows where the condition is true; null is not true, so it keeps them.
    const out = batch.filter((row) => (condition(row) === true) !== negated);
    if (out.length > 0) yield out;
  }
}
