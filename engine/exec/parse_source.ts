/**
 * PARSE: records parsed from the lines of text files by a compiled pattern.
 *
 *   parseSource(files, pattern, ["client", "bytes"], ctx) // converts only those fields
 *   parseSource(files, pattern, null, ctx)                // every field of the pattern
 *
 * A pattern the byte scanner covers (pattern/byte_scanner.ts: literals and the common
 * matchers in sequence) is matched on the bytes of each line, decoding only the needed fields;
 * a line it leaves alone is decoded and matched by the pattern's regular expression, which
 * decides. Other patterns run their extractor over whole decoded chunks (`extractAll`): one
 * sticky-regex match per record. Records that do not match are skipped and counted in one
 * WARN per source.
 */

import type { FileEntry } from "../contracts/datastore.ts";
import type { CompiledPattern } from "../pattern/compile_pattern.ts";
import type { PushedFilter } from "../plan/plan.ts";
import type { Row } from "../values/values.ts";
import {
  type BatchStream,
  type ExecContext,
  expectFiles,
  RowSink,
  SLICE_MS,
} from "../plan/context.ts";
import { scanByteLines, scanLines } from "./scan_lines.ts";
import { freeBehind } from "../fs/open_file.ts";
import { type SkipTally, skipWarning } from "../plan/skip_tally.ts";
import { unmatchedWarning } from "./unmatched.ts";
import { SCANNER_MAX_BYTES, scannerPath, SimdScanner } from "../simd/scanner.ts";
import { ColumnSink, sinkVectors } from "../pattern/byte_scanner.ts";
import { writtenColumns } from "./render_rows.ts";

const NL = 0x0a;
const CR = 0x0d;

/**
 * Rows of the records `pattern` finds in `files`; `needed` limits the fields, null keeps all.
 * `filter`, when given, is pushed into the scan: only the rows it keeps are handed out, and the
 * byte scanner tests it on the fields it reads before building the rest of a row.
 */
