/**
 * One block of the column cache (engine/fs/column_cache.ts): the rows a reader made of the lines
 * that start in bytes [lo, hi) of one file, stored column by column, with each column's minimum
 * and maximum (its zone map) and a CRC-32 over the whole file.
 *
 *   const bytes = encodeBlock(meta, rows);   // written to a temporary file, then renamed
 *   const block = decodeBlock(bytes);        // throws CorruptBlock when the checksum fails
 *   block.meta.columns[0].min; block.rows(); // rows equal to those encoded, keys in order
 *
 * Layout: `TRWLCB1\n`, a u32 (little endian) header length, the header as JSON, padding to 8,
 * the columns' vectors (each at an offset that is a multiple of 8, so that typed arrays view
 * the file's buffer without a copy), and the CRC-32 of everything before it (u32).
 *
 * A column is one encoding of its values, chosen per block from what they are:
 * `i32` / `f64` numbers, `ts` timestamps (their milliseconds as f64), `ip4` IPv4 addresses
 * (their bits as u32), `bool`, `str` (one UTF-8
 * text and UTF-16 offsets: decoded once, each value a slice), `dict` (distinct strings and a u16
 * index per row), or `json` (the lossless value form of engine/table/sxt_values.ts, one JSON
 * array) for anything else. Where a value is null or absent from its row, a tag per row says so
 * (0 value, 1 null, 2 absent): an absent field stays absent. Rows whose keys come in different
 * orders are stored whole as `rows` (one encodeRowObject line each), so that a row decodes
 * with its keys in the order it had.
 */

import { crc32 } from "node:zlib";
import type { Row, Value } from "../values/values.ts";
import { IpAddr, Timestamp } from "../values/values.ts";
import { decodeParsedRow, decodeValue, encodeRowObject, encodeValue } from "../table/sxt_values.ts";
import { generatedFunction } from "../values/generated_code.ts";

const MAGIC = new TextEncoder().encode("TRWLCB1\n");
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The checksum or the layout of a block is wrong. */
export class CorruptBlock extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CorruptBlock";
  }
}

/** A skip tally of the reader over the block's lines (PARSE unmatched, READ_JSON not objects). */
export interface BlockTally {
  readonly kind: "PARSE" | "READ_JSON";
  readonly count: number;
  /** Where the first was; `line` counted from the block's first line (1-based). */
  readonly first: { readonly uri: string; readonly line?: number; readonly where?: string };
}

/** What a block says of itself. */
export interface BlockMeta {
  /** The lines starting in bytes [lo, hi) of the file (engine/exec/parallel/shares.ts). */
  readonly lo: number;
  readonly hi: number;
  /** The byte after the last one read (the "\n" ending the last line). */
  readonly end: number;
  /** The file's size and modification time when the block was read. */
  readonly size: number;
  readonly mtime: number;
  /** The file's device and inode (FileEntry.identity) when the block was read. */
  readonly identity?: string | undefined;
  /** The block is the whole file, read as one (not by lines): used only while it is unchanged. */
  readonly entire?: boolean;
  /** CRC-32 of the first bytes read (up to SAMPLE_BYTES) and of the last ones. */
  readonly head: number;
  readonly tail: number;
  /** Bytes read to make the block (end - first byte read). */
  readonly rawBytes: number;
  /** "\n" in the bytes read: line numbers of later blocks count on from here. */
  readonly lines: number;
  /** Records read (matched or not) and those the reader skipped (stats). */
  readonly records: number;
  readonly unmatched: number;
  readonly tally: BlockTally | null;
  readonly rowCount: number;
  readonly columns: readonly ColumnMeta[];
  /** Rows stored whole (keys in differing orders): `columns` is empty. */
  readonly whole: boolean;
}

