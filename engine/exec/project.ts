/** `select(...)` without aggregates: one output row per input row. */

import type { Column } from "../plan/plan.ts";
import type { Row } from "../values/values.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "../plan/context.ts";
import { ROWS_PER_LOOK } from "./filter.ts";

export async function* projectRows(
  input: BatchStream,
  spec: { columns: readonly Column[]; copyInput: boolean },
  ctx: ExecContext,
): BatchStream {
  const { columns, copyInput } = spec;
  const slicer = ctx.slicer;
  for await (const batch of input) {
    checkCancelled(ctx.signal);
    const out: Row[] = new Array(batch.length);
    for (let i = 0; i < batch.length; i++) {
      const row = batch[i]!;
      const made: Row = copyInput ? { ...row } : {};
      for (const c of columns) made[c.name] = c.fn(row);
      out[i] = made;
      // An expression may take milliseconds a row (regex_extract over long lines): turns of
      // the event loop within the batch, as filterRows takes.
      if (slicer && i % ROWS_PER_LOOK === ROWS_PER_LOOK - 1 && slicer.due()) await slicer.turn();
    }
    yield out;
  }
}
