/**
 * Tables of text: READ_CSV (CSV, TSV, any delimiter), READ_W3C (W3C extended logs, as IIS
 * writes them) and READ_ZEEK (Zeek's TSV logs). One row per record; the names come from the
 * header, the schema is open (it comes from the data, as READ_JSON's).
 *
 * - CSV: RFC 4180 quoting (a quoted field may hold the delimiter, line breaks and doubled
 *   quotes); the first record is the header unless `header: false`, which names the fields
 *   `f_1`, `f_2`, ... An unquoted empty field is null, a quoted one `""` the empty string.
 *   A record with fewer fields than the header has nulls for the rest; one with more loses the
 *   extra ones (counted in a warning). Values are STRING: cast them (`INTEGER(status)`).
 * - W3C: `#Fields: date time c-ip ...` names the fields (again whenever it comes, as IIS writes
 *   one at each restart); other `#` lines are skipped; fields are separated by spaces and `-`
 *   is null. Fields known to W3C and IIS are typed: `c-ip`, `s-ip` IPADDR; `s-port`,
 *   `sc-status`, `sc-substatus`, `sc-win32-status`, `sc-bytes`, `cs-bytes`, `time-taken` LONG;
 *   with both `date` and `time` a `timestamp` TIMESTAMP is added (W3C logs are in UTC).
 * - Zeek: `#separator` (`\x09`), `#set_separator`, `#empty_field`, `#unset_field`, `#fields`
 *   and `#types` are read; the fields take the types of `#types`: time TIMESTAMP, interval
 *   INTERVAL, count/int/port LONG, double DOUBLE, bool BOOLEAN, addr IPADDR, subnet IPNET,
 *   string/enum/others STRING (with `\xHH` escapes decoded), set[...] and vector[...] ARRAYs.
 *   The unset field (`-`) is null, the empty field (`(empty)`) an empty string or array.
 */

import type { FileEntry } from "../contracts/datastore.ts";
import { parseIp, parseNet } from "../values/ip.ts";
import { parseTimestamp } from "../values/time_parse.ts";
import { truncatedMillis } from "../values/time.ts";
import { Interval, type Row, Timestamp, type Value } from "../values/values.ts";
import { type BatchStream, type ExecContext, expectFiles, RowSink } from "../plan/context.ts";
import { scanLines } from "./scan_lines.ts";

export type TableFormat =
  | {
    readonly kind: "csv";
    readonly delimiter: string;
    readonly header: boolean;
    /** The quote character; null: no quoting (TSV as most tools write it). */
    readonly quote: string | null;
  }
  | { readonly kind: "w3c" }
  | { readonly kind: "zeek" };

/** The source name of a format, for warnings. */
function sourceName(format: TableFormat): string {
  return format.kind === "csv" ? "READ_CSV" : format.kind === "w3c" ? "READ_W3C" : "READ_ZEEK";
}

/**
 * Fields asked for beside a record's own (`line_field:`, `raw_field:`): the number of its first
 * line in its file (from 1), and its text (its lines joined by "\n", without the line end).
 */
export interface RecordExtras {
  readonly line?: string;
  readonly raw?: string;
}

/**
 * Rows of `files` read as `format`; `needed` limits the fields (null: all); `extra` adds each
 * record's line number and text (whole files are read from their start: the numbers count from
 * the file's first line).
 */
