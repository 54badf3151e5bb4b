/** `select(...)` without aggregates: one output row per input row. */

import type { Column } from "../plan.ts";
import type { Row } from "../values.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "./context.ts";

export async function* projectRows(
  input: BatchStream,
  spec: { columns: readonly Column[]; copyInput: boolean },
  ctx: ExecContext,
): BatchStream {
  const { columns, copyInput } = spec;
  for await (const batch of input) {
    checkCancelled(ctx.signal);
    yield batch.map((row) => {
      const out: Row = copyInput ? { ...row } : {};
      for (const c of columns) out[c.name] = c.fn(row);
      return out;
    });
  }
}
