/**
 * READ_JSON: one row per JSON object. A file is JSON lines (one value per line), one JSON array
 * of objects (when its first character is `[`), or objects written across lines (when its first
 * line is a lone `{`: a pretty-printed object, as an export of one object or `jq` writes them),
 * read as a stream in every case.
 * Values stay JSON-native (objects are TUPLEs, arrays ARRAYs); the static types are ANY and
 * the result schema comes from the data.
 *
 *   readJsonSource(files, ["status"], ctx) // rows { status } only
 *   readJsonSource(files, null, ctx)       // rows with every field of each object
 *
 * Lines or elements that are not JSON objects are skipped, and counted in one WARN per
 * source that names the first of them.
 */

import type { FileEntry } from "../contracts/datastore.ts";
import type { Row, Value } from "../values/values.ts";
import { type BatchStream, type ExecContext, expectFiles, RowSink } from "../plan/context.ts";
import { scanByteLines } from "./scan_lines.ts";
import { jsonFieldReader } from "./json_fields.ts";
import { type JsonLineReader, jsonLineReader, type JsonPath } from "./json_line_reader.ts";
import { scanPathReader } from "./json_index_reader.ts";
import { type SkipTally, skipWarning } from "../plan/skip_tally.ts";
import { generatedFunction } from "../values/generated_code.ts";
import type { RecordExtras } from "./read_table_source.ts";
import { firstLineOf } from "./parallel/shares.ts";
import type { ColumnSink } from "../pattern/byte_scanner.ts";

/**
 * Up to this many needed fields, flat lines are read without JSON.parse: from their bytes
 * (json_line_reader.ts), else from their text (json_fields.ts).
 */
const FIELD_READER_MAX = 8;

/** Objects and arrays nested deeper than this in one record are skipped with a warning. */
export const MAX_JSON_DEPTH = 128;

/**
 * Rows of the JSON files; `needed` (top-level names) limits the fields, null keeps all.
 * `keep`, when given, is a filter pushed into the scan: only the rows it keeps are handed out.
 * `paths` names fields of `needed` that the query reads only through members: the byte reader
 * gives such a field as a tuple of just those members (the other readers give it whole, which
 * reads the same). `extra` adds each record's line number and text (`line_field`,
 * `raw_field`): the number of the line it starts on (whole files are read from their start),
 * and its JSON text (a line, an element of the array, an object across lines).
 *
 * With `columns` (the column cache's fill, engine/exec/cached_scan.ts), every record's fields of
 * `needed` go into the sink's columns instead, unfiltered, and no row is given: flat fields
 * straight from the path reader's values (numbers into vectors, the rest into lists), without a
 * row made for each record.
 */
