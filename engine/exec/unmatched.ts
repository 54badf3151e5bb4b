/**
 * The records a pattern did not match: counted, and the first few kept (file, line, text) for
 * the warning, so that a pattern that quietly drops part of a file shows what it dropped:
 *
 *   PARSE skipped 3 records that do not match the pattern (the first in '/shared/a.log'):
 *   line 2 "Connection closed by 203.0.113.77 port 52144 [preauth]", line 7 "…", …
 */

import type { FileEntry, Warning } from "../contracts/datastore.ts";
import type { CompiledPattern } from "../pattern/compile_pattern.ts";
import type { Extractor } from "../pattern/extractor.ts";
import { type ExecContext, ProgressMeter } from "../plan/context.ts";
import { scanLines } from "./scan_lines.ts";

/** How many unmatched records a warning shows. */
export const SHOWN_UNMATCHED = 3;
/** How much of an unmatched record's text a warning shows. */
export const SHOWN_CHARS = 120;

export interface UnmatchedSample {
  readonly uri: string;
  readonly line: number;
  readonly text: string;
}

/** `text` cut to SHOWN_CHARS characters (an ellipsis marks the cut), as a JSON string. */
export function shownText(text: string): string {
  const cut = text.length > SHOWN_CHARS ? text.slice(0, SHOWN_CHARS - 1) + "…" : text;
  return JSON.stringify(cut);
}

export class UnmatchedRecords {
  count = 0;
  /** The file of the first unmatched record. */
  firstUri = "";
  readonly samples: UnmatchedSample[] = [];

  add(uri: string, line: number, text: string): void {
    if (this.count++ === 0) this.firstUri = uri;
    if (this.samples.length < SHOWN_UNMATCHED) this.samples.push({ uri, line, text });
  }

  /** Counts records whose line and text are not known (they are not shown). */
  addUnseen(uri: string, n: number): void {
    if (n <= 0) return;
    if (this.count === 0) this.firstUri = uri;
    this.count += n;
  }

  /** The warning of `source` (PARSE), or null when every record matched. */
  warning(source: string): Warning | null {
    if (this.count === 0) return null;
    const what = this.count === 1 ? "1 record that does" : `${this.count} records that do`;
    let message =
      `${source} skipped ${what} not match the pattern (the first in '${this.firstUri}')`;
    if (this.samples.length > 0) {
      let uri = this.firstUri;
      const shown = this.samples.map((s) => {
        const where = s.uri === uri ? "" : `'${s.uri}' `;
        uri = s.uri;
        return `${where}line ${s.line} ${shownText(s.text)}`;
      });
      const more = this.count > this.samples.length ? ", …" : "";
      message += `: ${shown.join(", ")}${more}`;
    }
    return { level: "WARN", message };
  }
}

/**
 * The unmatched records of `file`, line by line as PARSE without `record_start` reads them (a
 * multi-line pattern's record starts at the line shown), in batches. `extractor` must have
 * been told the file (setFile) when conversion matters; here only matching does.
 */
export async function* unmatchedLines(
  file: FileEntry,
  extractor: Extractor,
  multiLine: boolean,
  ctx: Pick<ExecContext, "signal" | "progress" | "warn">,
): AsyncGenerator<UnmatchedSample[]> {
  let base = 1; // the line number of text[start]
  let held = "";
  const ignore = () => {};
  const scan = (text: string, start: number, end: number, more: boolean) => {
    const found: UnmatchedSample[] = [];
    let at = start, line = base;
    const counts = extractor.extractAll(text, start, end, ignore, {
      more,
      onSkip: (pos) => {
        line += countLines(text, at, pos);
        at = pos;
        const nl = text.indexOf("\n", pos);
        let record = text.slice(pos, nl < 0 || nl >= end ? end : nl);
        if (record.endsWith("\r")) record = record.slice(0, -1);
        found.push({ uri: file.uri, line, text: record });
      },
    });
    base = line + countLines(text, at, counts.next);
    return { found, next: counts.next };
  };
  for await (const chunk of scanLines(file, ctx)) {
    let { text, start, end } = chunk;
    if (held.length > 0) {
      text = held + text.slice(start, end);
      start = 0;
      end = text.length;
    }
    const { found, next } = scan(text, start, end, multiLine);
    held = next < end ? text.slice(next, end) : "";
    if (found.length > 0) yield found;
  }
  if (held.length > 0) {
    const { found } = scan(held, 0, held.length, false);
    if (found.length > 0) yield found;
  }
}

function countLines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf("\n", from); i >= 0 && i < to; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** What a second look at the files may read to find the unmatched records it shows. */
const LOOK_AGAIN_BYTES = 64 * 1024 * 1024;

/**
 * The warning of PARSE's line-by-line scan, which counts unmatched records without keeping
 * them (its fast paths know neither line numbers nor, for the byte scanner, the text): the
 * files are read again from the one with the first unmatched record, up to the SHOWN_UNMATCHED
 * first ones (and at most LOOK_AGAIN_BYTES), to show them.
 */
export async function unmatchedWarning(
  files: readonly FileEntry[],
  firstUri: string,
  count: number,
  pattern: CompiledPattern,
  ctx: ExecContext,
): Promise<Warning | null> {
  const unmatched = new UnmatchedRecords();
  const extractor = pattern.makeExtractor([]);
  let read = 0;
  const progress = new ProgressMeter();
  progress.consume = (bytes: number) => {
    read += bytes;
  };
  const quiet = { signal: ctx.signal, progress, warn: () => {} };
  look: for (const file of files.slice(Math.max(0, files.findIndex((f) => f.uri === firstUri)))) {
    for await (const found of unmatchedLines(file, extractor, pattern.multiLine, quiet)) {
      for (const s of found) unmatched.add(s.uri, s.line, s.text);
      if (unmatched.samples.length >= SHOWN_UNMATCHED || read > LOOK_AGAIN_BYTES) break look;
    }
  }
  // The count is the first scan's: the second look may stop early.
  unmatched.count = count;
  unmatched.firstUri = firstUri;
  return unmatched.warning("PARSE");
}
