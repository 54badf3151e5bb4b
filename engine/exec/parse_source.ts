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
  let rows: Row[] = [];
  const push = (row: Row) => {
    rows.push(row);
  };
  let skipped = 0;
  let firstSkipped = "";
  for await (const file of files) {
    ctx.progress.expect(file.size);
    for await (const { text, start, end } of scanLines(file, ctx)) {
      const counts = extractor.extractAll(text, start, end, push);
      if (counts.skipped > 0 && skipped === 0) firstSkipped = file.uri;
      skipped += counts.skipped;
      if (rows.length >= BATCH_ROWS) {
        yield rows;
        rows = [];
      }
    }
  }
  if (rows.length > 0) yield rows;
  if (skipped > 0) {
    ctx.warn({
      level: "WARN",
      message: `PARSE skipped ${skipped} record${
        skipped === 1 ? "" : "s"
      } that do not match the pattern (the first in '${firstSkipped}')`,
    });
  }
}