export async function* readJsonSource(
  files: AsyncIterable<FileEntry> | Iterable<FileEntry>,
  needed: readonly string[] | null,
  ctx: ExecContext,
  keep?: (row: Row) => boolean,
  paths?: ReadonlyMap<string, readonly (readonly string[])[]>,
  extra: RecordExtras = {},
  columns?: ColumnSink,
): BatchStream {
  const pick = picker(needed);
  const { line: lineName, raw: rawName } = extra;
  const extras = lineName !== undefined || rawName !== undefined;
  /** The row with the fields asked for beside the record's own (the file's replace the data's). */
  const origin = (row: Row, line: number, raw: string): Row => {
    if (lineName !== undefined) row[lineName] = line;
    if (rawName !== undefined) row[rawName] = raw;
    return row;
  };
  const readFields = needed !== null && needed.length <= FIELD_READER_MAX
    ? jsonFieldReader(needed)
    : null;
  // The byte reader skips the text of the lines: not when their text or number is asked for.
  const flat = !paths || needed === null || !needed.some((n) => paths.has(n));
  const bytesReader = !extras && needed !== null && needed.length <= FIELD_READER_MAX
    ? (columns && flat ? valuesInto(columns, needed) : null) ??
      (paths && memberReader(needed, paths)) ?? jsonLineReader(needed, scanPathReader)
    : null;
  // Done with the reader (the source read, or stopped early): its scanner goes back to the
  // thread's pool.
  using _release = { [Symbol.dispose]: () => bytesReader?.release?.() };
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const sink = new RowSink(keep);
  const push = columns === undefined ? sink.push : intoColumns(columns, needed);
  let skipped = 0;
  let firstBad: SkipTally["first"] = { uri: "" };
  let deep = 0;
  let firstDeep = "";
  // Records of the current chunk, added to the query's stats once per chunk.
  let records = 0;
  const bad = (first: SkipTally["first"]) => {
    records++;
    if (skipped++ === 0) firstBad = first;
  };
  /** A record of an array or of objects across lines: a row, or counted as skipped. */
  const take = (json: string, uri: string, where: string, line: number) => {
    const v = parseObject(json);
    if (v === TOO_DEEP) {
      records++;
      if (deep++ === 0) firstDeep = `${where} of '${uri}'`;
    } else if (v) {
      records++;
      push(extras ? origin(pick(v), line, json.trim()) : pick(v));
    } else bad({ uri, where });
  };
  for (const file of await expectFiles(files, ctx.progress)) {
    let mode: "unknown" | "lines" | "array" | "objects" = "unknown";
    // A scan worker's share of a file starts at a line of its own (JSON lines only are cut).
    let line = lineName === undefined ? 0 : (await firstLineOf(file, ctx.signal)) - 1;
    const array = new ArraySplitter();
    const objects = new ObjectSplitter();
    for await (const { bytes, start, end } of scanByteLines(file, ctx)) {
      if (mode === "unknown") {
        const first = firstNonSpaceByte(bytes, start, end);
        if (first === -1) {
          line += countLines(bytes, start, end);
          continue;
        }
        mode = bytes[first] === 0x5b /* [ */
          ? "array"
          : bytes[first] === 0x7b /* { */ && restOfLineBlank(bytes, first + 1, end)
          ? "objects"
          : "lines";
        // The blank lines before it were not fed to the splitters.
        array.line = objects.line = line + 1;
      }
      if (mode === "objects") {
        const text = decoder.decode(bytes.subarray(start, end));
        objects.feed(
          text,
          (json, at) => take(json, file.uri, `object ${objects.objects}`, at),
          () => bad({ uri: file.uri, where: `the text after object ${objects.objects}` }),
        );
      } else if (mode === "array") {
        const text = decoder.decode(bytes.subarray(start, end));
        array.feed(
          text,
          0,
          text.length,
          (json, at) => take(json, file.uri, `element ${array.elements}`, at),
        );
        if (array.trailing && skipped === 0) bad({ uri: file.uri, where: "after" });
      } else {
        // The byte reader needs each line ended by "\n": the last line of a file may lack it.
        const checked = bytes[end - 1] === 0x0a ? end : bytes.lastIndexOf(0x0a, end - 1) + 1;
        // The scanner's reader indexes the piece's lines (SIMD, engine/simd/) once.
        if (bytesReader !== null) bytesReader.prepare(bytes, start, checked);
        let i = start;
        while (i < end) {
          line++;
          if (bytesReader !== null && i < checked) {
            const row = bytesReader.read(bytes, i);
            if (row !== undefined) {
              records++;
              if (row !== STORED) push(row);
              i = bytesReader.next;
              continue;
            }
          }
          const nl = bytes.indexOf(0x0a, i);
          const stop = nl < 0 || nl >= end ? end : nl;
          const l = decoder.decode(bytes.subarray(i, stop));
          i = stop + 1;
          if (l.length === 0) continue;
          if (readFields !== null) {
            const row = readFields(l);
            if (row !== undefined) {
              records++;
              push(extras ? origin(row, line, stripCr(l)) : row);
              continue;
            }
          }
          const v = parseObject(l);
          if (v === TOO_DEEP) {
            records++;
            if (deep++ === 0) firstDeep = `line ${line} of '${file.uri}'`;
          } else if (v) {
            records++;
            push(extras ? origin(pick(v), line, stripCr(l)) : pick(v));
          } else if (!isBlank(l, 0, l.length)) bad({ uri: file.uri, line });
        }
      }
      if (ctx.stats) ctx.stats.recordsRead += records;
      records = 0;
      const batch = sink.take();
      if (batch) yield batch;
    }
    if (mode === "array" && !array.closed) bad({ uri: file.uri, where: "unterminated" });
    if (mode === "objects" && objects.open) {
      bad({ uri: file.uri, where: `the unterminated object ${objects.objects + 1}` });
    }
  }
  const last = sink.take(true);
  if (last) yield last;
  if (ctx.stats) ctx.stats.recordsUnmatched += skipped + deep;
  if (skipped > 0) ctx.warn(skipWarning({ kind: "READ_JSON", count: skipped, first: firstBad }));
  if (deep > 0) {
    ctx.warn({
      level: "WARN",
      message: `READ_JSON skipped ${
        deep === 1 ? "1 record" : `${deep} records`
      } nested more than ${MAX_JSON_DEPTH} levels deep (the first: ${firstDeep})`,
    });
  }
}

type JsonObject = Record<string, Row[string]>;

/** What `valuesInto`'s reader answers for a record it put into the sink. */
const STORED: Row = Object.freeze({}) as Row;

/**
 * How a fill puts rows into `sink`: by the fields `needed` (a fill reads named fields only);
 * a field never spilt into a list (a string, an object seen in it) is first given a vector
 * for numbers, so that a numeric field is never a list of boxed values.
 */