export async function* readTableSource(
  files: AsyncIterable<FileEntry> | Iterable<FileEntry>,
  format: TableFormat,
  needed: readonly string[] | null,
  ctx: ExecContext,
  keep?: (row: Row) => boolean,
  extra: RecordExtras = {},
): BatchStream {
  const sink = new RowSink(keep);
  const pick = picker(needed);
  const { line: lineName, raw: rawName } = extra;
  const onRow: OnRow = lineName === undefined && rawName === undefined
    ? (row) => sink.push(pick(row))
    : (row, line, text, start, end) => {
      const out = pick(row);
      if (lineName !== undefined) out[lineName] = line;
      if (rawName !== undefined) out[rawName] = recordText(text, start, end);
      sink.push(out);
    };
  const problems = new Problems(sourceName(format));
  for (const file of await expectFiles(files, ctx.progress)) {
    const reader = format.kind === "csv"
      ? csvReader(format, file.uri, problems)
      : format.kind === "w3c"
      ? lineReader(w3cLines(file.uri, problems))
      : lineReader(zeekLines(file.uri, problems));
    for await (const { text, start, end } of scanLines(file, ctx)) {
      reader.feed(text, start, end, onRow);
      const batch = sink.take();
      if (batch) yield batch;
    }
    reader.finish(onRow);
  }
  const last = sink.take(true);
  if (last) yield last;
  for (const w of problems.warnings()) ctx.warn(w);
}

function picker(needed: readonly string[] | null): (row: Row) => Row {
  if (needed === null) return (row) => row;
  return (row) => {
    const out: Row = {};
    for (const name of needed) out[name] = Object.hasOwn(row, name) ? row[name]! : null;
    return out;
  };
}

/** Records that could not be read as they should, counted per kind with the first place. */
class Problems {
  readonly #kinds = new Map<string, { count: number; first: string }>();
  constructor(readonly source: string) {}

  add(kind: string, where: string): void {
    const known = this.#kinds.get(kind);
    if (known) known.count++;
    else this.#kinds.set(kind, { count: 1, first: where });
  }

  *warnings() {
    for (const [kind, { count, first }] of this.#kinds) {
      yield {
        level: "WARN" as const,
        message: `${this.source}: ${count} ${
          count === 1 ? "record" : "records"
        } ${kind} (the first at ${first})`,
      };
    }
  }
}

/**
 * A record read: its row, the number of its first line, and where its text is (`text[start,
 * end)`, cut out only when asked for).
 */
type OnRow = (row: Row, line: number, text: string, start: number, end: number) => void;

interface TableReader {
  /** Reads the records of `text[start, end)` (whole lines); a record may continue later. */
  feed(text: string, start: number, end: number, onRow: OnRow): void;
  /** The end of the file: a record still open is ended. */
  finish(onRow: OnRow): void;
}

// ---------------------------------------------------------------------------------------------
// CSV

function csvReader(
  format: TableFormat & { kind: "csv" },
  uri: string,
  problems: Problems,
): TableReader {
  const { delimiter, quote } = format;
  let names: string[] | null = format.header ? null : [];
  let held = "";
  let line = 1; // the line number of the next record's first line

  /** A record's fields, the number of its first line and its place in `text`. */
  const emit = (
    fields: (string | null)[],
    at: number,
    text: string,
    start: number,
    end: number,
    onRow: OnRow,
  ) => {
    if (names === null) {
      names = fields.map((f, i) => f === null || f === "" ? `f_${i + 1}` : f);
      return;
    }
    if (!format.header) {
      while (names.length < fields.length) names.push(`f_${names.length + 1}`);
    } else if (fields.length > names.length) {
      problems.add(
        `had more fields than the header (the extra ones are dropped)`,
        `line ${at} of '${uri}'`,
      );
    }
    const row: Row = {};
    for (let i = 0; i < names.length; i++) row[names[i]!] = fields[i] ?? null;
    onRow(row, at, text, start, end);
  };

  /** Reads records from `text`; returns where an unfinished record starts (or text.length). */
  const read = (text: string, more: boolean, onRow: OnRow): number => {
    let p = 0;
    const n = text.length;
    while (p < n) {
      const recordStart = p;
      const recordLine = line;
      // A blank line is no record.
      if (text[p] === "\n" || (text[p] === "\r" && text[p + 1] === "\n")) {
        p += text[p] === "\r" ? 2 : 1;
        line++;
        continue;
      }
      const fields: (string | null)[] = [];
      let lines = 0;
      let complete = true;
      for (;;) {
        let value: string | null;
        if (quote !== null && text[p] === quote) {
          let j = p + 1;
          value = "";
          let closed = false;
          for (;;) {
            const k = text.indexOf(quote, j);
            if (k < 0) {
              value += text.slice(j);
              j = n;
              break;
            }
            value += text.slice(j, k);
            if (text[k + 1] === quote) {
              value += quote;
              j = k + 2;
              continue;
            }
            j = k + 1;
            closed = true;
            break;
          }
          if (!closed && more) {
            complete = false;
            break;
          }
          lines += countNewlines(value);
          p = j;
          // Text between the closing quote and the delimiter is kept (lenient, as most readers).
          const stop = fieldEnd(text, p, delimiter);
          value += stripCr(text.slice(p, stop));
          p = stop;
        } else {
          const stop = fieldEnd(text, p, delimiter);
          const raw = stripCr(text.slice(p, stop));
          value = raw === "" ? null : raw;
          p = stop;
        }
        fields.push(value);
        if (text.startsWith(delimiter, p)) {
          p += delimiter.length;
          continue;
        }
        break; // a line end or the end of the text
      }
      if (!complete) return recordStart;
      const recordEnd = p;
      if (p < n) p++; // the "\n"
      else if (more) return recordStart; // a last line without its "\n" may continue
      line += lines + 1;
      emit(fields, recordLine, text, recordStart, recordEnd, onRow);
    }
    return n;
  };

  return {
    feed(text, start, end, onRow) {
      const chunk = held + text.slice(start, end);
      held = chunk.slice(read(chunk, true, onRow));
    },
    finish(onRow) {
      if (held.length > 0) read(held, false, onRow);
      held = "";
    },
  };
}

