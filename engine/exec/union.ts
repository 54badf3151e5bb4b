/**
 * `union(@a, @b)`: the inputs one after another; fields missing on one side are null. A field
 * widened to STRING (its types differed beyond numbers) carries its other values as text, the
 * text `STRING(x)` gives, so that the rows agree with the schema. An open input (READ_JSON) names
 * more fields than the schema knows, row by row: an open union keeps them.
 */

import { toText } from "../render/render.ts";
import type { Schema } from "../values/types.ts";
import type { Row, Value } from "../values/values.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "../plan/context.ts";

export async function* unionRows(
  inputs: readonly BatchStream[],
  schema: Schema,
  ctx: ExecContext,
  open = false,
): BatchStream {
  const opts = { timeZone: ctx.timeZone };
  const asText = (v: Value): Value => (v === null || typeof v === "string" ? v : toText(v, opts));
  const fields = schema.map((f) => ({ name: f.name, text: f.type.kind === "STRING" }));
  const known = new Set(fields.map((f) => f.name));
  for (const input of inputs) {
    for await (const batch of input) {
      checkCancelled(ctx.signal);
      yield batch.map((row) => {
        const out: Row = {};
        for (const f of fields) {
          const v = row[f.name] ?? null;
          out[f.name] = f.text ? asText(v) : v;
        }
        if (open) {
          for (const name in row) if (!known.has(name)) out[name] = row[name]!;
        }
        return out;
      });
    }
  }
}