function intoColumns(sink: ColumnSink, needed: readonly string[] | null): (row: Row) => void {
  if (needed === null) throw new Error("READ_JSON puts named fields only into columns");
  for (let k = 0; k < needed.length; k++) if (!sink.spilt[k]) sink.vector(k, "num");
  return (row) => sink.putRow(needed, row);
}

/**
 * A line reader of the flat fields `needed` that puts each record's values into `sink` and
 * answers STORED (no row made), or null where the path reader cannot read them from bytes.
 * Its wrapper is its own, as memberReader's and jsonLineReader's are, rather than one shared:
 * V8 keeps type feedback per function literal, and the calls each line makes stay monomorphic.
 */
function valuesInto(sink: ColumnSink, needed: readonly string[]): JsonLineReader | null {
  const values = scanPathReader(needed.map((n) => [n]));
  if (values === null) return null;
  const reader = {
    next: 0,
    prepare: (b: Uint8Array, start: number, end: number) => values.prepare(b, start, end),
    release: () => values.release?.(),
    read(bytes: Uint8Array, from: number): Row | undefined {
      const v = values.read(bytes, from);
      if (v === undefined) return undefined;
      reader.next = values.next;
      sink.putValues(v);
      return STORED;
    },
  };
  return reader;
}

/** Members below a field: a leaf (true) is read whole, an object names deeper members. */
interface MemberTree {
  [member: string]: MemberTree | true;
}

/**
 * A reader of `needed` that follows the member paths of `paths` and builds those fields as
 * tuples of the members read; null when a member name cannot be read from bytes.
 */
function memberReader(
  needed: readonly string[],
  paths: ReadonlyMap<string, readonly (readonly string[])[]>,
): JsonLineReader | null {
  const list: JsonPath[] = [];
  const slot = (path: JsonPath) => {
    list.push(path);
    return `v[${list.length - 1}]`;
  };
  const literal = (tree: MemberTree, prefix: readonly string[]): string =>
    `{ ${
      Object.keys(tree).map((k) => {
        const sub = tree[k]!;
        const path = [...prefix, k];
        return `${JSON.stringify(k)}: ${sub === true ? slot(path) : literal(sub, path)}`;
      }).join(", ")
    } }`;
  const parts: string[] = [];
  for (const name of needed) {
    const below = paths.get(name);
    // `__proto__` in an object literal would set the prototype: such a field is read whole.
    if (!below || below.some((p) => p.includes("__proto__"))) {
      parts.push(`${JSON.stringify(name)}: ${slot([name])}`);
      continue;
    }
    const tree: MemberTree = Object.create(null);
    for (const p of below) {
      let at = tree;
      for (let i = 0; i < p.length; i++) {
        const known = at[p[i]!];
        if (known === true) break; // a shorter path reads this member whole
        if (i === p.length - 1) at[p[i]!] = true;
        else at = (at[p[i]!] = known ?? Object.create(null)) as MemberTree;
      }
    }
    parts.push(`${JSON.stringify(name)}: ${literal(tree, [name])}`);
  }
  const values = scanPathReader(list);
  if (values === null) return null;
  const build = generatedFunction<(v: Value[]) => Row>(["v"], `return { ${parts.join(", ")} };`);
  const reader = {
    next: 0,
    prepare: (b: Uint8Array, start: number, end: number) => values.prepare(b, start, end),
    release: () => values.release?.(),
    read(bytes: Uint8Array, from: number): Row | undefined {
      const v = values.read(bytes, from);
      if (v === undefined) return undefined;
      reader.next = values.next;
      return build(v);
    },
  };
  return reader;
}

const TOO_DEEP = Symbol("too deep");

/**
 * The object a JSON text holds, null for malformed JSON and other values, TOO_DEEP for one
 * nested more than MAX_JSON_DEPTH levels (every later pass over values would walk it
 * recursively).
 */
function parseObject(json: string): JsonObject | null | typeof TOO_DEEP {
  if (tooDeep(json)) return TOO_DEEP;
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return null;
  }
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v as JsonObject : null;
}

/** Whether `json` opens more than MAX_JSON_DEPTH objects or arrays at once (outside strings). */
function tooDeep(json: string): boolean {
  // Each level takes two characters at least: most lines are too short to be too deep.
  if (json.length <= 2 * MAX_JSON_DEPTH) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
}

function picker(needed: readonly string[] | null): (v: JsonObject) => Row {
  if (needed === null) return (v) => v;
  const names = [...needed];
  // Own properties only: a missing `constructor` is null, not Object's.
  return (v) => {
    const row: Row = {};
    for (const name of names) row[name] = Object.hasOwn(v, name) ? v[name]! : null;
    return row;
  };
}

