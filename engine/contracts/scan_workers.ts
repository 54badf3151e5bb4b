/**
 * The contract between the engine and the workers that run shares of a query's scan (the
 * engine owns it; actors/scan_workers.ts implements it with Web Workers). A worker gets its
 * part of the plan as plain data (`PartDescription`, made by the planner's split), builds its
 * operators from it (engine/exec/parallel/part_description.ts: no script compiled, no view
 * loaded, no right checked again), runs its share of the part's input and posts what it made;
 * the query's own thread merges the shares once.
 */

import type { ColumnCacheConfig } from "./column_cache.ts";
import type { Warning } from "./datastore.ts";
import type { Diagnostic } from "../front/diagnostics.ts";
import type { Expr } from "../front/ast.ts";
import type { User } from "./user.ts";
import type { RenderTask } from "../render/rendered.ts";
import type { EngineLimits } from "./engine_limits.ts";
import type { Field, Schema, Type } from "../values/types.ts";

/**
 * An expression as the worker compiles it: its syntax tree (literal values encoded), the fields
 * it was typed against (null: an open schema) and the values of the `$constants` it reads (a
 * view's arguments among them), resolved when the query was planned.
 */
export interface ExprDescription {
  readonly expr: Expr;
  readonly fields: readonly Field[] | null;
  readonly params: readonly ParamDescription[];
  readonly label: string;
}

export interface ParamDescription {
  readonly name: string;
  /** The value as engine/table/sxt_values.ts encodes it (structured-clone safe). */
  readonly value: unknown;
  readonly type: Type;
}

/**
 * The fields a source adds beside a record's own (`line_field:`, `raw_field:`): their names.
 * A share then gives the number of each record's first line in its file, and its text.
 */
export interface RecordExtraNames {
  readonly line?: string;
  readonly raw?: string;
}

/** How a source that workers may read reads its files: PARSE with its pattern's text and the
 * sub-patterns it named (text by name), or READ_JSON. */
export type SourceReader =
  | {
    readonly kind: "PARSE";
    readonly pattern: string;
    readonly subPatterns: readonly (readonly [string, string])[];
    /** `unmatched: 'ignore'`: no warning for the records that do not match. */
    readonly ignoreUnmatched?: boolean;
    /** `zone:` the zone of its times without one, when not the query's. */
    readonly timeZone?: string;
    readonly extra?: RecordExtraNames;
  }
  | { readonly kind: "READ_JSON"; readonly extra?: RecordExtraNames };

/** The source a part reads, as plain data: what it is, where its files are, what it reads. */
export interface SourceDescription {
  readonly kind: "source";
  readonly label: string;
  readonly schema: Schema;
  readonly open: boolean;
  /** PARSE: its pattern's text and the sub-patterns it named (text by name); READ_JSON. */
  readonly reader: SourceReader;
  /** The source's `src` and its time bounds (epoch ms), listed in the worker as on the server. */
  readonly src: string;
  readonly from?: number;
  readonly to?: number;
  readonly fields: readonly string[] | null;
  readonly paths?: readonly (readonly [string, readonly (readonly string[])[]])[];
  readonly filter: {
    readonly condition: ExprDescription;
    readonly negated: boolean;
    readonly reads: readonly string[];
  } | null;
}

/** A column of a projection or an aggregate's outputs. */
export interface ColumnDescription extends ExprDescription {
  readonly name: string;
}

/**
 * The part of a plan a worker runs, as plain data that survives a structured clone: its source
 * and the operators above it up to the merge point (an aggregate, whose partial the worker
 * makes; a top-N sort; or the row pipeline itself).
 */
