/**
 * Result rows rendered straight into UTF-8 bytes: the writer of a text format (JSON objects,
 * CSV or TSV lines) compiled once per result's columns, writing a whole batch into one growing
 * byte buffer and noting where each row ends. No string per row and, for the common values
 * (numbers, ASCII strings, IPv4 addresses, ISO timestamps), none per value either. It is the
 * one writer of rows as text: `compileRowTextWriter` gives a row's string through it, and each
 * format is one entry of `TEXT_FORMATS` (engine/render/render_bytes_test.ts checks the bytes against
 * API.md's forms value kind by value kind and on generated rows).
 *
 *   const write = compileRowBytesWriter("json", ["time", "ip"], { timeZone: "UTC" });
 *   const sink = new ByteSink();
 *   const ends: number[] = [];
 *   write(rows, sink, ends); // sink.bytes[0, sink.at): the rows back to back; ends[i]: row i's end
 *
 * Used where rows become a result's stored fragments: in the scan workers (so that a wide
 * result is rendered on every core) and in the query's thread (actors/engine_work.ts); as
 * strings where a body gathers text (routes/formats.ts `rowWriterOf`).
 */

import { compileTimestampFormatter, formatIso } from "../values/time_format.ts";
import { formatIp } from "../values/ip.ts";
import { toJsonValue, toText } from "./render.ts";
import { Interval, IpAddr, type Row, Timestamp, type Value } from "../values/values.ts";
import type { RenderOptions } from "./render.ts";
import { generatedFunction } from "../values/generated_code.ts";
import { bytesText } from "../values/short_strings.ts";

/** The text formats a result's rows are stored in when its format is fixed. */
export type RowTextFormat = "json" | "csv" | "tsv";

const encoder = new TextEncoder();

/** A growing byte buffer that values are written into; `bytes[0, at)` is what was written. */
export class ByteSink {
  bytes: Uint8Array<ArrayBuffer>;
  at = 0;

  constructor(size = 64 * 1024) {
    this.bytes = new Uint8Array(size);
  }

  /** Makes room for `n` more bytes. */
  room(n: number): void {
    if (this.at + n <= this.bytes.length) return;
    const next = new Uint8Array(Math.max(this.bytes.length * 2, this.at + n));
    next.set(this.bytes.subarray(0, this.at));
    this.bytes = next;
  }

  byte(b: number): void {
    if (this.at === this.bytes.length) this.room(1);
    this.bytes[this.at++] = b;
  }

  raw(b: Uint8Array): void {
    const n = b.length;
    this.room(n);
    // Short ones (a column's prefix, a timestamp's head) byte by byte: cheaper than a call out.
    if (n > 32) {
      this.bytes.set(b, this.at);
      this.at += n;
      return;
    }
    const bytes = this.bytes;
    let at = this.at;
    for (let i = 0; i < n; i++) bytes[at++] = b[i]!;
    this.at = at;
  }

  /** Any text, as UTF-8 (a lone surrogate as U+FFFD, as TextEncoder does). */
  text(s: string): void {
    const n = s.length;
    this.room(3 * n);
    const bytes = this.bytes;
    let at = this.at;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) bytes[at++] = c;
      else {
        at += encoder.encodeInto(s.slice(i), bytes.subarray(at)).written;
        break;
      }
    }
    this.at = at;
  }

  /** A string as a JSON string literal, as JSON.stringify writes it. */
  jsonString(s: string): void {
    const n = s.length;
    this.room(n + 2);
    const bytes = this.bytes;
    const start = this.at;
    let at = start;
    bytes[at++] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x20 && c < 0x80 && c !== 0x22 && c !== 0x5c) bytes[at++] = c;
      else {
        // Escapes or non-ASCII: JSON.stringify's own text.
        this.at = start;
        this.text(JSON.stringify(s));
        return;
      }
    }
    bytes[at++] = 0x22;
    this.at = at;
  }

  /** A finite number as `String(n)` writes it; integers of 32 bits digit by digit. */
  number(n: number): void {
    if ((n | 0) !== n) return this.text(String(n));
    this.room(11);
    const bytes = this.bytes;
    let at = this.at;
    let v = n;
    if (v < 0) {
      bytes[at++] = 0x2d;
      // -2^31 has no positive 32-bit counterpart: its digits are those of the float.
      if (v === -2147483648) {
        this.at = at;
        return this.text("2147483648");
      }
      v = -v;
    }
    this.at = putUint(bytes, at, v);
  }

  /** An IPv4 address `a.b.c.d` from its 32 bits. */
  ipv4(bits: number): void {
    this.room(15);
    const bytes = this.bytes;
    let at = octet(bytes, this.at, bits >>> 24);
    bytes[at++] = 0x2e;
    at = octet(bytes, at, (bits >>> 16) & 255);
    bytes[at++] = 0x2e;
    at = octet(bytes, at, (bits >>> 8) & 255);
    bytes[at++] = 0x2e;
    this.at = octet(bytes, at, bits & 255);
  }
}