export interface ColumnMeta {
  readonly name: string;
  readonly kind: "i32" | "f64" | "ts" | "ip4" | "bool" | "str" | "dict" | "json";
  /** Offset and length of the values' vector in the block, from its start. */
  readonly off: number;
  readonly len: number;
  /** Tags per row (0 value, 1 null, 2 absent), where some value is not there. */
  readonly tags?: { readonly off: number; readonly len: number };
  /** `str`, `dict`: the text's offset and length; `dict` also the count of its entries. */
  readonly text?: { readonly off: number; readonly len: number };
  readonly entries?: number;
  /** `dict`: where each entry of the text ends (u32, UTF-16 units, a leading 0). */
  readonly offsets?: { readonly off: number; readonly len: number };
  /** Zone map: least and greatest value (numbers; timestamps in ms), NaN left out. */
  readonly min?: number;
  readonly max?: number;
}

/** Bytes sampled at the start and end of what a block read, to find the file unchanged. */
export const SAMPLE_BYTES = 256;

type MetaIn = Omit<BlockMeta, "rowCount" | "columns" | "whole">;

class Parts {
  readonly chunks: Uint8Array[] = [];
  size = 0;
  add(bytes: Uint8Array): { off: number; len: number } {
    const pad = (8 - (this.size % 8)) % 8;
    if (pad > 0) {
      this.chunks.push(new Uint8Array(pad));
      this.size += pad;
    }
    const off = this.size;
    this.chunks.push(bytes);
    this.size += bytes.length;
    return { off, len: bytes.length };
  }
}

