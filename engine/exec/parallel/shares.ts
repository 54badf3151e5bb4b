/**
 * Splitting a scan among workers: the files of a source, in their order, are cut into as many
 * contiguous shares as asked (one per worker, or more for a rendered root: parallel_aggregate.ts,
 * `laneShares`), of about equal bytes. A file that can be read from any offset
 * (`FileEntry.openAt`) and holds one record per line is cut into byte ranges; the others go whole
 * to one share. Share k is the k-th piece of the input, so the shares taken in order are the
 * whole input in its order.
 *
 * A range [start, end) owns the lines that START in it: its reader skips the line cut at
 * `start` (the previous range owns it) and finishes the line cut at `end`. Every line of the
 * file is thus read by exactly one range, whatever the cuts.
 *
 *   splitShares([{ uri: "a.log", size: 100, lines: true }], 2, 1)
 *   // [[{ uri: "a.log", start: 0, end: 50 }], [{ uri: "a.log", start: 50, end: 100 }]]
 */

import type { FileEntry } from "../../contracts/datastore.ts";
import type { FileShare } from "../../contracts/scan_workers.ts";

export interface ShareableFile {
  readonly uri: string;
  readonly size: number;
  /** Whether the file may be cut into line ranges (else it goes whole to one share). */
  readonly lines: boolean;
}

/**
 * At most `workers` shares (the count asked) of about equal bytes, none smaller than `minBytes`
 * (unless it holds the last file or a whole file); an empty list for no files.
 */
export function splitShares(
  files: readonly ShareableFile[],
  workers: number,
  minBytes: number,
): FileShare[][] {
  const total = files.reduce((n, f) => n + f.size, 0);
  const per = Math.max(minBytes, Math.ceil(total / Math.max(1, workers)), 1);
  const shares: FileShare[][] = [];
  let current: FileShare[] = [];
  let room = per;
  const close = () => {
    if (current.length > 0) shares.push(current);
    current = [];
    room = per;
  };
  for (const f of files) {
    if (!f.lines || f.size <= room || shares.length === workers - 1) {
      current.push({ uri: f.uri, start: 0, end: f.size, size: f.size });
      room -= f.size;
      if (room <= 0 && shares.length < workers - 1) close();
      continue;
    }
    let at = 0;
    while (at < f.size) {
      const last = shares.length === workers - 1;
      const take = last ? f.size - at : Math.min(room, f.size - at);
      current.push({ uri: f.uri, start: at, end: at + take, size: f.size });
      at += take;
      room -= take;
      if (room <= 0 && !last) close();
    }
  }
  close();
  return shares;
}

const NL = 0x0a;

/**
 * `file` seen through `share`: the lines that start in its range, as a FileEntry the sources
 * read as they read any file (its size is the range's, for progress).
 */
export function shareEntry(file: FileEntry, share: FileShare): FileEntry {
  if (share.start === 0 && share.end >= file.size) return file;
  return rangeEntry(file, share.start, share.end);
}

/**
 * The lines of `file` that start in [start, end), as a FileEntry; `seen`, when given, is told
 * each piece of bytes handed out with its offset in the file (the column cache samples them).
 */
export function rangeEntry(
  file: FileEntry,
  start: number,
  end: number,
  seen?: (at: number, bytes: Uint8Array) => void,
): FileEntry {
  const share = { start, end };
  return {
    uri: file.uri,
    size: share.end - share.start,
    modified: file.modified,
    pathTime: file.pathTime,
    ...(file.identity !== undefined ? { identity: file.identity } : {}),
    range: { file, start: share.start, end: share.end },
    open: (signal) => openRange(file, share.start, share.end, signal, seen),
  };
}

/**
 * The number (from 1) of the first line `entry` reads in its file: 1 for a whole file; for a
 * share (`entry.range`) the lines of the file before the first line that starts in its range,
 * counted by reading the bytes before it (read, not parsed), plus one. A share that asks for it
 * thus reads the file from its start; one that does not pays nothing.
 */
export async function firstLineOf(entry: FileEntry, signal: AbortSignal): Promise<number> {
  const range = entry.range;
  if (range === undefined || range.start === 0) return 1;
  const reader = (await range.file.open(signal)).getReader();
  let newlines = 0;
  let at = 0;
  let last = -1; // the byte before the range
  try {
    while (at < range.start) {
      const { value, done } = await reader.read();
      if (done) break;
      const stop = Math.min(value.length, range.start - at);
      for (let i = value.indexOf(NL); i >= 0 && i < stop; i = value.indexOf(NL, i + 1)) {
        newlines++;
      }
      if (at + stop === range.start && stop > 0) last = value[stop - 1]!;
      at += stop;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  // A line that starts at the range's first byte is the next; one cut by it belongs to the
  // share before, and the first line read is the one after it.
  return last === NL ? newlines + 1 : newlines + 2;
}

async function openRange(
  file: FileEntry,
  start: number,
  end: number,
  signal: AbortSignal,
  seen?: (at: number, bytes: Uint8Array) => void,
): Promise<ReadableStream<Uint8Array>> {
  if (start > 0 && file.openAt === undefined) {
    throw new Error(`'${file.uri}' cannot be read from an offset`);
  }
  // From the byte before the range: a line starts at `start` exactly when that byte is "\n".
  const stream = start === 0 ? await file.open(signal) : await file.openAt!(signal, start - 1);
  const reader = stream.getReader();
  /** The file offset of the next byte read. */
  let at = start === 0 ? 0 : start - 1;
  let skipping = start > 0;
  let finishing = false;
  let done = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (!done) {
        const { value, done: ended } = await reader.read();
        if (ended) break;
        let from = 0;
        let to = value.length;
        const base = at;
        at += value.length;
        if (skipping) {
          const nl = value.indexOf(NL);
          if (nl < 0) continue;
          skipping = false;
          from = nl + 1;
          // The first line owned starts at base + from; none when that is past the range.
          if (base + from >= end) {
            done = true;
            break;
          }
        }
        if (!finishing && at >= end) {
          // The range ends in this chunk: the line holding byte end - 1 is finished.
          finishing = true;
          const lastOwned = end - 1 - base;
          const nl = value.indexOf(NL, Math.max(from, lastOwned));
          if (nl >= 0) {
            to = nl + 1;
            done = true;
          }
        } else if (finishing) {
          const nl = value.indexOf(NL, from);
          if (nl >= 0) {
            to = nl + 1;
            done = true;
          }
        }
        if (to > from) {
          seen?.(base + from, value.subarray(from, to));
          controller.enqueue(value.subarray(from, to));
          if (!done) return;
        }
      }
      done = true;
      await reader.cancel().catch(() => {});
      controller.close();
    },
    async cancel() {
      await reader.cancel().catch(() => {});
    },
  }, { highWaterMark: 0 });
}
