/**
 * `limit(n [, offset])`: returns as soon as it has enough, which closes the sources upstream;
 * unless `drain`: a `save` upstream must see its input to the end (its table holds every row),
 * so the limit passes its rows on and then reads the rest without passing it.
 */

import type { Row } from "../values/values.ts";
import { type BatchStream, checkCancelled, type ExecContext } from "../plan/context.ts";

export async function* limitRows(
  input: BatchStream,
  bounds: { count: number; offset: number },
  ctx: ExecContext,
  drain = false,
): BatchStream {
  let skip = bounds.offset;
  let left = bounds.count;
  if (left <= 0) {
    if (drain) { for await (const _ of input) checkCancelled(ctx.signal); }
    return;
  }
  let last: readonly Row[] | null = null;
  const rows = input[Symbol.asyncIterator]();
  try {
    for (let next = await rows.next(); !next.done; next = await rows.next()) {
      checkCancelled(ctx.signal);
      let batch = next.value;
      if (skip > 0) {
        const n = Math.min(skip, batch.length);
        skip -= n;
        batch = batch.slice(n);
      }
      if (batch.length === 0) continue;
      if (batch.length >= left) {
        last = batch.slice(0, left);
        break;
      }
      left -= batch.length;
      yield batch;
    }
    if (last && drain) {
      yield last;
      last = null;
      for (let next = await rows.next(); !next.done; next = await rows.next()) {
        checkCancelled(ctx.signal);
      }
    }
  } finally {
    // Closing the input before the last rows go out: its files close first.
    await rows.return?.();
  }
  if (last) yield last;
}