function bytesOf(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/**
 * The names of `rows` in first-seen order, or null when some row has them in another order. A
 * name's place never changes once seen, so a row checked against the names seen so far stays
 * right as later rows add names at the end.
 */
function columnNames(rows: readonly Row[]): string[] | null {
  const index = new Map<string, number>();
  const names: string[] = [];
  let lastShape: string[] = [];
  let checked = false;
  for (const row of rows) {
    // Most rows have the shape of the one before: compared without a list made.
    if (checked) {
      let j = 0;
      let same = true;
      for (const k in row) {
        if (lastShape[j] !== k) {
          same = false;
          break;
        }
        j++;
      }
      if (same && j === lastShape.length) continue;
    }
    const keys = Object.keys(row);
    let prev = -1;
    for (const k of keys) {
      let i = index.get(k);
      if (i === undefined) {
        i = names.length;
        index.set(k, i);
        names.push(k);
      }
      if (i <= prev) return null;
      prev = i;
    }
    lastShape = keys;
    checked = true;
  }
  return names;
}

/** Each column's values by row (undefined where a row lacks it), read by generated code. */
function columnArrays(rows: readonly Row[], names: readonly string[]): (Value | undefined)[][] {
  const reads = names.map((name, k) => `c${k}[i] = r[${JSON.stringify(name)}];`).join(" ");
  const take = generatedFunction<(rows: readonly Row[]) => (Value | undefined)[][]>(
    ["rows"],
    `const n = rows.length;
    ${names.map((_, k) => `const c${k} = new Array(n);`).join(" ")}
    for (let i = 0; i < n; i++) { const r = rows[i]; ${reads} }
    return [${names.map((_, k) => `c${k}`).join(", ")}];`,
  );
  return take(rows);
}

/** The bytes of a block of `rows` described by `meta`. */
export function encodeBlock(meta: MetaIn, rows: readonly Row[]): Uint8Array {
  const parts = new Parts();
  const names = columnNames(rows);
  const columns: ColumnMeta[] = [];
  let whole = false;
  if (names === null) {
    whole = true;
    const text = rows.map(encodeRowObject).join("\n");
    const at = parts.add(encoder.encode(text));
    columns.push({ name: "", kind: "json", ...at });
  } else {
    // A name the rows carry as an own "__proto__" would read their prototype: kept whole.
    const values = names.includes("__proto__") ? null : columnArrays(rows, names);
    if (values === null) {
      whole = true;
      columns.push({
        name: "",
        kind: "json",
        ...parts.add(encoder.encode(rows.map(encodeRowObject).join("\n"))),
      });
    } else {
      for (let k = 0; k < names.length; k++) {
        columns.push(encodeColumn(names[k]!, values[k]!, parts));
      }
    }
  }
  const header = encoder.encode(
    JSON.stringify({ ...meta, rowCount: rows.length, columns, whole } satisfies BlockMeta),
  );
  const start = MAGIC.length + 4 + header.length;
  const bodyAt = start + ((8 - (start % 8)) % 8);
  const total = bodyAt + parts.size + 4;
  const out = new Uint8Array(total);
  out.set(MAGIC, 0);
  new DataView(out.buffer).setUint32(MAGIC.length, header.length, true);
  out.set(header, MAGIC.length + 4);
  let at = bodyAt;
  for (const c of parts.chunks) {
    out.set(c, at);
    at += c.length;
  }
  new DataView(out.buffer).setUint32(total - 4, crc32(out.subarray(0, total - 4)), true);
  return out;
}

function encodeColumn(
  name: string,
  column: readonly (Value | undefined)[],
  parts: Parts,
): ColumnMeta {
  const n = column.length;
  let tags: Uint8Array | null = null;
  let kind: ColumnMeta["kind"] | null = null;
  for (let i = 0; i < n; i++) {
    const v = column[i];
    if (v === undefined || v === null) {
      tags ??= new Uint8Array(n);
      tags[i] = v === null ? 1 : 2;
      continue;
    }
    const k = typeof v === "number"
      ? (Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff && !Object.is(v, -0)
        ? "i32"
        : "f64")
      : typeof v === "string"
      ? "str"
      : typeof v === "boolean"
      ? "bool"
      : v instanceof Timestamp
      ? "ts"
      : v instanceof IpAddr && v.version === 4
      ? "ip4"
      : "json";
    if (kind === null) kind = k;
    else if (kind !== k) {
      if ((kind === "i32" && k === "f64") || (kind === "f64" && k === "i32")) kind = "f64";
      else kind = "json";
    }
  }
  kind ??= "json";
  const value = (i: number): Value | undefined =>
    tags !== null && tags[i] !== 0 ? undefined : column[i];
  const tagsAt = tags === null ? undefined : parts.add(tags);
  const withTags = tagsAt ? { tags: tagsAt } : {};
  switch (kind) {
    case "i32":
    case "f64":
    case "ts": {
      const vec = kind === "i32" ? new Int32Array(n) : new Float64Array(n);
      let min = Infinity;
      let max = -Infinity;
      for (let i = 0; i < n; i++) {
        const v = value(i);
        if (v === undefined) continue;
        const x = kind === "ts" ? (v as Timestamp).ms : v as number;
        vec[i] = x;
        if (x < min) min = x;
        if (x > max) max = x;
      }
      const zone = min <= max ? { min, max } : {};
      return { name, kind, ...parts.add(bytesOf(vec)), ...withTags, ...zone };
    }
    case "ip4": {
      const vec = new Uint32Array(n);
      for (let i = 0; i < n; i++) {
        const v = value(i);
        if (v !== undefined) vec[i] = (v as IpAddr).bits as number;
      }
      return { name, kind, ...parts.add(bytesOf(vec)), ...withTags };
    }
    case "bool": {
      const vec = new Uint8Array(n);
      for (let i = 0; i < n; i++) vec[i] = value(i) === true ? 1 : 0;
      return { name, kind, ...parts.add(vec), ...withTags };
    }
    case "str": {
      // Few distinct values: a dictionary and an index per row.
      const dict = new Map<string, number>();
      for (let i = 0; i < n && dict.size <= 0xffff; i++) {
        const v = value(i) as string | undefined;
        if (v !== undefined && !dict.has(v)) dict.set(v, dict.size);
      }
      if (dict.size <= 0xffff && dict.size * 4 <= n) {
        const index = new Uint16Array(n);
        for (let i = 0; i < n; i++) {
          const v = value(i) as string | undefined;
          if (v !== undefined) index[i] = dict.get(v)!;
        }
        const text = [...dict.keys()];
        const { offsets, joined } = joinStrings(text);
        const textAt = parts.add(encoder.encode(joined));
        const offAt = parts.add(bytesOf(offsets));
        return {
          name,
          kind: "dict",
          ...parts.add(bytesOf(index)),
          text: { off: textAt.off, len: textAt.len },
          entries: text.length,
          offsets: offAt,
          ...withTags,
        };
      }
      const texts = new Array<string>(n);
      for (let i = 0; i < n; i++) texts[i] = (value(i) as string | undefined) ?? "";
      const { offsets, joined } = joinStrings(texts);
      const textAt = parts.add(encoder.encode(joined));
      return { name, kind: "str", ...parts.add(bytesOf(offsets)), text: textAt, ...withTags };
    }
    default: {
      const values = new Array<unknown>(n);
      for (let i = 0; i < n; i++) {
        const v = value(i);
        values[i] = v === undefined ? null : encodeValue(v);
      }
      return {
        name,
        kind: "json",
        ...parts.add(encoder.encode(JSON.stringify(values))),
        ...withTags,
      };
    }
  }
}

/** One string of all of `texts` and where each ends (UTF-16 units). */
function joinStrings(texts: readonly string[]): { offsets: Uint32Array; joined: string } {
  const offsets = new Uint32Array(texts.length + 1);
  let at = 0;
  for (let i = 0; i < texts.length; i++) {
    at += texts[i]!.length;
    offsets[i + 1] = at;
  }
  return { offsets, joined: texts.join("") };
}

/** A block read back: its description, and its rows made on demand. */
export interface DecodedBlock {
  readonly meta: BlockMeta;
  rows(): Row[];
}

/** Only the header of a block's bytes (no checksum verified). */
export function blockHeader(bytes: Uint8Array): BlockMeta {
  if (bytes.length < MAGIC.length + 8) throw new CorruptBlock("too short");
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC[i]) throw new CorruptBlock("not a cache block");
  }
  const len = new DataView(bytes.buffer, bytes.byteOffset).getUint32(MAGIC.length, true);
  if (MAGIC.length + 4 + len > bytes.length - 4) throw new CorruptBlock("header past the end");
  try {
    return JSON.parse(decoder.decode(bytes.subarray(MAGIC.length + 4, MAGIC.length + 4 + len)));
  } catch {
    throw new CorruptBlock("header is not JSON");
  }
}

