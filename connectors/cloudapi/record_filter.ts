/**
 * Keeps the JSON lines of a stored file whose time field lies in [from, to): a day file holds
 * every hour that any query fetched, and a query must see the hours it asked for only, whatever
 * ran before it. Lines are streamed, never the whole file at once.
 */

export interface RecordRange {
  /** The record field that places a record in time (see the log types of families.ts). */
  readonly field: string;
  /** Epoch ms, inclusive. */
  readonly from: number;
  /** Epoch ms, exclusive. */
  readonly to: number;
}

/** Epoch ms of a record time (ISO 8601; without a zone it is UTC, as the suite writes it). */
export function recordTime(value: unknown): number {
  if (typeof value !== "string") return NaN;
  return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : value + "Z");
}

/** A transform that passes the lines of records inside the range, each ending with `\n`. */
export function recordsInRange(range: RecordRange): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let rest = "";
  const keep = (line: string): boolean => {
    if (line.trim() === "") return false;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      return true; // not ours to judge: the reader reports it
    }
    const t = recordTime((record as Record<string, unknown> | null)?.[range.field]);
    return !(t < range.from || t >= range.to);
  };
  const emit = (lines: string[], c: TransformStreamDefaultController<Uint8Array>) => {
    const kept = lines.filter(keep);
    if (kept.length > 0) c.enqueue(encoder.encode(kept.join("\n") + "\n"));
  };
  return new TransformStream({
    transform(chunk, c) {
      const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
      rest = lines.pop() ?? "";
      emit(lines, c);
    },
    flush(c) {
      emit([rest + decoder.decode()], c);
    },
  });
}