export type PartDescription =
  | SourceDescription
  | {
    readonly kind: "view";
    readonly schema: Schema;
    readonly open: boolean;
    readonly canonical: string;
    readonly input: PartDescription;
  }
  | {
    readonly kind: "filter";
    readonly schema: Schema;
    readonly open: boolean;
    readonly input: PartDescription;
    readonly condition: ExprDescription;
    readonly negated: boolean;
    readonly reads: readonly string[];
  }
  | {
    readonly kind: "project";
    readonly schema: Schema;
    readonly open: boolean;
    readonly input: PartDescription;
    readonly columns: readonly ColumnDescription[];
    readonly copyInput: boolean;
    readonly reads: readonly string[] | null;
  }
  | {
    readonly kind: "unnest";
    readonly schema: Schema;
    readonly open: boolean;
    readonly input: PartDescription;
    readonly array: ExprDescription;
    readonly name: string;
    readonly outer: boolean;
    readonly reads: readonly string[];
  }
  | {
    readonly kind: "sort";
    readonly schema: Schema;
    readonly open: boolean;
    readonly input: PartDescription;
    readonly keys: readonly (ExprDescription & { readonly descending: boolean })[];
    readonly reads: readonly string[];
    readonly top: number | null;
  }
  | {
    readonly kind: "aggregate";
    readonly schema: Schema;
    readonly open: boolean;
    readonly input: PartDescription;
    readonly keys: readonly (ExprDescription & { readonly field?: string })[];
    readonly aggregates: readonly AggregateDescription[];
    readonly outputs: readonly ColumnDescription[];
    readonly reads: readonly string[];
  };

/** One aggregate of a grouped select: the function by its name, its argument (null: `*`). */
export interface AggregateDescription {
  readonly slot: string;
  readonly label: string;
  readonly name: string;
  readonly arg: ExprDescription | null;
  /** The constant numbers after the argument (`percentile(x, 0.95)`). */
  readonly params?: readonly number[];
  readonly fold?: "count" | "sum";
  readonly argField?: string;
}

export interface ScanWorkers {
  /** How many workers one query's scan may use (the setting `query.workers`). */
  readonly count: number;
  /** Bytes below which a share is not worth a worker of its own. */
  readonly minShareBytes: number;
  /**
   * About the input of one share when a scan's rows are rendered and placed by their lane
   * (engine/exec/parallel/parallel_aggregate.ts, `laneShares`): LANE_BYTES by default.
   */
  readonly laneBytes?: number;
  /**
   * Bytes above which a scan runs in a worker even as one share (ISOLATE_BYTES by default): in
   * the query's own thread, which answers every request, a costly filter would hold them up.
   */
  readonly isolateBytes?: number;
  /** Starts one worker on `task`; `listen` hears each of its messages, the last one `done`. */
  start(task: ShareTask, listen: (message: ShareMessage) => void): ShareHandle;
  /**
   * The workers that run a scan of `bytes` of input, when not these: servers sharing a
   * PostgreSQL spread a large scan over all of them (actors/distributed_scans.ts), each share
   * still started through `start`. Absent, or undefined: these.
   */
  distribute?(bytes: number): ScanWorkers | undefined;
}

export interface ShareHandle {
  /** Ends the worker at once (cancellation, or the merge is done). */
  stop(): void;
  /** Tells a worker that streams rows that one more batch of them was taken. */
  credit(): void;
}

/**
 * ScanWorkers.isolateBytes by default. Measured from another process against `query.workers=1`
 * with a catastrophic pattern over 7 MB of lines: in the server's thread /healthz p99 61 ms, in a
 * worker 1.5 ms, and the query no slower.
 */
export const ISOLATE_BYTES = 1 << 20;

/** Batches of rows a worker may post before the query's thread has taken them. */
export const ROW_CREDIT = 4;

/** The plain data of a query's context that a worker needs to list the part's files alike. */
export interface ShareQuery {
  readonly user: User;
  readonly workDir: string;
  readonly timeZone: string;
}

/** Part of one file: bytes [start, end), cut to lines (engine/exec/parallel/shares.ts). */
export interface FileShare {
  readonly uri: string;
  readonly start: number;
  readonly end: number;
  /** The file's whole size: a share with start 0 and end size is the whole file. */
  readonly size: number;
}

