/**
 * The engine work of one query, as plain functions that the query machine runs from its
 * SCHEDULED and RUNNING entry actions:
 * start the plan, then drain its batches into the result store (serialising them when the
 * format was fixed at POST). Both take an AbortSignal; aborting stops the engine, which closes
 * what it opened.
 */

import {
  ByteSink,
  compileRowBytesWriter,
  type Diagnostic,
  execute,
  frameText,
  type Plan,
  QueryError,
  type QueryRun,
  type QueryStats,
  RenderedRows,
  type RenderRequest,
  type Row,
  type RowBytesWriter,
  type Schema,
  StorageError,
  type Warning,
} from "../engine/mod.ts";
import type { Logger } from "../home/log.ts";
import type { ResultStore } from "./result_store.ts";

/**
 * Turns rows into stored fragments for a format fixed at POST; made once the columns are known.
 * With `render`, the fragments are the rows in that text format, written straight into bytes
 * (engine/render/render_bytes.ts, the same bytes as the row serialiser's text): by the scan workers
 * when the engine can, else here; the factory is still called once, with the columns.
 */
export interface FragmentEncoderFactory {
  (columns: readonly string[]): (row: Row) => string;
  readonly render?: RenderRequest;
}

export interface EngineReport {
  readonly onProgress: (fraction: number) => void;
  readonly onWarning: (warning: Warning) => void;
  /** The query's counters, added to by the engine while it runs. */
  readonly stats?: QueryStats;
  /** The text format of the result when fixed at POST (FragmentEncoderFactory.render). */
  readonly render?: RenderRequest;
}

/** Starts the plan; execute() checks what it can before the first batch. */
export function startEngine(plan: Plan, signal: AbortSignal, report: EngineReport): QueryRun {
  return execute(plan, {
    signal,
    onProgress: report.onProgress,
    onWarning: report.onWarning,
    stats: report.stats,
    // The store places the workers' batches by their share (lanes): they come as made.
    ...(report.render ? { render: { ...report.render, lanes: true } } : {}),
  });
}

/** Reads every batch into the store; resolves with the final schema. */
export async function drainEngine(
  run: QueryRun,
  store: ResultStore,
  options: { readonly signal: AbortSignal; readonly encoder?: FragmentEncoderFactory | undefined },
): Promise<Schema> {
  let encode: ((row: Row) => string) | undefined;
  const render = options.encoder?.render;
  let writeBytes: RowBytesWriter | undefined;
  // Made when rows come that are not rendered yet (the engine renders them itself where it
  // can: a trivial query's answer comes rendered), small at first: it grows as rows need.
  let sink: ByteSink | undefined;
  const ends: number[] = [];
  // The engine's batches take turns of the event loop by the query's TimeSlicer (run.ts), whose
  // slices count the time spent here storing them.
  for await (const batch of run.parts ?? run.batches) {
    if (options.signal.aborted) break;
    if (batch instanceof RenderedRows) {
      // Rendered by the workers for the schema's columns (the schema is closed). The factory is
      // called once all the same: it fixes the result's columns (a CSV header, the schema).
      encode ??= options.encoder!(run.schema().map((f) => f.name));
      // Rendered with the frame of the render request (RowFrame), as the rows below are.
      await store.appendRendered(batch.bytes, batch.ends, render?.frame, batch.lane);
      if (batch.laneEnds) await store.endLane(batch.lane ?? 0);
      continue;
    }
    if (batch.length === 0) continue;
    if (render) {
      sink ??= new ByteSink(1024);
      if (!writeBytes) {
        const columns = columnsOf(run.schema(), batch);
        encode = options.encoder!(columns);
        writeBytes = compileRowBytesWriter(
          render.format,
          columns,
          render.options,
          frameText(render.frame),
        );
      }
      sink.at = 0;
      ends.length = 0;
      writeBytes(batch, sink, ends);
      await store.appendRendered(
        sink.bytes.slice(0, sink.at),
        Uint32Array.from(ends),
        render.frame,
      );
    } else if (options.encoder) {
      encode ??= options.encoder(columnsOf(run.schema(), batch));
      const out = new Array<string>(batch.length);
      for (let i = 0; i < batch.length; i++) out[i] = encode(batch[i]!);
      await store.append(out);
    } else await store.append(batch);
  }
  if (options.signal.aborted) {
    throw options.signal.reason ?? new DOMException("cancelled", "AbortError");
  }
  await store.seal();
  return run.schema();
}

/** The column names of a result: the schema's, then any further key of the first rows. */
export function columnsOf(schema: Schema, rows: readonly Row[]): string[] {
  const columns = schema.map((f) => f.name);
  const known = new Set(columns);
  for (const row of rows.slice(0, 16)) {
    for (const k in row) {
      if (!known.has(k)) {
        known.add(k);
        columns.push(k);
      }
    }
  }
  return columns;
}

/**
 * The diagnostic a failed run reports: the QueryError's; the storage's public message when the
 * server's storage failed under it (not a bug: the client may run it again; the log has the
 * message with what it names); else an internal error, a bug.
 */
export function failureOf(error: unknown, log: Logger): Diagnostic {
  if (error instanceof QueryError) return error.diagnostic;
  if (error instanceof StorageError) {
    log.warn(`a query failed as the server's storage failed: ${error.message}`);
    return error.diagnostic;
  }
  log.error("a query failed through an internal error", error);
  return {
    code: "RUNTIME_ERROR",
    message: "internal error while running the query (a bug; the server log has the details)",
  };
}