function stripCr(s: string): string {
  return s.endsWith("\r") ? s.slice(0, -1) : s;
}

function firstNonSpace(text: string, start: number, end: number): number {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
  }
  return -1;
}

function firstNonSpaceByte(bytes: Uint8Array, start: number, end: number): number {
  for (let i = start; i < end; i++) {
    const c = bytes[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
  }
  return -1;
}

function countLines(bytes: Uint8Array, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) if (bytes[i] === 0x0a) n++;
  return end > start && bytes[end - 1] !== 0x0a ? n + 1 : n;
}

function isBlank(text: string, start: number, end: number): boolean {
  return firstNonSpace(text, start, end) === -1;
}

/** Whether bytes[from, the next line end or `end`) are white space. */
function restOfLineBlank(bytes: Uint8Array, from: number, end: number): boolean {
  for (let i = from; i < end; i++) {
    const c = bytes[i];
    if (c === 0x0a) return true;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/**
 * Splits JSON objects written one after another across lines (white space between them) and
 * streamed in pieces into the texts of the objects, tracking nesting and strings, so that a
 * large file is read one object at a time. Text between two objects that is not white space is
 * a stray, told once.
 */
class ObjectSplitter {
  /** Objects handed out so far. */
  objects = 0;
  /** The number of the line the text fed next begins on. */
  line = 1;
  #first = 1;
  #depth = 0;
  #inString = false;
  #escaped = false;
  #inStray = false;
  #pending = "";

  /** Whether an object has begun and not ended. */
  get open(): boolean {
    return this.#depth > 0;
  }

  feed(
    text: string,
    onObject: (json: string, line: number) => void,
    onStray: () => void,
  ): void {
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x0a) this.line++;
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (c === 0x5c /* \ */) this.#escaped = true;
        else if (c === 0x22 /* " */) this.#inString = false;
        continue;
      }
      if (this.#depth === 0) {
        if (c === 0x7b /* { */) {
          this.#depth = 1;
          this.#inStray = false;
          this.#first = this.line;
          from = i;
        } else if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
        else if (!this.#inStray) {
          this.#inStray = true;
          onStray();
        }
        continue;
      }
      if (c === 0x22) this.#inString = true;
      else if (c === 0x5b /* [ */ || c === 0x7b) this.#depth++;
      else if ((c === 0x5d /* ] */ || c === 0x7d /* } */) && --this.#depth === 0) {
        const json = this.#pending + text.slice(from, i + 1);
        this.#pending = "";
        this.objects++;
        onObject(json, this.#first);
      }
    }
    if (this.#depth > 0) this.#pending += text.slice(from);
  }
}

/**
 * Splits a JSON array streamed in pieces into the texts of its elements, tracking nesting
 * and strings, so that an array larger than memory is read one element at a time.
 */
class ArraySplitter {
  /** Elements handed out so far. */
  elements = 0;
  /** Whether the outer array has ended. */
  closed = false;
  /** Whether something other than white space followed the array. */
  trailing = false;
  /** The number of the line the text fed next begins on. */
  line = 1;
  /** The line of the element being read, once its first character is seen (else 0). */
  #first = 0;
  #depth = 0;
  #inString = false;
  #escaped = false;
  #pending = "";

  feed(
    text: string,
    start: number,
    end: number,
    onElement: (json: string, line: number) => void,
  ): void {
    let from = start;
    for (let i = start; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x0a) this.line++;
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (c === 0x5c /* \ */) this.#escaped = true;
        else if (c === 0x22 /* " */) this.#inString = false;
        continue;
      }
      if (this.closed) {
        if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) this.trailing = true;
        continue;
      }
      if (
        this.#depth === 1 && this.#first === 0 && c !== 0x20 && c !== 0x0a && c !== 0x0d &&
        c !== 0x09 && c !== 0x2c /* , */ && c !== 0x5d /* ] */
      ) this.#first = this.line;
      if (c === 0x22) this.#inString = true;
      else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
        if (this.#depth++ === 0) from = i + 1;
      } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
        if (--this.#depth === 0) {
          this.#emit(text.slice(from, i), onElement);
          this.closed = true;
        }
      } else if (c === 0x2c /* , */ && this.#depth === 1) {
        this.#emit(text.slice(from, i), onElement);
        from = i + 1;
      }
    }
    if (this.#depth > 0) this.#pending += text.slice(from, end);
  }

  #emit(piece: string, onElement: (json: string, line: number) => void): void {
    const json = this.#pending + piece;
    const line = this.#first;
    this.#pending = "";
    this.#first = 0;
    if (json.trim() === "") return;
    this.elements++;
    onElement(json, line);
  }
}
