/** A running query as its caller sees it: options in, batches and a schema out. */

import type { Warning } from "../datastore.ts";
import type { Schema } from "../types.ts";
import type { Row } from "../values.ts";
import type { QueryStats } from "./context.ts";

export interface ExecuteOptions {
  readonly signal: AbortSignal;
  /** Called with a fraction 0..1 that never decreases; 1 when done. */
  readonly onProgress?: (fraction: number) => void;
  readonly onWarning?: (warning: Warning) => void;
  /** Counters the engine adds to while it runs (files, bytes, records, rows, cloud requests). */
  readonly stats?: QueryStats;
}

export interface QueryRun {
  /** Batches of result rows; ends when the query has completed. Throws QueryError on failure. */
  readonly batches: AsyncIterable<readonly Row[]>;
  /** The result schema; final once `batches` is exhausted (ANY resolved from the data). */
  schema(): Schema;
}