/** Writes `v` (0..255) in decimal at `at`; returns the offset past it. */
function octet(bytes: Uint8Array, at: number, v: number): number {
  if (v >= 100) {
    bytes[at++] = 0x30 + ((v / 100) | 0);
    v %= 100;
    bytes[at++] = 0x30 + ((v / 10) | 0);
  } else if (v >= 10) bytes[at++] = 0x30 + ((v / 10) | 0);
  bytes[at++] = 0x30 + (v % 10);
  return at;
}

/**
 * Timestamps as text: ISO 8601 in the zone, or the user's pattern. ISO texts are made once per
 * second and their milliseconds written in: a zone's offset changes on whole seconds only.
 */
class TimestampWriter {
  readonly #iso: boolean;
  readonly #zone: string;
  readonly #format: ((ms: number, zone: string) => string) | undefined;
  #second = NaN;
  /** The ISO text of the second being written, as bytes; its milliseconds at `#millisAt`. */
  readonly #bytes = new Uint8Array(ISO_BYTES);
  #length = 0;
  #millisAt = 0;

  constructor(opts: RenderOptions) {
    this.#iso = !opts.timestampFormat;
    this.#zone = opts.timeZone;
    this.#format = opts.timestampFormat
      ? compileTimestampFormatter(opts.timestampFormat)
      : undefined;
  }

  /** The text of `ms` (what engine/render/render.ts writes). */
  text(ms: number): string {
    return this.#format ? this.#format(ms, this.#zone) : formatIso(ms, this.#zone);
  }

