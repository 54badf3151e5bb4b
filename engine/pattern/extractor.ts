/**
 * Runs a compiled pattern over records and builds rows of the fields a query needs. The batch
 * form walks a large decoded chunk in place with the sticky expression (no array of lines).
 */

import type { Row } from "../values/values.ts";
import { type Converter, identity, type MakeConverter } from "./matchers.ts";
import { type FileClock, noFileClock } from "./year_inference.ts";
import { generatedFunction } from "../values/generated_code.ts";

/**
 * A sticky matcher: `exec` matches at `lastIndex` only and moves it past the match. A sticky
 * RegExp is one; compile_pattern.ts has another on a linear-time engine.
 */
export interface StickyMatcher {
  lastIndex: number;
  exec(text: string): ArrayLike<string | undefined> | null;
}

/**
 * Where a field's value is in a match: the first defined group of `groups`, converted by the
 * converter of that group (the alternatives of a choice may name one field with different
 * matchers of one type, `TIMESTAMP('MMM dd ...')` and `TIMESTAMP('MMM  d ...')`).
 */
export interface FieldSlot {
  readonly name: string;
  readonly groups: readonly { readonly group: number; readonly makeConverter: MakeConverter }[];
}

export interface Extractor {
  /** The row of one record (a line, or lines joined by `\n`), or null when it does not match. */
  (record: string): Row | null;
  /**
   * The file the next records come from (null: none), for the year of timestamps written
   * without one (year_inference.ts).
   */
  setFile(file: { readonly pathTime: number | null; readonly modified: number } | null): void;
  /**
   * Calls `onRow` for every matching record of `text[start, end)` and counts the others.
   * `end` is `text.length` or just after a `\n`. Blank lines are not records and not counted.
   * A record starts at a line start; after a match, the rest of its last line is ignored.
   */
  extractAll(
    text: string,
    start: number,
    end: number,
    onRow: (row: Row) => void,
    options?: ExtractOptions,
  ): ExtractCounts;
}

export interface ExtractOptions {
  /**
   * More text follows `end` (the next chunk of a file). A pattern whose records span lines then
   * leaves the records that could continue past `end` alone: `next` says where to resume, with
   * the text from there carried into the next call.
   */
  readonly more?: boolean;
  /** Called with the offset of each record that does not match (where its line starts). */
  readonly onSkip?: (pos: number) => void;
  /**
   * A `performance.now()` past which the call stops at the next record's start (`paused`, and
   * `next` says where to go on): the caller gives the event loop a turn between two calls. A
   * record can take long (a filter's regular expression over a long line), and a chunk holds
   * many.
   */
  readonly until?: number | undefined;
}

export interface ExtractCounts {
  readonly matched: number;
  readonly skipped: number;
  /**
   * Where the next call should start: `end`, or earlier when `more` held back the last lines or
   * the call `paused`.
   */
  readonly next: number;
  /** Stopped at `next` because `until` went by, before `end` (and before what `more` holds). */
  readonly paused?: boolean;
}

const NL = 10;
const CR = 13;

/**
 * An extractor converting only `needed`; throws an Error (a bug) for an unknown field.
 * `newMatcher` gives it a matcher of its own (its own lastIndex).
 */
export function makeExtractor(
  newMatcher: () => StickyMatcher,
  slots: ReadonlyMap<string, FieldSlot>,
  needed: readonly string[],
  maxLines: number,
): Extractor {
  const multiLine = maxLines > 1;
  const re = newMatcher();
  const clock = noFileClock();
  const build = rowBuilder(slots, needed, clock);

  const extractor = ((record: string): Row | null => {
    re.lastIndex = 0;
    const m = re.exec(record);
    return m === null ? null : build(m);
  }) as Extractor;

  extractor.setFile = (file) => {
    clock.pathTime = file?.pathTime ?? null;
    clock.modified = file?.modified ?? null;
    clock.version++;
  };

  extractor.extractAll = (text, start, end, onRow, options) => {
    let matched = 0;
    let skipped = 0;
    let pos = start;
    const stop = multiLine && options?.more ? holdBack(text, start, end, maxLines - 1) : end;
    const until = options?.until;
    let records = 0;
    // The clock is read every 8 records (a record is a line or more of text), and at every
    // record once 8 took over a millisecond: a slow filter on long lines (re2js over a
    // pathological expression: milliseconds a line) must not run 8 of them past the slice.
    let every = 7;
    let checked = until === undefined ? 0 : performance.now();
    while (pos < end) {
      if (pos >= stop) break;
      if (until !== undefined && (++records & every) === 0) {
        const now = performance.now();
        if (now > until) return { matched, skipped, next: pos, paused: true };
        if (now - checked > 1) every = 0;
        checked = now;
      }
      const c = text.charCodeAt(pos);
      if (c === NL) {
        pos++;
        continue;
      }
      if (c === CR && text.charCodeAt(pos + 1) === NL) {
        pos += 2;
        continue;
      }
      re.lastIndex = pos;
      const m = re.exec(text);
      let from = pos;
      if (m !== null && re.lastIndex <= end) {
        matched++;
        onRow(build(m));
        from = re.lastIndex;
        // A match that ended by consuming a line break already stands at the next record.
        if (multiLine && from > pos && text.charCodeAt(from - 1) === NL) {
          pos = from;
          continue;
        }
      } else {
        skipped++;
        options?.onSkip?.(pos);
      }
      const nl = text.indexOf("\n", from);
      pos = nl < 0 || nl >= end ? end : nl + 1;
    }
    return { matched, skipped, next: Math.min(pos, end) };
  };
  return extractor;
}

/** The start of the `lines`-th last line of `text[start, end)` (which ends with `\n`). */
function holdBack(text: string, start: number, end: number, lines: number): number {
  let pos = end - 1; // the final newline
  for (let k = 0; k < lines; k++) {
    const nl = text.lastIndexOf("\n", pos - 1);
    if (nl < start) return start;
    pos = nl;
  }
  return pos + 1;
}

/**
 * A function building the row from a match as one object literal: V8 gives all rows one shape
 * and the stores are monomorphic, which is several times faster than adding keys in a loop.
 */
function rowBuilder(
  slots: ReadonlyMap<string, FieldSlot>,
  needed: readonly string[],
  clock: FileClock,
): (m: ArrayLike<string | undefined>) => Row {
  const converters: Converter[] = [];
  const props = needed.map((name) => {
    const slot = slots.get(name);
    if (!slot) throw new Error(`the pattern has no field '${name}'`);
    const call = (g: number, convert: Converter) => {
      if (convert === identity) return `m[${g}]`;
      const c = `c${converters.length}`;
      converters.push(convert);
      return `${c}(m[${g}])`;
    };
    // The first group that took part in the match holds the text (several: a choice).
    let expr = "null";
    for (const { group, makeConverter } of [...slot.groups].reverse()) {
      expr = `m[${group}] !== undefined ? ${call(group, makeConverter(clock))} : ${expr}`;
    }
    // A literal `"__proto__":` key would set the prototype; a computed key makes a field.
    const key = name === "__proto__" ? `["__proto__"]` : JSON.stringify(name);
    return `${key}: ${expr}`;
  });
  const params = converters.map((_, k) => `c${k}`);
  const make = generatedFunction(params, `return (m) => ({ ${props.join(", ")} });`);
  return make(...converters) as (m: ArrayLike<string | undefined>) => Row;
}
