/** `select(...)` without aggregates: one output row per input row. */

import type { Column } from "../plan/plan.ts";
import { isTuple, type Row } from "../values/values.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "../plan/context.ts";
import { ROWS_PER_LOOK } from "./filter.ts";

/**
 * A column named with this prefix (`e.*` over a tuple whose members are known only from the
 * data, planning/select.ts) spreads its value's members into the row instead of being one.
 */
export const SPREAD_PREFIX = "\u0000spread:";

export async function* projectRows(
  input: BatchStream,
  spec: { columns: readonly Column[]; copyInput: boolean },
  ctx: ExecContext,
): BatchStream {
  const { columns, copyInput } = spec;
  const spread = columns.map((c) => c.name.startsWith(SPREAD_PREFIX));
  const slicer = ctx.slicer;
  for await (const batch of input) {
    checkCancelled(ctx.signal);
    const out: Row[] = new Array(batch.length);
    for (let i = 0; i < batch.length; i++) {
      const row = batch[i]!;
      const made: Row = copyInput ? { ...row } : {};
      for (let k = 0; k < columns.length; k++) {
        const c = columns[k]!;
        if (!spread[k]) made[c.name] = c.fn(row);
        else {
          const v = c.fn(row);
          if (isTuple(v)) Object.assign(made, v);
        }
      }
      out[i] = made;
      // An expression may take milliseconds a row (regex_extract over long lines): turns of
      // the event loop within the batch, as filterRows takes.
      if (slicer && i % ROWS_PER_LOOK === ROWS_PER_LOOK - 1 && slicer.due()) await slicer.turn();
    }
    yield out;
  }
}