/** A record's text: its lines (CRLF or LF) joined by "\n", without the line end after it. */
function recordText(text: string, start: number, end: number): string {
  const s = stripCr(text.slice(start, end));
  return s.includes("\r\n") ? s.replaceAll("\r\n", "\n") : s;
}

function fieldEnd(text: string, from: number, delimiter: string): number {
  const nl = text.indexOf("\n", from);
  const d = text.indexOf(delimiter, from);
  const end = nl < 0 ? text.length : nl;
  return d >= 0 && d < end ? d : end;
}

function stripCr(s: string): string {
  return s.endsWith("\r") ? s.slice(0, -1) : s;
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf("\n"); i >= 0; i = s.indexOf("\n", i + 1)) n++;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Line formats: W3C and Zeek

/** Reads one line (without its line end, numbered from 1); a row or null. */
type LineParser = (line: string, number: number) => Row | null;

function lineReader(parse: LineParser): TableReader {
  let number = 0;
  let held = "";
  const each = (text: string, onRow: OnRow) => {
    let pos = 0;
    while (pos < text.length) {
      const nl = text.indexOf("\n", pos);
      const stop = nl < 0 ? text.length : nl;
      const line = stripCr(text.slice(pos, stop));
      pos = stop + 1;
      number++;
      if (line === "") continue;
      const row = parse(line, number);
      if (row !== null) onRow(row, number, line, 0, line.length);
    }
  };
  return {
    feed(text, start, end, onRow) {
      // Pieces end at line ends, except a last line without one (kept for finish).
      let chunk = held + text.slice(start, end);
      const last = chunk.lastIndexOf("\n") + 1;
      held = chunk.slice(last);
      chunk = chunk.slice(0, last);
      each(chunk, onRow);
    },
    finish(onRow) {
      if (held.length > 0) each(held, onRow);
      held = "";
    },
  };
}

/** W3C field names with a type, as IIS writes them; the others are STRING. */
const W3C_TYPES: Readonly<Record<string, "ip" | "long">> = {
  "c-ip": "ip",
  "s-ip": "ip",
  "s-port": "long",
  "sc-status": "long",
  "sc-substatus": "long",
  "sc-win32-status": "long",
  "sc-bytes": "long",
  "cs-bytes": "long",
  "time-taken": "long",
};

