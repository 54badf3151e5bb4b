/**
 * Result rows that arrive rendered: when a query's result format is fixed before it runs (a
 * text format, engine/render/render_bytes.ts) and its root is a row pipeline that runs in the scan
 * workers, the workers write their rows straight into bytes of that format and the query's
 * thread stores the bytes as they come. No row object crosses the worker boundary and none is
 * made in the query's thread: a wide result is rendered on every core.
 *
 * Only a closed schema with no ANY in it qualifies: its columns are known before the first row
 * (the writer is compiled for them), and all the result's schema learns from the rows is which
 * columns held a null, which the workers tell when done.
 */

import type { RenderOptions } from "./render.ts";
import type { RowTextFormat } from "./render_bytes.ts";

/** The text format a query's rows may be rendered in as they are made. */
export interface RenderRequest {
  readonly format: RowTextFormat;
  readonly options: RenderOptions;
  /**
   * The framing of the result's body around each row, rendered with it (RenderedRows.frame):
   * the body is then the stored bytes as they are.
   */
  readonly frame?: RowFrame;
  /**
   * The consumer places rendered batches by their `lane` (RenderedRows.lane: the share they
   * come from, lanes one after the other), so the workers' batches may come as they are made,
   * in any order across shares (actors/result_store.ts appendRendered).
   */
  readonly lanes?: boolean;
}

/**
 * What a body of the result's format writes around each row (routes/formats.ts): `separator`
 * between two rows, `before` and `after` each. Rows rendered with their frame are stored as
 * `separator + before + row + after`; a body leaves out the separator of its first row.
 */
export interface RowFrame {
  readonly separator: string;
  readonly before: string;
  readonly after: string;
}

/** A frame as the text a row writer puts before and after each row (RowBytesSource). */
export function frameText(frame: RowFrame | undefined): { lead?: string; trail?: string } {
  return frame ? { lead: frame.separator + frame.before, trail: frame.after } : {};
}

/** Whether two frames write the same text. */
export function sameFrame(a: RowFrame | undefined, b: RowFrame | undefined): boolean {
  return a === b ||
    (a !== undefined && b !== undefined && a.separator === b.separator &&
      a.before === b.before && a.after === b.after);
}

/** What a worker is asked to render: the request and the columns, in order. */
export interface RenderTask extends RenderRequest {
  readonly columns: readonly string[];
}

/**
 * A batch of rendered rows: `bytes` holds them back to back, row i ends at `ends[i]` (byte
 * offsets into `bytes`); with a `frame`, each row with its frame around it (RowFrame). `lane`:
 * the share of the scan it comes from, when batches come in any order (RenderRequest.lanes);
 * `laneEnds`: its lane has no rows after these (the consumer may place the lane for good:
 * ResultStore.endLane), as an empty batch when the share is done.
 */
export class RenderedRows {
  constructor(
    readonly bytes: Uint8Array<ArrayBuffer>,
    readonly ends: Uint32Array,
    readonly frame?: RowFrame,
    readonly lane?: number,
    readonly laneEnds = false,
  ) {}

  /** The empty batch that tells that `lane` has every row (see `laneEnds`). */
  static laneEnd(lane: number): RenderedRows {
    return new RenderedRows(new Uint8Array(0), new Uint32Array(0), undefined, lane, true);
  }

  get count(): number {
    return this.ends.length;
  }
}
