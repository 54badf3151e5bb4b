/** `union(@a, @b)`: the inputs one after another; fields missing on one side are null. */

import type { Schema } from "../types.ts";
import type { Row } from "../values.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "./context.ts";

export async function* unionRows(
  inputs: readonly BatchStream[],
  schema: Schema,
  ctx: ExecContext,
): BatchStream {
  for (const input of inputs) {
    for await (const batch of input) {
      checkCancelled(ctx.signal);
      yield batch.map((row) => {
        const out: Row = {};
        for (const f of schema) out[f.name] = row[f.name] ?? null;
        return out;
      });
    }
  }
}
