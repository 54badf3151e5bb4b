/**
 * PARSE: records parsed from the lines of text files by a compiled pattern.
 *
 *   parseSource(files, pattern, ["client", "bytes"], ctx) // converts only those fields
 *   parseSource(files, pattern, null, ctx)                // every field of the pattern
 *
 * The pattern's extractor runs over whole chunks of lines (`extractAll`), so the per-record
 * work is one sticky-regex match and the conversions of the needed fields. Records that do not
 * match are skipped and counted in one WARN per source.
 */

import type { FileEntry } from "../../connectors/datastore.ts";
import type { CompiledPattern } from "../pattern/compile_pattern.ts";
import type { Row } from "../values.ts";
import { BATCH_ROWS, type BatchStream, type ExecContext } from "./context.ts";
import { scanLines } from "./scan_lines.ts";

/** Rows of the records `pattern` finds in `files`; `needed` limits the fields, null keeps all. */
export async function* parseSource(
  files: AsyncIterable<FileEntry> | Iterable<FileEntry>,
  pattern: CompiledPattern,
  needed: readonly string[] | null,
  ctx: ExecContext,
): BatchStream {
  const extractor = pattern.makeExtractor(needed ?? pattern.fields.map((f) => f.name));
  const multiLine = pattern.multiLine;
  let rows: Row[] = [];
  const push = (row: Row) => {
    rows.push(row);
  };
  let skipped = 0;
  let firstSkipped = "";
  for await (const file of files) {
    ctx.progress.expect(file.size);
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
      const counts = extractor.extractAll(text, start, end, push, { more: multiLine });
      held = counts.next < end ? text.slice(counts.next, end) : "";
      if (counts.skipped > 0 && skipped === 0) firstSkipped = file.uri;
      skipped += counts.skipped;
      if (rows.length >= BATCH_ROWS) {
        yield rows;
        rows = [];
      }
    }
    if (held.length > 0) {
      const counts = extractor.extractAll(held, 0, held.length, push);
      if (counts.skipped > 0 && skipped === 0) firstSkipped = file.uri;
      skipped += counts.skipped;
    }
  }
  if (rows.length > 0) yield rows;
  if (skipped > 0) {
    ctx.warn({
      level: "WARN",
      message: `PARSE skipped ${
        skipped === 1 ? "1 record that does" : `${skipped} records that do`
      } not match the pattern (the first in '${firstSkipped}')`,
    });
  }
}
