/** A running query as its caller sees it: options in, batches and a schema out. */

import type { Warning } from "../contracts/datastore.ts";
import type { Schema } from "../values/types.ts";
import type { Row } from "../values/values.ts";
import type { QueryStats } from "../plan/context.ts";
import type { RenderedRows, RenderRequest } from "../render/rendered.ts";

export interface ExecuteOptions {
  readonly signal: AbortSignal;
  /** Called with a fraction 0..1 that never decreases; 1 when done. */
  readonly onProgress?: (fraction: number) => void;
  readonly onWarning?: (warning: Warning) => void;
  /** Counters the engine adds to while it runs (files, bytes, records, rows, cloud requests). */
  readonly stats?: QueryStats | undefined;
  /**
   * The result's text format when fixed before the run: rows made in scan workers may then
   * arrive rendered (`QueryRun.parts`), see engine/render/rendered.ts.
   */
  readonly render?: RenderRequest;
}

export interface QueryRun {
  /** Batches of result rows; ends when the query has completed. Throws QueryError on failure. */
  readonly batches: AsyncIterable<readonly Row[]>;
  /**
   * With `ExecuteOptions.render`: the same result as `batches`, where some batches may come
   * rendered (a caller reads one or the other, not both).
   */
  readonly parts?: AsyncIterable<readonly Row[] | RenderedRows>;
  /** The result schema; final once `batches` is exhausted (ANY resolved from the data). */
  schema(): Schema;
}
