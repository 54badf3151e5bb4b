/** `limit(n [, offset])`: returns as soon as it has enough, which closes the sources upstream. */

import type { Row } from "../values.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "./context.ts";

export async function* limitRows(
  input: BatchStream,
  bounds: { count: number; offset: number },
  ctx: ExecContext,
): BatchStream {
  let skip = bounds.offset;
  let left = bounds.count;
  if (left <= 0) return;
  let last: readonly Row[] | null = null;
  for await (const batch of input) {
    checkCancelled(ctx.signal);
    let rows = batch;
    if (skip > 0) {
      const n = Math.min(skip, rows.length);
      skip -= n;
      rows = rows.slice(n);
    }
    if (rows.length === 0) continue;
    if (rows.length >= left) {
      last = rows.slice(0, left);
      // Leaving the for-await calls return() on the input: its files close before the last
      // rows go out.
      break;
    }
    left -= rows.length;
    yield rows;
  }
  if (last) yield last;
}
