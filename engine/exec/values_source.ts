/** `VALUES(...)`: rows computed at compile time, handed out in batches. */

import type { Row } from "../values/values.ts";
import { BATCH_ROWS, type BatchStream, checkCancelled, type ExecContext } from "../plan/context.ts";

export async function* valuesSource(rows: readonly Row[], ctx: ExecContext): BatchStream {
  for (let i = 0; i < rows.length; i += BATCH_ROWS) {
    checkCancelled(ctx.signal);
    // Copies, so that a consumer that changes rows cannot change the plan.
    yield rows.slice(i, i + BATCH_ROWS).map((r) => ({ ...r }));
  }
}
