/**
 * A node's rows rendered into bytes of a text format (engine/render/render_bytes.ts), in batches of
 * about 64 KiB (rendered.ts): in a scan worker for the plan's root, or in the query's thread
 * when its result format is fixed. A projection of the result's columns at the top is fused
 * into the writer: each value is computed from the input row and written, and the projected row
 * is never made. Where each of those columns is a field of the source right below, a source
 * that holds its records as columns (a block of the column cache) writes them from the columns
 * (ExecContext.rendered), and no row is made at all.
 */

import type { Column, PlanNode } from "../plan/plan.ts";
import {
  ByteSink,
  type ColumnVectors,
  compileColumnBytesWriter,
  compileRowBytesWriter,
} from "../render/render_bytes.ts";
import {
  type BatchStream,
  checkCancelled,
  type DirectRender,
  type ExecContext,
} from "../plan/context.ts";
import { frameText, RenderedRows, type RenderTask } from "../render/rendered.ts";

/** Rows rendered below this many bytes wait for the next batch's. */
const RENDERED_BYTES = 64 * 1024;

/**
 * The rows of `node` (opened with `open`, run.ts's openNode) rendered as `render` says;
 * `nulls[i]` is set when column i held a null.
 */
export async function* renderRows(
  node: PlanNode,
  ctx: ExecContext,
  render: RenderTask,
  open: (node: PlanNode, ctx: ExecContext) => BatchStream,
  nulls: boolean[],
): AsyncGenerator<RenderedRows> {
  const { columns } = render;
  const fused = node.kind === "project" && !node.copyInput &&
    node.columns.length === columns.length && node.columns.every((c, i) => c.name === columns[i]);
  const frame = frameText(render.frame);
  const write = compileRowBytesWriter(render.format, columns, render.options, {
    ...(fused ? { read: node.columns.map((c) => c.fn) } : {}),
    nulls,
    ...frame,
  });
  // Small at first, grown as rows need (to about 2 × RENDERED_BYTES): a trivial query renders
  // a few bytes, and 128 KiB a query was a tenth of its cost in collections (4 KiB still 1%).
  const sink = new ByteSink(256);
  const ends: number[] = [];
  // Each column a field of the source right below, as it is: a block the source holds as
  // columns is written from them (ExecContext.rendered), no row made.
  // Only a source right below is given it: a node between (a sort, a view, an unnest) would
  // pass it on to a source whose rows it should have taken.
  const fields = fused && node.input.kind === "source" ? node.columns.map(plainField) : null;
  const direct = fields?.every((f) => f !== null)
    ? compileColumnBytesWriter(render.format, columns, render.options, sink, ends, nulls, frame)
    : undefined;
  const rows = !fused
    ? open(node, ctx)
    : direct
    ? open(node.input, { ...ctx, rendered: { fields: fields as string[], block: direct.block } })
    : open(node.input, ctx);
  const take = () => {
    const part = new RenderedRows(
      sink.bytes.slice(0, sink.at),
      Uint32Array.from(ends),
      render.frame,
    );
    sink.at = 0;
    ends.length = 0;
    return part;
  };
  for await (const batch of rows) {
    checkCancelled(ctx.signal);
    // An empty batch: the source wrote rows from its columns (or had none to give).
    if (batch.length > 0) write(batch, sink, ends);
    if (sink.at >= RENDERED_BYTES) yield take();
  }
  if (ends.length > 0) yield take();
}

/** The field a column is, when it is a plain field of its input, unchanged; else null. */
function plainField(c: Column): string | null {
  if (c.field !== undefined) return c.field;
  const e = c.origin?.expr;
  return e?.kind === "field" ? e.name : null;
}

/** Rows of columns written at a time (about 75 KiB of the wide task's JSON). */
const WRITTEN_ROWS = 512;

/**
 * Rows `[0, n)` of `columns` (or those `picks` names) written by `render` (a source under
 * ExecContext.rendered), an empty batch handed out after each WRITTEN_ROWS of them, so that
 * their bytes are taken as they are made.
 */
export async function* writtenColumns(
  columns: readonly ColumnVectors[],
  picks: Int32Array | null,
  n: number,
  render: DirectRender,
  ctx: ExecContext,
): BatchStream {
  const write = render.block(columns);
  for (let i = 0; i < n; i += WRITTEN_ROWS) {
    write(picks, i, Math.min(n, i + WRITTEN_ROWS));
    yield [];
    if (ctx.slicer) await ctx.slicer.check();
  }
}
