/**
 * The segments of a result store (result_store.ts): runs of items kept as bytes, in memory or
 * in the spill file, and how they are encoded and decoded. A segment of rows is the UTF-8 of
 * one JSON array (rows in the lossless form of engine/table/sxt_values.ts); a segment of
 * fragments is their texts back to back with where each ends; a segment of rendered rows is
 * their bytes as rendered, with where each ends in them.
 */

import { decodeParsedRow, type Row, type RowFrame } from "../engine/mod.ts";

export type StoredItem = Row | string;

/** A run of SEGMENT_ITEMS items (the last one may be shorter), in memory or in the file. */
export interface Segment {
  /** Its first item's index: set when the segments are placed (seal), lane after lane. */
  first: number;
  /** The lane it came in (appendRendered): lanes are placed one after the other. */
  readonly lane: number;
  readonly count: number;
  /** The encoded items when kept in memory (taken away once consumed). */
  bytes?: Uint8Array | undefined;
  /**
   * Read by the one reader of a result read once (a synchronous answer: ResultStore.follow
   * with `once`) and let go of: no other read may give it.
   */
  consumed?: boolean;
  /** Where they are in the spill file otherwise. */
  readonly offset: number;
  readonly length: number;
  /**
   * For a segment of fragments: where each ends in the segment's decoded text (UTF-16 units),
   * the fragments being stored back to back as they are; absent for a segment of rows.
   */
  readonly ends?: Uint32Array;
  /** For a segment of rendered rows (appendRendered): where each ends in its bytes. */
  readonly byteEnds?: Uint32Array;
  /** For a segment of rendered rows: the frame each row was rendered with, if any. */
  readonly frame?: RowFrame;
}

/** Items per segment: the unit encoded, spilled and read back. */
export const SEGMENT_ITEMS = 1024;

/** Rendered batches of a lane are gathered into segments of about this many bytes. */
export const RUN_BYTES = 1 << 20;
/** The buffer of a run: room for the batch that takes it past RUN_BYTES. */
export const RUN_BUFFER = RUN_BYTES + 64 * 1024;

/** Rendered batches of one lane gathered before they are kept as one segment. */
export interface LaneRun {
  buffer: Uint8Array<ArrayBuffer>;
  bytes: number;
  readonly ends: number[];
  readonly frame: RowFrame | undefined;
}

/** Copies a batch of rendered rows (row i ends at `ends[i]`) at the end of `run`. */
export function addToRun(run: LaneRun, bytes: Uint8Array, ends: Uint32Array): void {
  const length = ends[ends.length - 1];
  if (run.bytes + length! > run.buffer.length) {
    const grown = new Uint8Array(Math.max(2 * run.buffer.length, run.bytes + length!));
    grown.set(run.buffer.subarray(0, run.bytes));
    release(run.buffer);
    run.buffer = grown;
  }
  run.buffer.set(bytes.subarray(0, length), run.bytes);
  for (let i = 0; i < ends.length; i++) run.ends.push(run.bytes + ends[i]!);
  run.bytes += length!;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * About what `items` take as they came (objects on the heap): their strings and a little per
 * value and per item. Cheap, since the first items are kept to spare encoding them.
 */
export function roughBytes(items: readonly StoredItem[]): number {
  let bytes = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item === "string") {
      bytes += 32 + item.length;
      continue;
    }
    bytes += 64;
    for (const key in item) {
      const value = item[key];
      bytes += 16 + (typeof value === "string" ? value.length : 8);
    }
  }
  return bytes;
}

/**
 * Frees the memory of bytes no longer needed at once: a detached ArrayBuffer lets go of its
 * backing store, which the garbage collector would otherwise keep until it next runs.
 */
export function release(bytes: Uint8Array | undefined): void {
  const buffer = bytes?.buffer;
  if (!(buffer instanceof ArrayBuffer) || buffer.detached) return;
  try {
    buffer.transfer(0);
  } catch {
    // Not detachable (a structured clone's bytes, as a distributed share's rendered rows are
    // read back from the shares table): the collector frees it in its time.
  }
}

/** The UTF-8 length of a text. */
function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/**
 * Rendered rows as texts: each without its frame (the text a row writer gives), as `append`
 * would have stored it.
 */
export function decodeRendered(
  bytes: Uint8Array,
  ends: Uint32Array,
  frame: RowFrame | undefined,
): string[] {
  if (!frame) return decodeSegment(bytes, undefined, ends) as string[];
  const lead = utf8Length(frame.separator + frame.before);
  const trail = utf8Length(frame.after);
  const text = decoder.decode(bytes);
  const out = new Array<string>(ends.length);
  let start = 0;
  if (text.length === bytes.length) {
    // ASCII: byte offsets are the text's.
    for (let i = 0; i < ends.length; i++) {
      out[i] = text.slice(start + lead, ends[i]! - trail);
      start = ends[i]!;
    }
    return out;
  }
  for (let i = 0; i < ends.length; i++) {
    out[i] = decoder.decode(bytes.subarray(start + lead, ends[i]! - trail));
    start = ends[i]!;
  }
  return out;
}

/** Where each of the UTF-8 texts ending at `byteEnds` in `bytes` ends in their decoded text. */
function utf16Ends(bytes: Uint8Array, byteEnds: Uint32Array): Uint32Array {
  const out = new Uint32Array(byteEnds.length);
  let units = 0;
  let at = 0;
  for (let i = 0; i < byteEnds.length; i++) {
    for (const end = byteEnds[i]; at < end!; at++) {
      const b = bytes[at];
      // A lead byte starts a character: one unit, two for a 4-byte one (a surrogate pair).
      if ((b! & 0xc0) !== 0x80) units += b! >= 0xf0 ? 2 : 1;
    }
    out[i] = units;
  }
  return out;
}

// A segment of fragments is their text back to back, cut where `ends` says (or `byteEnds`, in
// bytes); a segment of rows is one JSON array of them.
export function decodeSegment(
  bytes: Uint8Array,
  ends: Uint32Array | undefined,
  byteEnds?: Uint32Array,
): string[] | StoredItem[] {
  if (byteEnds !== undefined) {
    const text = decoder.decode(bytes);
    ends = text.length === bytes.length ? byteEnds : utf16Ends(bytes, byteEnds);
  }
  if (ends !== undefined) {
    const text = decoder.decode(bytes);
    const fragments = new Array<string>(ends.length);
    let start = 0;
    for (let i = 0; i < ends.length; i++) {
      fragments[i] = text.slice(start, ends[i]);
      start = ends[i]!;
    }
    return fragments;
  }
  const items = JSON.parse(decoder.decode(bytes)) as unknown[];
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item !== "string") items[i] = decodeParsedRow(item as Record<string, unknown>);
  }
  return items as StoredItem[];
}

/** How a ResultStore keeps its items (actors/result_store.ts). */
export interface ResultStoreOptions {
  /** Bytes the items kept in memory may take before further ones go to disk. */
  readonly memoryBytes: number;
  /** `<home>/engine_data/results`; the spill file is `<dir>/<queryId>`. */
  readonly spillDir: string;
  /**
   * Charged with every byte stored (in memory or on disk), released when the store is dropped:
   * the owner's share of results (actors/result_quota.ts). Its `charge` throws to refuse.
   */
  readonly account?:
    | {
      charge(bytes: number): void;
      keep?(bytes: number): boolean;
      unkeep?(bytes: number): void;
      close(): void;
    }
    | undefined;
}