export interface ShareTask {
  readonly query: ShareQuery;
  /** The query's `now`, so that the worker's `now()` is the query's. */
  readonly now: number;
  /**
   * Which part of the plan the worker runs, by its number in the plan's split over workers
   * (engine/planning/passes/split_workers.ts, printed by explain()): an aggregate's
   * input into a partial grouping, or a row pipeline whose rows it streams.
   */
  readonly node: number;
  /** That part as plain data: the worker builds its operators from it. */
  readonly part: PartDescription;
  readonly shares: readonly FileShare[];
  /** This worker's part of the query's limits (shareLimits). */
  readonly limits: EngineLimits;
  /** The node is the plan's root and its rows are posted rendered in this format. */
  readonly render?: RenderTask;
  /** The query's column cache (engine/fs/column_cache.ts), as plain data; absent: none. */
  readonly cache?: ColumnCacheConfig;
}

export type ShareMessage =
  /** Bytes of input consumed since the last report; what was read since, for the stats. */
  | { readonly kind: "progress"; readonly bytes: number; readonly stats?: ShareStats }
  | { readonly kind: "warning"; readonly warning: Warning }
  | { readonly kind: "groups"; readonly groups: PartialGroups }
  /** A batch of a row pipeline's rows (encoded); at most ROW_CREDIT ahead of the credits. */
  | { readonly kind: "rows"; readonly rows: readonly Record<string, unknown>[] }
  /** A batch of the root's rows rendered (ShareTask.render): bytes, row i ending at ends[i]. */
  | {
    readonly kind: "rendered";
    readonly bytes: Uint8Array<ArrayBuffer>;
    readonly ends: Uint32Array;
  }
  /** The row pipeline's share is done; when it rendered, which columns held a null. */
  | { readonly kind: "done"; readonly nulls?: readonly boolean[] }
  /** The diagnostic of a QueryError (its place in the script kept), or a bug's message. */
  | { readonly kind: "failed"; readonly diagnostic: Diagnostic }
  | { readonly kind: "failed"; readonly code: "INTERNAL"; readonly message: string };

/** A share's counters (QueryStats) since its last report. */
export interface ShareStats {
  readonly bytesRead: number;
  readonly recordsRead: number;
  readonly recordsUnmatched: number;
  readonly cacheBytes?: number;
  readonly cacheBlocks?: number;
  readonly cacheBlocksSkipped?: number;
}

/**
 * Rows as columns, for a structured clone of many rows with the same fields (a scan worker's
 * partial groups: one first row per group, tens of thousands of them): a field whose every value
 * is an IPv4 address is its addresses' bits, one whose every value is a number is those numbers,
 * any other each value encoded (`encodeValue`). Cloning a few arrays costs far less than an
 * object per row, and a reader may look at a column without making the rows (aggregate.ts looks
 * groups up by an IPv4 key's bits). Made and read by engine/table/sxt_values.ts.
 */
export interface RowColumns {
  readonly length: number;
  readonly names: readonly string[];
  readonly columns: readonly (Uint32Array | Float64Array | readonly unknown[])[];
}

/**
 * A worker's groups: first rows (as columns, or encoded); per folded aggregate (count, sum)
 * numbers and flags per group, null for the others; per other aggregate each group's
 * accumulator state (Accumulator.exportState), null for the folded ones.
 */
export interface PartialGroups {
  /** Each group's first row: as columns, or encoded one by one (`encodeRow`). */
  readonly firsts: RowColumns | readonly Record<string, unknown>[];
  readonly folds: readonly ({ readonly values: Float64Array; readonly flags: Uint8Array } | null)[];
  readonly states: readonly (readonly unknown[] | null)[];
}

/** What a running query knows of its workers (on ExecContext; absent: no workers). */
export interface ParallelContext {
  readonly workers: ScanWorkers;
  readonly query: ShareQuery;
  readonly now: number;
  readonly limits: EngineLimits;
  /** The parts of the plan that run in workers (plan nodes, typed loosely here), numbered. */
  readonly nodes: ReadonlyMap<object, number>;
  /** Each part, by its number, as plain data (ShareTask.part). */
  readonly parts: readonly PartDescription[];
  /**
   * The root's rows are rendered by the workers in this format (rendered.ts); `nulls` gathers
   * which columns held a null in any share.
   */
  readonly render?: { readonly task: RenderTask; readonly nulls: boolean[] };
}
