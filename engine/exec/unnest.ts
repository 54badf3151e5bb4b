/** `unnest(array [as name])`: one row per element; a null or empty array gives no row. */

import type { RowFn } from "../plan.ts";
import type { Row } from "../values.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "./context.ts";

export async function* unnestRows(
  input: BatchStream,
  spec: { array: RowFn; name: string },
  ctx: ExecContext,
): BatchStream {
  for await (const batch of input) {
    checkCancelled(ctx.signal);
    const out: Row[] = [];
    for (const row of batch) {
      const value = spec.array(row);
      if (!Array.isArray(value)) continue;
      for (const element of value) out.push({ ...row, [spec.name]: element });
    }
    if (out.length > 0) yield out;
  }
}