/** The block in `bytes` (a whole file); throws CorruptBlock when its checksum fails. */
export function decodeBlock(bytes: Uint8Array): DecodedBlock {
  if (bytes.length < MAGIC.length + 8) throw new CorruptBlock("too short");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stored = view.getUint32(bytes.length - 4, true);
  if (crc32(bytes.subarray(0, bytes.length - 4)) !== stored) {
    throw new CorruptBlock("checksum mismatch");
  }
  const meta = blockHeader(bytes);
  const start = MAGIC.length + 4 + new DataView(bytes.buffer, bytes.byteOffset).getUint32(
    MAGIC.length,
    true,
  );
  const bodyAt = start + ((8 - (start % 8)) % 8);
  // Typed arrays view the body where it is aligned (a freshly read file is), else a copy.
  const body = (bytes.byteOffset + bodyAt) % 8 === 0
    ? new Uint8Array(bytes.buffer, bytes.byteOffset + bodyAt, bytes.length - bodyAt - 4)
    : bytes.slice(bodyAt, bytes.length - 4);
  return { meta, rows: () => decodeRows(meta, body) };
}

function decodeRows(meta: BlockMeta, body: Uint8Array): Row[] {
  const n = meta.rowCount;
  const slice = (at: { off: number; len: number }) => body.subarray(at.off, at.off + at.len);
  if (meta.whole) {
    const c = meta.columns[0]!;
    const text = decoder.decode(slice(c));
    return text.length === 0 && n === 0
      ? []
      : text.split("\n").map((line) => decodeParsedRow(JSON.parse(line)));
  }
  const columns = meta.columns.map((c) => columnValues(c, n, slice));
  const names = meta.columns.map((c) => c.name);
  if (!columns.some((c) => c.absent) && !names.includes("__proto__")) {
    // Every row has every column: one object literal per row, made by code generated for
    // these names (rows of one shape, built without a property added at a time).
    const fields = names.map((name, k) => `${JSON.stringify(name)}: c${k}[i]`).join(", ");
    const make = generatedFunction<(cols: ArrayLike<Value>[], n: number) => Row[]>(
      ["cols", "n"],
      `const [${names.map((_, k) => `c${k}`).join(", ")}] = cols;
      const rows = new Array(n);
      for (let i = 0; i < n; i++) rows[i] = { ${fields} };
      return rows;`,
    );
    return make(columns.map((c) => c.values), n);
  }
  const rows = new Array<Row>(n);
  for (let i = 0; i < n; i++) rows[i] = {};
  for (let k = 0; k < columns.length; k++) {
    const { values, tags } = columns[k]!;
    const name = names[k]!;
    for (let i = 0; i < n; i++) if (tags === null || tags[i] !== 2) rows[i]![name] = values[i]!;
  }
  return rows;
}

