/**
 * The readers of the sources that scan workers share (PARSE of line records, READ_JSON), and of
 * READ_CSV, READ_W3C and READ_ZEEK, through the column cache when the query has one
 * (engine/exec/cached_scan.ts), else straight.
 *
 *   readParse(files, pattern, spec, ctx, read)        // PARSE: spec = the pattern's text
 *   readJson(files, ctx, fields, keep, paths)          // READ_JSON
 *   readTable(files, format, fields, ctx, keep)        // READ_CSV, READ_W3C, READ_ZEEK
 */

import type { FileEntry } from "../contracts/datastore.ts";
import type { CompiledPattern } from "../pattern/compile_pattern.ts";
import type { ExprOrigin, PushedFilter } from "../plan/plan.ts";
import type { Row } from "../values/values.ts";
import type { BatchStream, ExecContext } from "../plan/context.ts";
import { skipWarning } from "../plan/skip_tally.ts";
import { cachedScan } from "./cached_scan.ts";
import { parseSource } from "./parse_source.ts";
import { readJsonSource } from "./read_json_source.ts";
import { readTableSource, type TableFormat } from "./read_table_source.ts";
import { unmatchedWarning } from "./unmatched.ts";
import { columnTest, zoneTest } from "./zone_maps.ts";

/** A filter pushed into a source, with what it was compiled from where the planner kept it. */
export type CacheFilter = PushedFilter & {
  readonly origin?: ExprOrigin | undefined;
  readonly negated?: boolean | undefined;
};

/**
 * PARSE's rows of `files`; `spec` names the pattern (its text and the sub-patterns it used),
 * part of the cache's key with the query's zone (timestamps without one are read in it).
 */
export function readParse(
  files: AsyncIterable<FileEntry> | Iterable<FileEntry>,
  pattern: CompiledPattern,
  spec: unknown,
  ctx: ExecContext,
  read: { readonly fields: readonly string[] | null; readonly filter: CacheFilter | null },
): BatchStream {
  const filter = read.filter ?? undefined;
  if (!ctx.cache) return parseSource(files, pattern, read.fields, ctx, filter);
  const names = read.fields ?? pattern.fields.map((f) => f.name);
  // A pattern the byte scanner covers fills a block's columns without making rows.
  const columns = !names.includes("__proto__") && pattern.makeByteScanner(names) !== null;
  return cachedScan(files, {
    spec: ["PARSE", spec, ctx.timeZone],
    fields: read.fields,
    lines: () => Promise.resolve(!pattern.multiLine),
    raw: (list, sub) => parseSource(list, pattern, read.fields, sub),
    written: true,
    ...(columns
      ? {
        columns: {
          names,
          // Unfiltered: the block's columns are filtered once filled.
          raw: (list, sub, sink) => parseSource(list, pattern, read.fields, sub, undefined, sink),
        },
      }
      : {}),
    keep: filter?.keep,
    reads: filter?.reads,
    test: columnTest(filter, ctx),
    word: async (all, tally, c) =>
      (await unmatchedWarning(all, tally.first.uri, tally.count, pattern, c)) ??
        skipWarning(tally),
    zone: zoneTest(filter, ctx),
  }, ctx);
}

/** READ_JSON's rows of `files` (read_json_source.ts's arguments). */
export function readJson(
  files: AsyncIterable<FileEntry> | Iterable<FileEntry>,
  ctx: ExecContext,
  fields: readonly string[] | null,
  keep: ((row: Row) => boolean) | undefined,
  paths: ReadonlyMap<string, readonly (readonly string[])[]> | undefined,
  filter?: CacheFilter | null,
): BatchStream {
  if (!ctx.cache) return readJsonSource(files, fields, ctx, keep, paths);
  return cachedScan(files, {
    spec: ["READ_JSON", paths ? [...paths] : null],
    fields,
    lines: isJsonLines,
    raw: (list, sub) => readJsonSource(list, fields, sub, undefined, paths),
    // Named fields fill a block's columns without making rows (as PARSE's byte scanner does).
    ...(fields !== null && !fields.includes("__proto__")
      ? {
        columns: {
          names: fields,
          raw: (list, sub, sink) => readJsonSource(list, fields, sub, undefined, paths, {}, sink),
        },
      }
      : {}),
    keep,
    ...(filter && filter.keep === keep ? { reads: filter.reads } : {}),
    word: (_all, tally) => skipWarning(tally),
    zone: zoneTest(filter ?? undefined, ctx),
  }, ctx);
}

/**
 * READ_CSV's, READ_W3C's and READ_ZEEK's rows of `files` (read_table_source.ts's arguments). Such
 * a file is cached whole (up to cached_scan.ts's WHOLE_FILE_BYTES), never cut: CSV's header
 * names the fields of every later line and a quoted field may hold line ends; W3C's `#Fields:`
 * and Zeek's `#fields`/`#types` lines name and type the lines after them, wherever they come.
 */
export function readTable(
  files: AsyncIterable<FileEntry> | Iterable<FileEntry>,
  format: TableFormat,
  fields: readonly string[] | null,
  ctx: ExecContext,
  keep: ((row: Row) => boolean) | undefined,
): BatchStream {
  if (!ctx.cache) return readTableSource(files, format, fields, ctx, keep);
  return cachedScan(files, {
    spec: [TABLE_SOURCES[format.kind], format],
    fields,
    lines: () => Promise.resolve(false),
    raw: (list, sub) => readTableSource(list, format, fields, sub),
    keep,
    // The reader keeps no skip tally: a block with its warnings is not cached (cached_scan.ts).
    word: (_all, tally) => skipWarning(tally),
  }, ctx);
}

const TABLE_SOURCES = { csv: "READ_CSV", w3c: "READ_W3C", zeek: "READ_ZEEK" } as const;

/**
 * Whether `file` reads as JSON lines (read_json_source.ts): its first byte that is not white
 * space or a byte order mark is not `[` (one array), and not a `{` alone on its line (objects
 * written across lines). An empty file counts as lines.
 */
export async function isJsonLines(file: FileEntry, signal: AbortSignal): Promise<boolean> {
  const reader = (await file.open(signal)).getReader();
  let brace = false;
  try {
    for (let seen = 0; seen < 1 << 20;) {
      const { value, done } = await reader.read();
      if (done) return !brace;
      for (let i = 0; i < value.length; i++, seen++) {
        const c = value[i];
        if (brace) {
          if (c === 0x0a) return false;
          if (c !== 0x20 && c !== 0x0d && c !== 0x09) return true;
          continue;
        }
        if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
        if (seen < 3 && (c === 0xef || c === 0xbb || c === 0xbf)) continue;
        if (c !== 0x7b /* { */) return c !== 0x5b; /* [ */
        brace = true;
      }
    }
    return !brace;
  } finally {
    await reader.cancel().catch(() => {});
  }
}