export async function* parseSource(
  files: AsyncIterable<FileEntry> | Iterable<FileEntry>,
  pattern: CompiledPattern,
  needed: readonly string[] | null,
  ctx: ExecContext,
  filter?: PushedFilter,
  sink?: ColumnSink,
): BatchStream {
  const names = needed ?? pattern.fields.map((f) => f.name);
  const extractor = pattern.makeExtractor(names);
  const keep = filter?.keep;
  // Under a grouping that takes records directly (ctx.direct), the scanner folds into it the
  // records of groups it already has, and hands out rows only for the others. With a sink (the
  // column cache's fill), every record goes to its columns instead, and no row is handed out:
  // the block's columns are then filtered and folded (engine/exec/cached_scan.ts).
  // Under a result written from columns (ExecContext.rendered), without a filter: every record
  // goes to columns of our own, and the rows of each piece read are written from them (no row
  // made). A record leaves the sink as soon as its piece is written: few live at once.
  const render = sink === undefined && !filter && !ctx.direct ? ctx.rendered : undefined;
  const wanted = render !== undefined ? new ColumnSink(names.length) : undefined;
  const scanner = sink === undefined && wanted === undefined
    ? pattern.makeByteScanner(names, filter, ctx.direct)
    : pattern.makeByteScanner(names, undefined, undefined, sink ?? wanted);
  if (sink !== undefined && scanner === null) {
    throw new Error("PARSE into columns needs a byte scanner");
  }
  // A pattern the byte scanner does not cover makes rows, as without the result above.
  const own = scanner !== null ? wanted : undefined;
  const into = sink ?? own;
  const multiLine = pattern.multiLine;
  const rows = new RowSink(keep);
  // Folding, every row goes to the grouping at once, so that it takes records in input order.
  const direct = scanner?.folds ? ctx.direct : undefined;
  const add = (row: Row) => {
    direct!.add(row);
    scanner!.refresh(); // a new group may have grown the arrays it folds into
  };
  const hand = direct === undefined ? rows.push : (row: Row) => {
    if (keep === undefined || keep(row)) add(row);
  };
  const push = into === undefined ? hand : (row: Row) => into.putRow(names, row);
  const take = direct === undefined ? (row: Row) => rows.rows.push(row) : add;
  let skipped = 0;
  let firstSkipped = "";
  // Records of the current chunk, added to the query's stats once per chunk.
  let records = 0;
  const list = await expectFiles(files, ctx.progress);
  for (const file of list) {
    extractor.setFile(file); // the year of timestamps written without one
    if (scanner !== null) {
      // Lines are scanned as bytes; a line the scanner leaves to the expression is decoded.
      const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
      // Nothing here holds a view of a piece once the next comes (fields are copied into texts,
      // numbers and a sink's bytes): a host file's read buffer is freed at once (freeBehind).
      const behind = freeBehind();
      // TRAWL_SCANNER=wasm: the line ends of each piece found at once by the SIMD byte search
      // (not by default: measured slower on the access log).
      const lineSearch = scannerPath("lines") === "wasm" ? new SimdScanner() : null;
      for await (const { bytes, start, end } of scanByteLines(file, ctx)) {
        behind(bytes.buffer);
        // The scanner needs each line ended by "\n": the last line of a file may lack it.
        const checked = bytes[end - 1] === NL ? end : bytes.lastIndexOf(NL, end - 1) + 1;
        const ends = lineSearch !== null && end - start <= SCANNER_MAX_BYTES
          ? lineSearch.findByte(bytes, start, end, NL)
          : null;
        let e = 0;
        let i = start;
        while (i < end) {
          const c = bytes[i];
          // Blank lines are not records.
          if (c === NL) {
            i++;
            continue;
          }
          if (c === CR && bytes[i + 1] === NL) {
            i += 2;
            continue;
          }
          records++;
          // The line's "\n" (-1: none in the piece) from the line ends, else looked for below.
          let nl = -2;
          if (ends !== null) {
            while (e < ends.count && ends.positions[e]! < i) e++;
            nl = e < ends.count ? ends.positions[e]! : -1;
          }
          if (i < checked) {
            const row = ends !== null ? scanner.scan(bytes, i, nl) : scanner.scan(bytes, i);
            if (row !== undefined) {
              // null: a record the pushed filter dropped, or one folded into ctx.direct.
              if (row !== null) take(row);
              i = scanner.next;
              continue;
            }
          }
          if (nl === -2) nl = bytes.indexOf(NL, i);
          const stop = nl < 0 || nl >= end ? end : nl;
          const row = extractor(decoder.decode(bytes.subarray(i, stop)));
          i = stop + 1;
          if (row !== null) push(row);
          else if (skipped++ === 0) firstSkipped = file.uri;
        }
        if (ctx.stats) ctx.stats.recordsRead += records;
        records = 0;
        if (own !== undefined && own.n > 0) {
          yield* writtenColumns(sinkVectors(own, names, render!.fields), null, own.n, render!, ctx);
          own.reset();
        }
        const batch = rows.take();
        if (batch) yield batch;
      }
      behind(null);
      continue;
    }
    // A record of a multi-line pattern may continue in the next chunk: the extractor leaves
    // the last lines alone (`more`) and they are carried to the front of the next chunk.
    let held = "";
    for await (const chunk of scanLines(file, ctx)) {
      let { text, start, end } = chunk;
      if (held.length > 0) {
        text = held + text.slice(start, end);
        start = 0;
        end = text.length;
      }
      // In slices of the query's time (in the server's thread): between two, a turn.
      for (;;) {
        const until = ctx.slicer ? performance.now() + SLICE_MS : undefined;
        const counts = extractor.extractAll(text, start, end, push, { more: multiLine, until });
        if (counts.skipped > 0 && skipped === 0) firstSkipped = file.uri;
        skipped += counts.skipped;
        if (ctx.stats) ctx.stats.recordsRead += counts.matched + counts.skipped;
        const batch = rows.take();
        if (batch) yield batch;
        if (!counts.paused) {
          held = counts.next < end ? text.slice(counts.next, end) : "";
          break;
        }
        start = counts.next;
        await ctx.slicer!.turn();
      }
    }
    if (held.length > 0) {
      const counts = extractor.extractAll(held, 0, held.length, push);
      if (counts.skipped > 0 && skipped === 0) firstSkipped = file.uri;
      skipped += counts.skipped;
      if (ctx.stats) ctx.stats.recordsRead += counts.matched + counts.skipped;
    }
  }
  const last = rows.take(true);
  if (last) yield last;
  if (ctx.stats) ctx.stats.recordsUnmatched += skipped;
  if (skipped > 0 && !ctx.ignoreUnmatched) {
    // The warning shows the first unmatched records: a second look finds them. It carries the
    // tally, so that the shares of workers merge into one warning (worded again by the source).
    const tally: SkipTally = { kind: "PARSE", count: skipped, first: { uri: firstSkipped } };
    const warning = await unmatchedWarning(list, firstSkipped, skipped, pattern, ctx);
    ctx.warn(warning ? { ...warning, tally } : skipWarning(tally));
  }
}
