/**
 * PARSE with `record_start`: records of several lines. A line where the start pattern matches
 * begins a record; the lines after it, up to the next such line, belong to it (a Java stack
 * trace, a Python traceback, the continuation lines of FastCGI's stderr). The pattern is then
 * matched against the whole record, its lines joined by "\n".
 *
 *   for await (const records of fileRecords(file, ctx, { start, maxLines: 1000 })) {
 *     for (const { text, line } of records) ... // line: where the record starts, 1-based
 *   }
 *
 * Lines before the first start line are records of their own. A record reaches at most
 * `maxLines` lines: a continuation line beyond that begins a new record (which the pattern
 * then usually does not match, so that it is counted and shown in the warning). Blank lines
 * inside a record belong to it; blank lines at its end, and blank lines between records, do not.
 */

import type { FileEntry } from "../contracts/datastore.ts";
import type { CompiledPattern } from "../pattern/compile_pattern.ts";
import type { PushedFilter } from "../plan/plan.ts";
import type { Row } from "../values/values.ts";
import { type BatchStream, type ExecContext, expectFiles, RowSink } from "../plan/context.ts";
import { scanLines } from "./scan_lines.ts";
import { unmatchedLines, UnmatchedRecords } from "./unmatched.ts";
import { scalar, type Schema } from "../values/types.ts";
import type { SkipTally, TallyWarning } from "../plan/skip_tally.ts";
import { firstLineOf } from "./parallel/shares.ts";

export interface RecordOptions {
  /** Whether a line begins a record. */
  readonly start: (line: string) => boolean;
  /** The most lines a record holds. */
  readonly maxLines: number;
}

/** Every line a record: PARSE's line records when their line or text is asked for. */
export const EVERY_LINE: RecordOptions = { start: () => true, maxLines: 1 };

/** A record: its text (lines joined by "\n") and the 1-based number of its first line. */
export interface TextRecord {
  readonly text: string;
  readonly line: number;
}

/**
 * The records of `file`, a batch per piece of the file read; `firstLine` is the number of the
 * first line it reads (a share of a file starts further on).
 */
export async function* fileRecords(
  file: FileEntry,
  ctx: Pick<ExecContext, "signal" | "progress" | "warn">,
  options: RecordOptions,
  firstLine = 1,
): AsyncGenerator<TextRecord[]> {
  let lineNumber = firstLine - 1;
  let lines: string[] = [];
  let first = 0;
  let started = false; // a start line was seen
  let out: TextRecord[] = [];
  const flush = () => {
    let n = lines.length;
    while (n > 0 && lines[n - 1] === "") n--;
    if (n > 0) out.push({ text: lines.slice(0, n).join("\n"), line: first });
    lines = [];
  };
  for await (const { text, start, end } of scanLines(file, ctx)) {
    let pos = start;
    while (pos < end) {
      const nl = text.indexOf("\n", pos);
      const stop = nl < 0 || nl >= end ? end : nl;
      let line = text.slice(pos, stop);
      if (line.endsWith("\r")) line = line.slice(0, -1);
      pos = stop + 1;
      lineNumber++;
      if (line === "" && lines.length === 0) continue;
      const starts = options.start(line);
      started ||= starts;
      if (lines.length === 0 || lines.length >= options.maxLines || starts || !started) {
        flush();
        first = lineNumber;
      }
      lines.push(line);
    }
    if (out.length > 0) {
      yield out;
      out = [];
    }
  }
  flush();
  if (out.length > 0) yield out;
}

/**
 * Rows of the records of `files` that `pattern` matches (`needed` fields, null: all), with
 * `filter` applied; the others are counted in one warning that shows the first few.
 */
export async function* parseRecordsSource(
  files: AsyncIterable<FileEntry> | Iterable<FileEntry>,
  pattern: CompiledPattern,
  needed: readonly string[] | null,
  ctx: ExecContext,
  options: RecordOptions,
  filter?: PushedFilter,
  /** Fields asked for beside the pattern's: the record's text (`raw_field`), its first line's number (`line_field`). */
  extra: { readonly raw?: string; readonly line?: string } = {},
): BatchStream {
  const { raw, line } = extra;
  const own = (needed ?? pattern.fields.map((f) => f.name)).filter((f) => f !== raw && f !== line);
  const extractor = pattern.makeExtractor(own);
  const sink = new RowSink(filter?.keep);
  const unmatched = new UnmatchedRecords();
  for (const file of await expectFiles(files, ctx.progress)) {
    extractor.setFile(file);
    // A scan worker's share of a file of line records counts the lines before it.
    const first = line !== undefined ? await firstLineOf(file, ctx.signal) : 1;
    for await (const records of fileRecords(file, ctx, options, first)) {
      if (ctx.stats) ctx.stats.recordsRead += records.length;
      for (const record of records) {
        const row = extractor(record.text);
        if (row !== null) {
          if (raw !== undefined) row[raw] = record.text;
          if (line !== undefined) row[line] = record.line;
          sink.push(row);
        } else unmatched.add(file.uri, record.line, record.text);
      }
      const batch = sink.take();
      if (batch) yield batch;
    }
  }
  const last = sink.take(true);
  if (last) yield last;
  if (ctx.stats) ctx.stats.recordsUnmatched += unmatched.count;
  const warning = ctx.ignoreUnmatched ? null : unmatched.warning("PARSE");
  if (warning) {
    // With its tally, so that the warnings of workers' shares (or of files read one at a time
    // for `path_field`) become one, as parse_source.ts tells its own.
    const tally: SkipTally = {
      kind: "PARSE",
      count: unmatched.count,
      first: { uri: unmatched.firstUri },
    };
    const told: TallyWarning = { ...warning, tally };
    ctx.warn(told);
  }
}

/** The schema of `PARSE(..., unmatched: true)`: where each unmatched record is, and its text. */
export const UNMATCHED_SCHEMA: Schema = [
  { name: "uri", type: scalar("STRING"), nullable: false },
  { name: "line", type: scalar("LONG"), nullable: false },
  { name: "record", type: scalar("STRING"), nullable: false },
];

/**
 * `PARSE(..., unmatched: true)`: the records of `files` that `pattern` does not match, as rows
 * of UNMATCHED_SCHEMA, cut into records as the matching PARSE cuts them (`records`, or lines).
 */
export async function* unmatchedSource(
  files: AsyncIterable<FileEntry> | Iterable<FileEntry>,
  pattern: CompiledPattern,
  records: RecordOptions | null,
  ctx: ExecContext,
): BatchStream {
  const extractor = pattern.makeExtractor([]);
  for (const file of await expectFiles(files, ctx.progress)) {
    extractor.setFile(file);
    if (records === null) {
      for await (const found of unmatchedLines(file, extractor, pattern.multiLine, ctx)) {
        yield found.map((s) => ({ uri: s.uri, line: s.line, record: s.text }));
      }
      continue;
    }
    for await (const batch of fileRecords(file, ctx, records)) {
      const rows: Row[] = [];
      for (const r of batch) {
        if (extractor(r.text) === null) rows.push({ uri: file.uri, line: r.line, record: r.text });
      }
      if (rows.length > 0) yield rows;
    }
  }
}