/** A column's values by row (null where null or absent), and whether some row lacks it. */
function columnValues(
  c: ColumnMeta,
  n: number,
  slice: (at: { off: number; len: number }) => Uint8Array,
): { values: ArrayLike<Value>; tags: Uint8Array | null; absent: boolean } {
  const tags = c.tags ? slice(c.tags) : null;
  const absent = tags !== null && tags.includes(2);
  const raw = slice(c);
  const words = <T>(
    Ctor: { new (b: ArrayBuffer, o: number, l: number): T; BYTES_PER_ELEMENT: number },
  ) => new Ctor(raw.buffer as ArrayBuffer, raw.byteOffset, raw.byteLength / Ctor.BYTES_PER_ELEMENT);
  const each = (get: (i: number) => Value): Value[] => {
    const out = new Array<Value>(n);
    for (let i = 0; i < n; i++) out[i] = tags === null || tags[i] === 0 ? get(i) : null;
    return out;
  };
  let values: ArrayLike<Value>;
  switch (c.kind) {
    case "i32":
    case "f64": {
      const vec = c.kind === "i32" ? words(Int32Array) : words(Float64Array);
      values = tags === null ? vec : each((i) => vec[i]!);
      break;
    }
    case "ts": {
      const vec = words(Float64Array);
      values = each((i) => new Timestamp(vec[i]!));
      break;
    }
    case "ip4": {
      const vec = words(Uint32Array);
      values = each((i) => new IpAddr(4, vec[i]!));
      break;
    }
    case "bool":
      values = each((i) => raw[i] === 1);
      break;
    case "str": {
      const offsets = words(Uint32Array);
      const text = decoder.decode(slice(c.text!));
      values = each((i) => text.slice(offsets[i]!, offsets[i + 1]!));
      break;
    }
    case "dict": {
      const o = slice(c.offsets!);
      const offsets = new Uint32Array(o.buffer as ArrayBuffer, o.byteOffset, o.byteLength / 4);
      const text = decoder.decode(slice(c.text!));
      const entries = new Array<string>(c.entries!);
      for (let e = 0; e < entries.length; e++) {
        entries[e] = text.slice(offsets[e]!, offsets[e + 1]!);
      }
      const index = new Uint16Array(raw.buffer as ArrayBuffer, raw.byteOffset, raw.byteLength / 2);
      values = each((i) => entries[index[i]!]!);
      break;
    }
    default: {
      const parsed = JSON.parse(decoder.decode(raw)) as unknown[];
      values = each((i) => decodeValue(parsed[i]));
    }
  }
  return { values, tags, absent };
}
