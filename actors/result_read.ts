/**
 * Reading a result store's segments (result_segments.ts) over a range of items: those kept in
 * memory as they are, those in the spill file read back, rendered ones as their bytes, and
 * rendered segments that follow each other in the file and in the range in one read.
 */

import { decodeSegment, release, type Segment, type StoredItem } from "./result_segments.ts";
import { RenderedRows, type RowFrame, sameFrame } from "../engine/mod.ts";

/** Spilled rendered segments are read back in runs of about this many bytes. */
/** A read cut short because the result was dropped (freed) meanwhile: the body must break. */
export class ResultDroppedError extends Error {
  constructor(queryId: string, why = "was freed while it was being read") {
    super(`the result of query ${queryId} ${why}`);
    this.name = "ResultDroppedError";
  }
}

const READ_BYTES = 1 << 20;

/**
 * The items of `segments` (placed: see ResultStore's seal) in `first..last` (inclusive), a
 * segment or a run of rendered ones at a time; `path` is the spill file. `check(segment)`
 * throws when that segment may not be read (the result was dropped meanwhile, or its one reader
 * consumed it): the reader must then break, never end as if whole. A rendered part's bytes are good until the next part is asked for (reads from the
 * file reuse one buffer).
 */
export async function* readSegments(
  segments: readonly Segment[],
  first: number,
  last: number,
  path: string,
  check: (segment: Segment) => void,
): AsyncGenerator<readonly StoredItem[] | RenderedRows> {
  let file: Deno.FsFile | undefined;
  /** One buffer for every read from the file: a part is copied out before the next. */
  let buffer: Uint8Array<ArrayBuffer> | undefined;
  try {
    /** Where the file's position is (a read goes on from where the last ended: no seek). */
    let position = -1;
    for (let k = 0; k < segments.length; k++) {
      const s = segments[k];
      if (s!.first + s!.count <= first || s!.first > last) continue;
      // Never a shorter document that looks whole: the body breaks instead.
      check(s!);
      const from = Math.max(first, s!.first) - s!.first;
      const to = Math.min(last, s!.first + s!.count - 1) - s!.first;
      if (s!.byteEnds && !s!.bytes) {
        // Rendered segments that follow each other in the file and in the range are read in
        // one go, up to READ_BYTES: a read (and a part) per 64 KiB segment cost more than
        // the copy.
        let end = k;
        let length = s!.length;
        while (
          end + 1 < segments.length && from === 0 && to === s!.count - 1 && length < READ_BYTES &&
          isNextInFile(segments[end]!, segments[end + 1]!) &&
          segments[end + 1]!.first + segments[end + 1]!.count - 1 <= last
        ) {
          end++;
          length += segments[end]!.length;
        }
        file ??= await Deno.open(path, { read: true });
        if (!buffer || buffer.length < length) {
          buffer = new Uint8Array(Math.max(length, READ_BYTES + 64 * 1024));
        }
        const bytes = buffer.subarray(0, length);
        await readAt(file, s!.offset, bytes, path, position);
        position = s!.offset + length;
        yield end === k
          ? renderedPart(bytes, s!.byteEnds, from, to, s!.frame)
          : joinedPart(bytes, segments.slice(k, end + 1));
        k = end;
        continue;
      }
      let bytes = s!.bytes;
      if (!bytes) {
        file ??= await Deno.open(path, { read: true });
        bytes = new Uint8Array(s!.length);
        await readAt(file, s!.offset, bytes, path, position);
        position = s!.offset + s!.length;
      }
      if (s!.byteEnds) {
        yield renderedPart(bytes, s!.byteEnds, from, to, s!.frame);
        continue;
      }
      const items = decodeSegment(bytes, s!.ends);
      yield from === 0 && to === items.length - 1 ? items : items.slice(from, to + 1);
    }
  } finally {
    file?.close();
    release(buffer);
  }
}

/** Rows `from..to` (inclusive) of a segment of rendered rows, their ends made relative. */
function renderedPart(
  bytes: Uint8Array,
  ends: Uint32Array,
  from: number,
  to: number,
  frame: RowFrame | undefined,
) {
  const start = from === 0 ? 0 : ends[from - 1];
  const part = ends.slice(from, to + 1);
  if (start! > 0) { for (let i = 0; i < part.length; i++) part[i]! -= start!; }
  // A view, not a copy: the part is written out at once.
  return new RenderedRows(bytes.subarray(start, ends[to]) as Uint8Array<ArrayBuffer>, part, frame);
}

/**
 * Fills `bytes` from `offset` of the file, whose position is `position` (-1: unknown); a seek
 * only when they differ.
 */
async function readAt(
  file: Deno.FsFile,
  offset: number,
  bytes: Uint8Array,
  path: string,
  position: number,
): Promise<void> {
  // An lseek never waits for the disk: done in place, not as an async op on the thread pool,
  // which cost ~50 µs or more a call on a loaded machine (the lanes interleave in the file).
  if (offset !== position) file.seekSync(offset, Deno.SeekMode.Start);
  let got = 0;
  while (got < bytes.length) {
    const n = await file.read(bytes.subarray(got));
    if (n === null) throw new Error(`spill file ${path} is shorter than its index`);
    got += n;
  }
}

/** Whether segment `b` follows `a` in the spill file, both rendered rows. */
function isNextInFile(a: Segment, b: Segment): boolean {
  return !a.bytes && !b.bytes && a.byteEnds !== undefined && b.byteEnds !== undefined &&
    b.offset === a.offset + a.length && sameFrame(a.frame, b.frame);
}

/** Whole rendered segments read in one go as one part: their ends joined. */
function joinedPart(bytes: Uint8Array<ArrayBuffer>, segments: readonly Segment[]): RenderedRows {
  const ends = new Uint32Array(segments.reduce((n, s) => n + s.count, 0));
  let at = 0;
  let base = 0;
  for (const s of segments) {
    const own = s.byteEnds!;
    for (let i = 0; i < own.length; i++) ends[at++] = base + own[i]!;
    base += s.length;
  }
  return new RenderedRows(bytes, ends, segments[0]!.frame);
}