function w3cLines(uri: string, problems: Problems): LineParser {
  let names: string[] | null = null;
  return (line, number) => {
    if (line.startsWith("#")) {
      if (line.startsWith("#Fields:")) names = line.slice(8).trim().split(/\s+/);
      return null;
    }
    if (names === null) {
      problems.add("came before a '#Fields:' line and were skipped", `line ${number} of '${uri}'`);
      return null;
    }
    const values = line.split(" ");
    if (values.length !== names.length) {
      problems.add(
        `had another number of fields than '#Fields:' and were skipped`,
        `line ${number} of '${uri}'`,
      );
      return null;
    }
    const row: Row = {};
    for (let i = 0; i < names.length; i++) {
      const raw = values[i]!;
      const type = W3C_TYPES[names[i]!];
      row[names[i]!] = raw === "-"
        ? null
        : type === "ip"
        ? parseIp(raw)
        : type === "long"
        ? toNumber(raw)
        : raw;
    }
    if (typeof row.date === "string" && typeof row.time === "string") {
      const ms = parseTimestamp(`${row.date} ${row.time}`, "UTC");
      row.timestamp = ms === null ? null : new Timestamp(ms);
    }
    return row;
  };
}

function toNumber(raw: string): number | null {
  const n = Number(raw);
  return raw.trim() !== "" && Number.isFinite(n) ? n : null;
}

function zeekLines(uri: string, problems: Problems): LineParser {
  let separator = "\t";
  let setSeparator = ",";
  let empty = "(empty)";
  let unset = "-";
  let names: string[] | null = null;
  let converters: ((raw: string) => Value)[] = [];
  const setTypes = (types: string[]) => {
    converters = types.map((t) => zeekConverter(t, () => setSeparator, () => empty));
  };
  return (line, number) => {
    if (line.startsWith("#")) {
      if (line.startsWith("#separator ")) {
        separator = unescapeZeek(line.slice("#separator ".length));
        return null;
      }
      const [key, ...rest] = line.split(separator);
      if (key === "#set_separator") setSeparator = unescapeZeek(rest[0] ?? ",");
      else if (key === "#empty_field") empty = rest[0] ?? empty;
      else if (key === "#unset_field") unset = rest[0] ?? unset;
      else if (key === "#fields") {
        names = rest;
        if (converters.length !== rest.length) setTypes(rest.map(() => "string"));
      } else if (key === "#types") setTypes(rest);
      return null;
    }
    if (names === null) {
      problems.add("came before a '#fields' line and were skipped", `line ${number} of '${uri}'`);
      return null;
    }
    const values = line.split(separator);
    if (values.length !== names.length) {
      problems.add(
        "had another number of fields than '#fields' and were skipped",
        `line ${number} of '${uri}'`,
      );
      return null;
    }
    const row: Row = {};
    for (let i = 0; i < names.length; i++) {
      const raw = values[i]!;
      row[names[i]!] = raw === unset ? null : converters[i]!(raw);
    }
    return row;
  };
}

/** `\x09` and the like, as Zeek escapes bytes in its logs. */
function unescapeZeek(s: string): string {
  if (!s.includes("\\x")) return s;
  return s.replace(/\\x([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

function zeekConverter(
  type: string,
  setSeparator: () => string,
  empty: () => string,
): (raw: string) => Value {
  const container = /^(?:set|vector|table)\[(.+)\]$/.exec(type);
  if (container) {
    const element = zeekConverter(container[1]!, setSeparator, empty);
    return (raw) => raw === empty() ? [] : raw.split(setSeparator()).map(element);
  }
  switch (type) {
    case "time":
      return (raw) => {
        const n = toNumber(raw);
        return n === null ? null : new Timestamp(truncatedMillis(n));
      };
    case "interval":
      return (raw) => {
        const n = toNumber(raw);
        return n === null ? null : new Interval(truncatedMillis(n));
      };
    case "count":
    case "int":
    case "port":
    case "double":
      return toNumber;
    case "bool":
      return (raw) => raw === "T" ? true : raw === "F" ? false : null;
    case "addr":
      return parseIp;
    case "subnet":
      return parseNet;
    default:
      return (raw) => raw === empty() ? "" : unescapeZeek(raw);
  }
}