  /** Writes the bare text of an ISO timestamp; false when a pattern is in force. */
  iso(sink: ByteSink, ms: number): boolean {
    if (!this.#iso) return false;
    sink.room(ISO_BYTES);
    const at = this.put(sink.bytes, sink.at, ms);
    if (at >= 0) sink.at = at;
    else sink.text(formatIso(ms, this.#zone));
    return true;
  }

  /**
   * Writes the bare ISO text of `ms` into `b` at `at` (ISO_BYTES of room there); returns the
   * offset past it, or -1 where it is not written so: a pattern in force, or a text not ASCII.
   */
  put(b: Uint8Array, at: number, ms: number): number {
    if (!this.#iso) return -1;
    const second = Math.floor(ms / 1000);
    if (second !== this.#second) {
      const text = formatIso(ms, this.#zone);
      // Digits, signs, T, Z, colons: ASCII, one byte a character (a text of another kind is
      // written as a text).
      const dot = text.lastIndexOf(".");
      let ascii = text.length <= this.#bytes.length && dot > 0 && dot + 4 <= text.length;
      for (let i = 0; ascii && i < text.length; i++) {
        const c = text.charCodeAt(i);
        ascii = c < 0x80;
        this.#bytes[i] = c;
      }
      if (!ascii) {
        this.#second = NaN;
        return -1;
      }
      this.#length = text.length;
      this.#millisAt = dot + 1;
      this.#second = second;
    }
    const millis = ms - second * 1000;
    const length = this.#length;
    const own = this.#bytes;
    for (let i = 0; i < length; i++) b[at + i] = own[i]!;
    const m = at + this.#millisAt;
    b[m] = 0x30 + ((millis / 100) | 0);
    b[m + 1] = 0x30 + (((millis / 10) | 0) % 10);
    b[m + 2] = 0x30 + (millis % 10);
    return at + length;
  }
}

/** The most bytes an ISO timestamp's text written in place takes (TimestampWriter's own). */
const ISO_BYTES = 64;

type ValueWriter = (sink: ByteSink, v: Value | undefined) => void;

/**
 * A format's writers of a value by its kind, without a Value made for it: what a column of
 * vectors (ColumnVectors) is written with, and what the writer of any value goes to for the
 * common kinds (one text per kind, whichever way the value comes).
 */
interface KindWriters {
  /** A null, or a field the row has not. */
  nul(sink: ByteSink): void;
  num(sink: ByteSink, n: number): void;
  bool(sink: ByteSink, b: boolean): void;
  str(sink: ByteSink, s: string): void;
  /** A timestamp by its milliseconds. */
  ts(sink: ByteSink, ms: number): void;
  /** An IPv4 address by its 32 bits. */
  ip4(sink: ByteSink, bits: number): void;
  /** Any value (the kinds above included). */
  value: ValueWriter;
  /** The timestamps' writer `ts` uses. */
  readonly clock: TimestampWriter;
}

function jsonKinds(opts: RenderOptions): KindWriters {
  const ts = new TimestampWriter(opts);
  const k: KindWriters = {
    clock: ts,
    nul: (sink) => sink.text("null"),
    num: (sink, n) => Number.isFinite(n) ? sink.number(n) : sink.text("null"),
    bool: (sink, b) => sink.text(b ? "true" : "false"),
    str: (sink, s) => sink.jsonString(s),
    ts: (sink, ms) => {
      sink.byte(0x22);
      if (ts.iso(sink, ms)) return sink.byte(0x22);
      sink.at--;
      sink.jsonString(ts.text(ms));
    },
    ip4: (sink, bits) => {
      sink.byte(0x22);
      sink.ipv4(bits);
      sink.byte(0x22);
    },
    value: (sink, v) => {
      if (v === null || v === undefined) return k.nul(sink);
      switch (typeof v) {
        case "string":
          return k.str(sink, v);
        case "number":
          return k.num(sink, v);
        case "boolean":
          return k.bool(sink, v);
      }
      if (v instanceof Timestamp) return k.ts(sink, v.ms);
      if (v instanceof Interval) return sink.number(v.ms);
      if (v instanceof IpAddr) {
        if (v.version === 4) return k.ip4(sink, v.bits as number);
        return sink.jsonString(formatIp(v));
      }
      sink.text(JSON.stringify(toJsonValue(v, opts)));
    },
  };
  return k;
}

function csvQuoted(sink: ByteSink, s: string): void {
  sink.byte(0x22);
  sink.text(s.includes('"') ? s.replaceAll('"', '""') : s);
  sink.byte(0x22);
}

function tsvCell(sink: ByteSink, s: string): void {
  sink.text(tsvEscape(s));
}

/** A TSV cell: no quoting; a tab, a line end or a backslash inside is escaped (`\t \n \r \\`). */
export function tsvEscape(text: string): string {
  return /[\t\n\r\\]/.test(text)
    ? text.replace(
      /[\t\n\r\\]/g,
      (c) => c === "\t" ? "\\t" : c === "\n" ? "\\n" : c === "\r" ? "\\r" : "\\\\",
    )
    : text;
}

/**
 * The writers of a delimited format: CSV (`quoted`: texts, timestamps and addresses in `"`, a
 * `"` inside doubled) or TSV (bare, escaped); numbers and booleans bare, null empty.
 */
function delimitedKinds(quoted: boolean): (opts: RenderOptions) => KindWriters {
  const cell = quoted ? csvQuoted : tsvCell;
  return (opts) => {
    const ts = new TimestampWriter(opts);
    const k: KindWriters = {
      clock: ts,
      nul: () => {},
      num: (sink, n) => Number.isFinite(n) ? sink.number(n) : undefined,
      bool: (sink, b) => sink.text(b ? "true" : "false"),
      str: cell,
      // ISO text needs neither doubling nor escaping: written in place, quotes around it.
      ts: (sink, ms) => {
        if (quoted) sink.byte(0x22);
        if (ts.iso(sink, ms)) return quoted ? sink.byte(0x22) : undefined;
        if (quoted) sink.at--;
        cell(sink, ts.text(ms));
      },
      ip4: (sink, bits) => {
        if (quoted) sink.byte(0x22);
        sink.ipv4(bits);
        if (quoted) sink.byte(0x22);
      },
      value: (sink, v) => {
        if (v === null || v === undefined) return;
        switch (typeof v) {
          case "string":
            return cell(sink, v);
          case "number":
            return k.num(sink, v);
          case "boolean":
            return k.bool(sink, v);
        }
        if (v instanceof Interval) return sink.number(v.ms);
        if (v instanceof Timestamp) return k.ts(sink, v.ms);
        if (v instanceof IpAddr && v.version === 4) return k.ip4(sink, v.bits as number);
        const text = toText(v, opts);
        if (text !== null) cell(sink, text);
      },
    };
    return k;
  };
}

/** Writes rows into `sink`, noting after each the sink's offset in `ends`. */
export type RowBytesWriter = (rows: readonly Row[], sink: ByteSink, ends: number[]) => void;

/**
 * Where a compiled writer takes its values from, when not from the rows' fields of the columns'
 * names: `read[i]` computes column i from the row (a projection's column, so that the projected
 * row is never made); `nulls[i]` is set when column i held a null.
 */
export interface RowBytesSource {
  readonly read?: readonly ((row: Row) => Value)[];
  readonly nulls?: boolean[];
  /** Text written before each row (the body's separator and `before`: RowFrame). */
  readonly lead?: string;
  /** Text written after each row (the body's `after`). */
  readonly trail?: string;
}

/** What a text format writes around and for its values; one entry per `RowTextFormat`. */
interface TextFormat {
  /** The writers of one column's values (one per column: its own caches and type feedback). */
  readonly kinds: (opts: RenderOptions) => KindWriters;
  /** Text before column `i`'s value; `lead` is the frame's text before a row. */
  readonly prefix: (column: string, i: number, lead: string) => string;
  /** Text after a row's last value (before the frame's `trail`). */
  readonly close: (columnCount: number) => string;
  /** The header of a result with these columns, with its line end; "" for none. */
  readonly header: (columns: readonly string[]) => string;
}

/**
 * Every text format's writer, keyed by the format: a format added to `RowTextFormat` fails to
 * compile until it has its entry here.
 */
const TEXT_FORMATS: Readonly<Record<RowTextFormat, TextFormat>> = {
  json: {
    kinds: jsonKinds,
    prefix: (column, i, lead) => (i === 0 ? lead + "{" : ",") + JSON.stringify(column) + ":",
    close: (n) => n === 0 ? "{}" : "}",
    header: () => "",
  },
  csv: {
    kinds: delimitedKinds(true),
    prefix: (_column, i, lead) => i === 0 ? lead : ";",
    close: () => "",
    header: (columns) => columns.map((c) => '"' + c.replaceAll('"', '""') + '"').join(";") + "\n",
  },
  tsv: {
    kinds: delimitedKinds(false),
    prefix: (_column, i, lead) => i === 0 ? lead : "\t",
    close: () => "",
    header: (columns) => columns.map(tsvEscape).join("\t") + "\n",
  },
};

/**
 * The writer of rows of `columns` in a text format, compiled for those columns: the loop over a
 * row's values is generated code with the column names as constants, so that each column's
 * read is a plain property access.
 */
export function compileRowBytesWriter(
  format: RowTextFormat,
  columns: readonly string[],
  opts: RenderOptions,
  source: RowBytesSource = {},
): RowBytesWriter {
  const text = TEXT_FORMATS[format];
  const writers = columns.map(() => text.kinds(opts).value);
  const lead = source.lead ?? "";
  const trail = text.close(columns.length) + (source.trail ?? "");
  const prefixes = columns.map((c, i) => encoder.encode(text.prefix(c, i, lead)));
  const lines: string[] = [];
  if (columns.length === 0 && lead !== "") lines.push(`sink.text(${JSON.stringify(lead)});`);
  columns.forEach((c, i) => {
    const p = prefixes[i]!;
    if (p.length === 1) lines.push(`sink.byte(${p[0]!});`);
    else if (p.length > 1) lines.push(`sink.raw(P[${i}]);`);
    const value = source.read ? `R[${i}](row)` : `row[${JSON.stringify(c)}]`;
    if (source.nulls) {
      lines.push(`v = ${value};`, `if (v === null || v === undefined) N[${i}] = true;`);
      lines.push(`W[${i}](sink, v);`);
    } else lines.push(`W[${i}](sink, ${value});`);
  });
  const tail = encoder.encode(trail);
  if (tail.length === 1) lines.push(`sink.byte(${tail[0]});`);
  else if (tail.length > 1) lines.push(`sink.raw(T);`);
  const body = `return function writeRows(rows, sink, ends) {
  let v;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    ${lines.join("\n    ")}
    ends.push(sink.at);
  }
};`;
  // Generated from the column names (quoted by JSON.stringify) and nothing else.
  return generatedFunction(["W", "P", "R", "N", "T"], body)(
    writers,
    prefixes,
    source.read,
    source.nulls,
    tail,
  ) as RowBytesWriter;
}

/**
 * One column of a block of rows as vectors, by row: `tags[i]` 0 a value, 1 null, 2 absent
 * (null: every row has a value). What a cached block's columns (engine/fs/column_block.ts) and
 * a reader's columns (engine/pattern/byte_scanner.ts's ColumnSink) are written from.
 */
export type ColumnVectors =
  | {
    /** Numbers, booleans (1 true), timestamps' milliseconds, IPv4 addresses' bits. */
    readonly kind: "num" | "bool" | "ts" | "ip4";
    readonly vec: ArrayLike<number>;
    readonly tags: Uint8Array | null;
  }
  | {
    /** Strings: value i is `text.slice(offsets[i], offsets[i + 1])`. */
    readonly kind: "str";
    readonly text: string;
    readonly offsets: ArrayLike<number>;
    readonly tags: Uint8Array | null;
  }
  | {
    /** Strings by entry: value i is `list[vec[i]]`. */
    readonly kind: "dict";
    readonly list: readonly string[];
    readonly vec: ArrayLike<number>;
    readonly tags: Uint8Array | null;
  }
  | {
    /**
     * Texts as UTF-8 spans of `bytes`: value i is `bytes[vec[2i], vec[2i + 1])`, null where
     * `vec[2i]` is -1 (PARSE's fields of text, engine/pattern/byte_scanner.ts's ColumnSink).
     */
    readonly kind: "span";
    readonly bytes: Uint8Array;
    readonly vec: Int32Array;
  }
  | {
    /** Any values (null or undefined where there is none). */
    readonly kind: "values";
    readonly list: readonly (Value | undefined)[];
  };

/**
 * Writes rows `from` to `to` of a block: those rows themselves, or where `picks` is given the
 * rows `picks[from]` to `picks[to - 1]`.
 */
export type BlockBytesWriter = (picks: Int32Array | null, from: number, to: number) => void;

/**
 * The writer of a result's rows in a text format from columns of vectors, one per result
 * column, instead of rows: the same bytes compileRowBytesWriter writes for rows of those
 * values, with no row and no value made (a dictionary's entry is written once per block and
 * copied after). `block(columns)` binds it to one block's columns; its rows go to `sink`, each
 * row's end to `ends`, and `nulls[i]` is set when column i held a null.
 *
 *   const w = compileColumnBytesWriter("json", ["time", "ip"], opts, sink, ends, nulls);
 *   w.block([{ kind: "ts", vec: ms, tags: null }, { kind: "ip4", vec: bits, tags }])(null, 0, n);
 */
export function compileColumnBytesWriter(
  format: RowTextFormat,
  columns: readonly string[],
  opts: RenderOptions,
  sink: ByteSink,
  ends: number[],
  nulls: boolean[],
  frame: { readonly lead?: string; readonly trail?: string } = {},
): { block(cols: readonly ColumnVectors[]): BlockBytesWriter } {
  const text = TEXT_FORMATS[format];
  const writers = columns.map(() => text.kinds(opts));
  const lead = frame.lead ?? "";
  const prefixes = columns.map((c, i) => encoder.encode(text.prefix(c, i, lead)));
  const tail = encoder.encode(text.close(columns.length) + (frame.trail ?? ""));
  const json = format === "json";
  /** The code of a block of each shape (its columns' kinds, and which have tags), made once. */
  const bodies = new Map<string, string>();
  const bodyOf = (cols: readonly ColumnVectors[]): string => {
    const lines: string[] = [];
    if (columns.length === 0 && lead !== "") lines.push(bytesIn(encoder.encode(lead)));
    cols.forEach((c, k) => {
      lines.push(bytesIn(prefixes[k]!));
      const value = valueCode(c, k, json);
      lines.push(tagged(c) ? `if (t${k}[i] !== 0) { ${nulCode(k, json)} } else ${value}` : value);
    });
    lines.push(bytesIn(tail));
    const vars = cols.map((c, k) =>
      `const W${k} = W[${k}], v${k} = C[${k}].vec, t${k} = C[${k}].tags, x${k} = C[${k}].text, y${k} = C[${k}].bytes, o${k} = C[${k}].offsets, l${k} = C[${k}].list, D${k} = ${
        c.kind === "dict" ? `new Array(l${k}.length)` : "null"
      }, K${k} = W${k}.clock;`
    );
    // Written in place through \`b\` and \`a\` (the sink's bytes and offset), which the code
    // takes back from the sink after each call that writes through it.
    return `${vars.join("\n")}
return function writeColumns(picks, from, to) {
  let b = sink.bytes, a = sink.at;
  for (let j = from; j < to; j++) {
    const i = picks === null ? j : picks[j];
    ${lines.filter((l) => l !== "").join("\n    ")}
    sink.at = a;
    ends.push(a);
  }
};`;
  };
  return {
    block(cols) {
      if (cols.length !== columns.length) throw new Error("a column for each of the result's");
      // A source writes a block per piece it reads (1 MiB): the code is made for the first of
      // its shape (making it again took about 4% of a scan worker on the wide task).
      const shape = cols.map((c) => `${c.kind}${tagged(c) ? "?" : ""}`).join();
      let body = bodies.get(shape);
      if (body === undefined) bodies.set(shape, body = bodyOf(cols));
      // Generated from the columns' kinds and the bytes between values (as numbers) only.
      return generatedFunction(
        ["W", "C", "N", "sink", "ends", "putUint", "octet", "bytesText"],
        body,
      )(writers, cols, nulls, sink, ends, putUint, octet, bytesText) as BlockBytesWriter;
    },
  };
}

const NULL_BYTES = encoder.encode("null");

/** Whether column `c`'s nulls are in its tags (tested before its value's code). */
function tagged(c: ColumnVectors): boolean {
  return c.kind !== "values" && c.kind !== "span" && c.tags !== null;
}

/** Code writing column `k`'s null (and noting that it held one). */
function nulCode(k: number, json: boolean): string {
  return `N[${k}] = true; ${json ? bytesIn(NULL_BYTES) : callCode(`W${k}.nul(sink)`)}`;
}

/**
 * JSON code writing the text of units `s` to `e` (`read(j)` gives unit j: a char code or a
 * byte) in place when each is printable ASCII needing no escape, else by `slow`.
 */
function plainTextCode(read: (j: string) => string, slow: string): string {
  return `{ ${roomCode("e - s + 2")} const at = a; b[a++] = 34;
for (let j = s; j < e; j++) {
  const c = ${read("j")};
  if (c >= 0x20 && c < 0x80 && c !== 0x22 && c !== 0x5c) b[a++] = c; else { a = -1; break; }
}
if (a >= 0) b[a++] = 34; else { a = at; ${slow} } }`;
}

/** Code making room for `n` more bytes at \`a\` of \`b\` (the sink grown where needed). */
function roomCode(n: number | string): string {
  return `if (a + ${n} > b.length) { sink.at = a; sink.room(${n}); b = sink.bytes; }`;
}

/** Code writing the bytes `p` at \`a\` of \`b\`, one store each. */
function bytesIn(p: Uint8Array): string {
  if (p.length === 0) return "";
  return `${roomCode(p.length)} ${
    Array.from(p, (x, j) => `b[a${j === 0 ? "" : ` + ${j}`}] = ${x};`).join(" ")
  } a += ${p.length};`;
}

/** Code of a call to a writer that writes through the sink: \`b\` and \`a\` taken back after. */
function callCode(call: string): string {
  return `{ sink.at = a; ${call}; b = sink.bytes; a = sink.at; }`;
}

/**
 * The code of column `k`'s value in row \`i\` (its tag tested before). In JSON it is written in
 * place where it is a plain case (an integer, an ISO timestamp, an IPv4 address, a text of ASCII
 * needing no escape); a dictionary's entry is written once and then copied; the rest, and every
 * value of CSV and TSV, by the column's writer.
 */
function valueCode(c: ColumnVectors, k: number, json: boolean): string {
  switch (c.kind) {
    case "num":
      return json
        ? `{ const v = v${k}[i];
if ((v | 0) === v && v >= 0) { ${roomCode(10)} a = putUint(b, a, v); }
else ${callCode(`W${k}.num(sink, v)`)} }`
        : callCode(`W${k}.num(sink, v${k}[i])`);
    case "bool":
      return callCode(`W${k}.bool(sink, v${k}[i] === 1)`);
    case "ts":
      return json
        ? `{ ${roomCode(ISO_BYTES + 2)} const e = K${k}.put(b, a + 1, v${k}[i]);
if (e >= 0) { b[a] = 34; b[e] = 34; a = e + 1; } else ${callCode(`W${k}.ts(sink, v${k}[i])`)} }`
        : callCode(`W${k}.ts(sink, v${k}[i])`);
    case "ip4":
      return json
        ? `{ ${roomCode(17)} const v = v${k}[i]; b[a++] = 34;
a = octet(b, a, v >>> 24); b[a++] = 46; a = octet(b, a, (v >>> 16) & 255); b[a++] = 46;
a = octet(b, a, (v >>> 8) & 255); b[a++] = 46; a = octet(b, a, v & 255); b[a++] = 34; }`
        : callCode(`W${k}.ip4(sink, v${k}[i])`);
    case "str":
      return json
        ? `{ const s = o${k}[i], e = o${k}[i + 1]; ${
          plainTextCode((j) =>
            `x${k}.charCodeAt(${j})`, callCode(`W${k}.str(sink, x${k}.slice(s, e))`))
        } }`
        : callCode(`W${k}.str(sink, x${k}.slice(o${k}[i], o${k}[i + 1]))`);
    case "dict":
      // Each entry written once (into D), then copied.
      return `{ const e = v${k}[i]; const d = D${k}[e];
if (d === undefined) { const at = a; ${
        callCode(`W${k}.str(sink, l${k}[e])`)
      } D${k}[e] = b.slice(at, a); }
else { const n = d.length; ${
        roomCode("n")
      } for (let j = 0; j < n; j++) b[a + j] = d[j]; a += n; } }`;
    case "span": {
      // Bytes that need no escape copied; other texts made and written as a text is.
      const slow = callCode(`W${k}.str(sink, bytesText(y${k}, s, e))`);
      return `{ const s = v${k}[i << 1], e = v${k}[(i << 1) + 1];
if (s < 0) { ${nulCode(k, json)} }
else ${json ? plainTextCode((j) => `y${k}[${j}]`, slow) : slow} }`;
    }
    case "values":
      // Texts (a reader's list of a field of text) without the value writer's dispatch.
      return `{ const x = l${k}[i]; if (x === null || x === undefined) N[${k}] = true;
${callCode(`if (typeof x === "string") W${k}.str(sink, x); else W${k}.value(sink, x)`)} }`;
  }
}

/**
 * Writes `v` (a non-negative 32-bit integer) in decimal at `at`, its digits counted first, then
 * written from the last; returns the offset past it.
 */
function putUint(bytes: Uint8Array, at: number, v: number): number {
  const digits = v < 10
    ? 1
    : v < 100
    ? 2
    : v < 1000
    ? 3
    : v < 10000
    ? 4
    : v < 100000
    ? 5
    : v < 1000000
    ? 6
    : v < 10000000
    ? 7
    : v < 100000000
    ? 8
    : v < 1000000000
    ? 9
    : 10;
  let i = at + digits;
  do {
    const q = (v / 10) | 0;
    bytes[--i] = 0x30 + (v - q * 10);
    v = q;
  } while (v > 0);
  return at + digits;
}

/**
 * One row as a string, through the same compiled writer (for bodies that gather text): the
 * only text writer of rows, so that a row reads the same whichever way it goes out.
 *
 *   const write = compileRowTextWriter("csv", ["a", "b"], { timeZone: "UTC" });
 *   write({ a: 1, b: "x" }); // '1;"x"'
 */
export function compileRowTextWriter(
  format: RowTextFormat,
  columns: readonly string[],
  opts: RenderOptions,
): (row: Row) => string {
  const write = compileRowBytesWriter(format, columns, opts);
  const sink = new ByteSink(1024);
  const ends: number[] = [];
  const one: Row[] = [{}];
  const decoder = new TextDecoder();
  return (row) => {
    sink.at = 0;
    ends.length = 0;
    one[0] = row;
    write(one, sink, ends);
    return decoder.decode(sink.bytes.subarray(0, sink.at));
  };
}

/** The header line of a result in a text format (with its line end); "" for JSON. */
export function headerText(format: RowTextFormat, columns: readonly string[]): string {
  return TEXT_FORMATS[format].header(columns);
}
