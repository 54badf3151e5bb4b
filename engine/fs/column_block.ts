/**
 * One block of the column cache (engine/fs/column_cache.ts): the rows a reader made of the lines
 * that start in bytes [lo, hi) of one file, stored column by column, with each column's minimum
 * and maximum (its zone map) and a CRC-32 over the whole file.
 *
 *   const bytes = encodeBlock(meta, rows);   // written to a temporary file, then renamed
 *   const block = decodeBlock(bytes);        // throws CorruptBlock when the checksum fails
 *   block.meta.columns[0].min; block.rows(); // rows equal to those encoded, keys in order
 *
 * Layout: `TRWLCB3\n`, a u32 (little endian) header length, the CRC-32 of the header (u32), the
 * header as JSON, padding to 8, the columns' vectors (each at an offset that is a multiple of 8,
 * so that typed arrays view the file's buffer without a copy), and the CRC-32 of everything
 * before it (u32). The header's own checksum lets a reader trust its statistics (a zone map)
 * having read only the header (`headerSpan`, `blockHeader`): a block skipped by them is never
 * read further.
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
import { IpAddr, isTuple, Timestamp } from "../values/values.ts";
import { decodeParsedRow, decodeValue, encodeRowObject, encodeValue } from "../table/sxt_values.ts";
import { generatedFunction } from "../values/generated_code.ts";
import { bytesText } from "../values/short_strings.ts";
import type { ColumnVectors } from "../render/render_bytes.ts";

const MAGIC = new TextEncoder().encode("TRWLCB3\n");
/** Magic, header length, header CRC-32: what comes before the header. */
export const BLOCK_PREFIX_BYTES = 16;
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
  /**
   * "\n" in the bytes read, or -1: not counted (a search per line; cached_scan.ts counts the
   * lines before a block only when a skip tally must name its line).
   */
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
  readonly kind: "i32" | "f64" | "ts" | "ip4" | "bool" | "str" | "dict" | "json" | "tuple";
  /** `tuple`: one column per member (every tuple of the column has these, in this order). */
  readonly members?: readonly ColumnMeta[];
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

/**
 * The version of what blocks hold, part of an entry's key (ColumnCache.key): 2 added `tuple`
 * columns and left lines uncounted (-1); 3 the header's own CRC-32.
 */
export const BLOCK_FORMAT = 3;

/** Bytes sampled at the start and end of what a block read, to find the file unchanged. */
export const SAMPLE_BYTES = 256;

type MetaIn = Omit<BlockMeta, "rowCount" | "columns" | "whole">;

/** The description of a block read into columns that is not cached (its bytes never written). */
export const UNCACHED: MetaIn = {
  lo: 0,
  hi: 0,
  end: 0,
  size: 0,
  mtime: 0,
  head: 0,
  tail: 0,
  rawBytes: 0,
  lines: -1,
  records: 0,
  unmatched: 0,
  tally: null,
};

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
  return assemble(meta, rows.length, columns, whole, parts);
}

/**
 * The bytes of a block of columns as a reader gave them (engine/pattern/byte_scanner.ts's
 * ColumnSink: `cols[k]` the values of `names[k]` by row, undefined where absent; an IPv4 column's
 * addresses as their bits where `ipv4[k]`; or, where `vecs[k]` is there, the first `n` values
 * of that typed vector (timestamps' milliseconds where `ts[k]`), `tags[k]` saying which are
 * null (1) or absent (2)): the block
 * encodeBlock would make of the rows, made without them. The vectors are read in place (zeroed
 * where tagged), so the sink may be reset and filled again once this returns.
 */
export function encodeColumns(
  meta: MetaIn,
  names: readonly string[],
  sink: {
    readonly cols: readonly unknown[][];
    readonly ipv4: readonly boolean[];
    readonly ts?: readonly boolean[];
    readonly vecs?: readonly (Float64Array | Uint32Array | null)[];
    readonly tags?: readonly (Uint8Array | null)[];
    readonly n?: number;
    /** Fields of texts as spans of bytes (ColumnSink.spans, `arenas`, `arenaAt`, `ascii`). */
    readonly spans?: readonly (Int32Array | null)[];
    readonly arenas?: readonly Uint8Array[];
    readonly arenaAt?: readonly number[];
    readonly ascii?: readonly boolean[];
  },
): Uint8Array {
  if (names.includes("__proto__")) throw new Error("a column __proto__ is kept whole");
  const parts = new Parts();
  const n = sink.n ?? sink.cols[0]?.length ?? 0;
  const columns: ColumnMeta[] = [];
  for (let k = 0; k < names.length; k++) {
    const vec = sink.vecs?.[k];
    if (vec !== null && vec !== undefined) {
      columns.push(
        vectorColumn(
          names[k]!,
          vec.subarray(0, n),
          sink.tags![k]!.subarray(0, n),
          sink.ts?.[k] === true,
          parts,
        ),
      );
      continue;
    }
    const spans = sink.spans?.[k];
    if (spans !== null && spans !== undefined) {
      const bytes = sink.arenas![k]!.subarray(0, sink.arenaAt![k]);
      columns.push(
        sink.ascii![k]
          ? spanColumn(names[k]!, bytes, spans, n, parts)
          : encodeColumn(names[k]!, spanTexts(bytes, spans, n), parts),
      );
      continue;
    }
    const col = sink.cols[k]!;
    if (col.length !== n) throw new Error("columns of different lengths");
    columns.push(
      sink.ipv4[k]
        ? ipv4Column(names[k]!, col, parts)
        : encodeColumn(names[k]!, col as (Value | undefined)[], parts),
    );
  }
  return assemble(meta, n, columns, false, parts);
}

/**
 * A column from a typed vector (IPv4 bits, timestamps' milliseconds where `ts`, or numbers) and
 * its tags: `ip4`, `ts`, or `i32` where every number is a 32-bit integer (not -0), else `f64`, as
 * encodeColumn would choose for the values; with no value at all, as encodeColumn makes it of
 * the nulls. The block takes `vec` and `tags` as they are, without a copy (a sink's vectors,
 * taken before the sink is used again): where a value is tagged, `vec` is set to zero, as
 * encodeColumn leaves it.
 */
function vectorColumn(
  name: string,
  vec: Float64Array | Uint32Array,
  tags: Uint8Array,
  ts: boolean,
  parts: Parts,
): ColumnMeta {
  const n = vec.length;
  // Each kind of vector in a loop of its own (V8 then compiles each for one array type).
  const seen = vec instanceof Uint32Array ? zeroTagged(vec, tags) : numberZone(vec, tags);
  if (seen.tagged === n) {
    return encodeColumn(
      name,
      Array.from(tags, (t) => (t === 1 ? null : undefined)),
      parts,
    );
  }
  const withTags = seen.tagged === 0 ? {} : { tags: parts.add(tags) };
  if (vec instanceof Uint32Array) {
    return { name, kind: "ip4", ...parts.add(bytesOf(vec)), ...withTags };
  }
  const zone = seen.min <= seen.max ? { min: seen.min, max: seen.max } : {};
  if (ts) return { name, kind: "ts", ...parts.add(bytesOf(vec)), ...withTags, ...zone };
  if (!seen.ints) return { name, kind: "f64", ...parts.add(bytesOf(vec)), ...withTags, ...zone };
  const out = new Int32Array(n);
  out.set(vec);
  return { name, kind: "i32", ...parts.add(bytesOf(out)), ...withTags, ...zone };
}

interface VectorSeen {
  /** Values tagged null or absent (set to zero in the vector). */
  tagged: number;
  min: number;
  max: number;
  /** Every value a 32-bit integer, not -0. */
  ints: boolean;
}

/** `vec` set to zero where `tags` says a value is not there; the count of those. */
function zeroTagged(vec: Uint32Array, tags: Uint8Array): VectorSeen {
  let tagged = 0;
  for (let i = 0; i < vec.length; i++) {
    if (tags[i] !== 0) {
      tagged++;
      vec[i] = 0;
    }
  }
  return { tagged, min: Infinity, max: -Infinity, ints: false };
}

/** As zeroTagged, in the same pass the zone map and whether every number is a 32-bit integer. */
function numberZone(vec: Float64Array, tags: Uint8Array): VectorSeen {
  let tagged = 0;
  let min = Infinity;
  let max = -Infinity;
  let ints = true;
  for (let i = 0; i < vec.length; i++) {
    if (tags[i] !== 0) {
      tagged++;
      vec[i] = 0;
      continue;
    }
    const x = vec[i]!;
    if (x < min) min = x;
    if (x > max) max = x;
    if (ints && ((x | 0) !== x || (x === 0 && 1 / x < 0))) ints = false;
  }
  return { tagged, min, max, ints };
}

/** A column of IPv4 bits (and nulls, absent values); with any other value, as encodeColumn. */
function ipv4Column(name: string, col: readonly unknown[], parts: Parts): ColumnMeta {
  const n = col.length;
  const vec = new Uint32Array(n);
  let tags: Uint8Array | null = null;
  let some = false;
  for (let i = 0; i < n; i++) {
    const v = col[i];
    if (typeof v === "number") {
      vec[i] = v;
      some = true;
    } else if (v === null || v === undefined) {
      tags ??= new Uint8Array(n);
      tags[i] = v === null ? 1 : 2;
    } else {
      // Another value (an IPv6 address): every value as a Value, encoded as from rows.
      const values = col.map((x) => typeof x === "number" ? new IpAddr(4, x) : x);
      return encodeColumn(name, values as (Value | undefined)[], parts);
    }
  }
  if (!some) return encodeColumn(name, col as (Value | undefined)[], parts);
  const tagsAt = tags === null ? undefined : parts.add(tags);
  return { name, kind: "ip4", ...parts.add(bytesOf(vec)), ...(tagsAt ? { tags: tagsAt } : {}) };
}

/** The block's bytes: magic, header, the parts, the checksum. */
function assemble(
  meta: MetaIn,
  rowCount: number,
  columns: ColumnMeta[],
  whole: boolean,
  parts: Parts,
): Uint8Array {
  const header = encoder.encode(
    JSON.stringify({ ...meta, rowCount, columns, whole } satisfies BlockMeta),
  );
  const start = BLOCK_PREFIX_BYTES + header.length;
  const bodyAt = start + ((8 - (start % 8)) % 8);
  const total = bodyAt + parts.size + 4;
  const out = new Uint8Array(total);
  out.set(MAGIC, 0);
  const view = new DataView(out.buffer);
  view.setUint32(MAGIC.length, header.length, true);
  view.setUint32(MAGIC.length + 4, crc32(header), true);
  out.set(header, BLOCK_PREFIX_BYTES);
  let at = bodyAt;
  for (const c of parts.chunks) {
    out.set(c, at);
    at += c.length;
  }
  new DataView(out.buffer).setUint32(total - 4, crc32(out.subarray(0, total - 4)), true);
  return out;
}

/** The values of `n` records' spans of `bytes` (start -1: null, -2: absent) as texts. */
function spanTexts(bytes: Uint8Array, spans: Int32Array, n: number): (string | null | undefined)[] {
  const out = new Array<string | null | undefined>(n);
  for (let i = 0; i < n; i++) {
    const s = spans[2 * i]!;
    out[i] = s === -1 ? null : s === -2 ? undefined : bytesText(bytes, s, spans[2 * i + 1]!);
  }
  return out;
}

/**
 * The column encodeColumn makes of `n` ASCII texts given as spans of `bytes` (a sink's arena,
 * the texts in record order; start -1: null, -2: absent), made from the bytes as they are, no
 * string made: the same bytes, a dictionary while there are few distinct texts (entries by first
 * sight, through a table of their bytes' hashes), else the texts and their offsets.
 */
function spanColumn(
  name: string,
  bytes: Uint8Array,
  spans: Int32Array,
  n: number,
  parts: Parts,
): ColumnMeta {
  let tags: Uint8Array | null = null;
  let present = 0;
  let length = 0;
  for (let i = 0; i < n; i++) {
    const s = spans[2 * i]!;
    if (s >= 0) {
      present++;
      length += spans[2 * i + 1]! - s;
      continue;
    }
    tags ??= new Uint8Array(n);
    tags[i] = s === -1 ? 1 : 2;
  }
  if (present === 0) {
    return encodeColumn(name, spanTexts(bytes, spans, n), parts);
  }
  const withTags = tags === null ? {} : { tags: parts.add(tags) };
  const most = Math.min(0xffff, n >> 2);
  const index = new Uint16Array(n);
  const size = 1 << Math.max(4, 33 - Math.clz32(most));
  const slots = new Int32Array(size).fill(-1);
  const starts: number[] = [];
  const stops: number[] = [];
  let few = true;
  for (let i = 0; i < n && few; i++) {
    const s = spans[2 * i]!;
    if (s < 0) continue;
    const e = spans[2 * i + 1]!;
    let h = e - s;
    for (let j = s; j < e; j++) h = (Math.imul(h, 31) + bytes[j]!) | 0;
    for (let slot = (h ^ (h >>> 15)) & (size - 1);; slot = (slot + 1) & (size - 1)) {
      const entry = slots[slot]!;
      if (entry < 0) {
        if (starts.length >= most) few = false;
        else {
          slots[slot] = index[i] = starts.length;
          starts.push(s);
          stops.push(e);
        }
        break;
      }
      if (sameBytes(bytes, starts[entry]!, stops[entry]!, s, e)) {
        index[i] = entry;
        break;
      }
    }
  }
  if (few) {
    const offsets = new Uint32Array(starts.length + 1);
    for (let k = 0; k < starts.length; k++) offsets[k + 1] = offsets[k]! + stops[k]! - starts[k]!;
    const text = new Uint8Array(offsets[starts.length]!);
    for (let k = 0; k < starts.length; k++) {
      text.set(bytes.subarray(starts[k], stops[k]), offsets[k]);
    }
    return dictColumn(name, text, offsets, index, withTags, parts);
  }
  const offsets = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) {
    const s = spans[2 * i]!;
    offsets[i + 1] = offsets[i]! + (s < 0 ? 0 : spans[2 * i + 1]! - s);
  }
  // The arena holds the texts one after the other, in order: it is the column's text.
  if (length !== bytes.length) throw new Error("a sink's arena holds its texts and nothing else");
  const text = bytes;
  const textAt = parts.add(text);
  return { name, kind: "str", ...parts.add(bytesOf(offsets)), text: textAt, ...withTags };
}

/**
 * A dictionary column: its entries' UTF-8 `text`, their `offsets` in it (as the entries' strings
 * count them), an entry per row (`index`); the parts in the order both encoders add them.
 */
function dictColumn(
  name: string,
  text: Uint8Array,
  offsets: Uint32Array,
  index: Uint16Array,
  withTags: { tags?: { off: number; len: number } },
  parts: Parts,
): ColumnMeta {
  const textAt = parts.add(text);
  const offAt = parts.add(bytesOf(offsets));
  return {
    name,
    kind: "dict",
    ...parts.add(bytesOf(index)),
    text: { off: textAt.off, len: textAt.len },
    entries: offsets.length - 1,
    offsets: offAt,
    ...withTags,
  };
}

/** Whether `b[s1, e1)` and `b[s2, e2)` hold the same bytes. */
function sameBytes(b: Uint8Array, s1: number, e1: number, s2: number, e2: number): boolean {
  if (e1 - s1 !== e2 - s2) return false;
  for (let j = 0; j < e1 - s1; j++) if (b[s1 + j] !== b[s2 + j]) return false;
  return true;
}

function encodeColumn(
  name: string,
  column: readonly (Value | undefined)[],
  parts: Parts,
): ColumnMeta {
  const n = column.length;
  let tags: Uint8Array | null = null;
  let kind: ColumnMeta["kind"] | null = null;
  // One pass tells the kind; a value of the kind found so far costs one test.
  for (let i = 0; i < n; i++) {
    const v = column[i];
    if (v === undefined || v === null) {
      tags ??= new Uint8Array(n);
      tags[i] = v === null ? 1 : 2;
      continue;
    }
    switch (kind) {
      case "i32":
        if (typeof v === "number" && (v | 0) === v && (v !== 0 || 1 / v > 0)) continue;
        break;
      case "str":
        if (typeof v === "string") continue;
        break;
      case "ts":
        if (v instanceof Timestamp) continue;
        break;
      case "ip4":
        if (v instanceof IpAddr && v.version === 4) continue;
        break;
      case "f64":
        if (typeof v === "number") continue;
        break;
      case "bool":
        if (typeof v === "boolean") continue;
        break;
      case "json":
        continue;
    }
    const k = kindOf(v);
    if (kind === null) kind = k;
    else if (kind !== k) {
      kind = (kind === "i32" && k === "f64") || (kind === "f64" && k === "i32") ? "f64" : "json";
    }
  }
  kind ??= "json";
  // Tuples of one shape (READ_JSON's nested members): a column per member.
  const shape = kind === "json" ? tupleShape(column) : null;
  const tagsAt = tags === null ? undefined : parts.add(tags);
  const withTags = tagsAt ? { tags: tagsAt } : {};
  if (shape !== null) {
    const members = shape.map((m) => {
      const values = new Array<Value | undefined>(n);
      for (let i = 0; i < n; i++) {
        const t = column[i] as Row | null | undefined;
        values[i] = t === null || t === undefined ? undefined : t[m];
      }
      return encodeColumn(m, values, parts);
    });
    return { name, kind: "tuple", off: 0, len: 0, members, ...withTags };
  }
  switch (kind) {
    case "i32":
    case "f64": {
      const vec = kind === "i32" ? new Int32Array(n) : new Float64Array(n);
      let min = Infinity;
      let max = -Infinity;
      for (let i = 0; i < n; i++) {
        const x = column[i];
        if (typeof x !== "number") continue; // null or absent
        vec[i] = x;
        if (x < min) min = x;
        if (x > max) max = x;
      }
      const zone = min <= max ? { min, max } : {};
      return { name, kind, ...parts.add(bytesOf(vec)), ...withTags, ...zone };
    }
    case "ts": {
      const vec = new Float64Array(n);
      let min = Infinity;
      let max = -Infinity;
      for (let i = 0; i < n; i++) {
        const v = column[i];
        if (v === null || v === undefined) continue;
        const x = (v as Timestamp).ms;
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
        const v = column[i];
        if (v !== null && v !== undefined) vec[i] = (v as IpAddr).bits as number;
      }
      return { name, kind, ...parts.add(bytesOf(vec)), ...withTags };
    }
    case "bool": {
      const vec = new Uint8Array(n);
      for (let i = 0; i < n; i++) vec[i] = column[i] === true ? 1 : 0;
      return { name, kind, ...parts.add(vec), ...withTags };
    }
    case "str": {
      // Few distinct values: a dictionary and an index per row (given up at the first entry
      // beyond a quarter of the rows, or beyond what a u16 holds).
      const most = Math.min(0xffff, n >> 2);
      const dict = new Map<string, number>();
      let index: Uint16Array | null = new Uint16Array(n);
      for (let i = 0; i < n; i++) {
        const v = column[i];
        if (typeof v !== "string") continue;
        let e = dict.get(v);
        if (e === undefined) {
          if (dict.size >= most) {
            index = null;
            break;
          }
          e = dict.size;
          dict.set(v, e);
        }
        index[i] = e;
      }
      if (index !== null) {
        const { offsets, joined } = joinStrings([...dict.keys()]);
        return dictColumn(name, encoder.encode(joined), offsets, index, withTags, parts);
      }
      const texts = new Array<string>(n);
      for (let i = 0; i < n; i++) {
        const v = column[i];
        texts[i] = typeof v === "string" ? v : "";
      }
      const { offsets, joined } = joinStrings(texts);
      const textAt = parts.add(encoder.encode(joined));
      return { name, kind: "str", ...parts.add(bytesOf(offsets)), text: textAt, ...withTags };
    }
    default: {
      const values = new Array<unknown>(n);
      for (let i = 0; i < n; i++) {
        const v = column[i];
        values[i] = v === undefined || v === null ? null : encodeValue(v);
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

/**
 * The member names of a column's values when every one that is there is a tuple with those
 * members in that order (at most 64, none `__proto__`), else null.
 */
function tupleShape(column: readonly (Value | undefined)[]): string[] | null {
  let names: string[] | null = null;
  for (let i = 0; i < column.length; i++) {
    const v = column[i];
    if (v === null || v === undefined) continue;
    if (!isTuple(v)) return null;
    if (names === null) {
      names = Object.keys(v);
      if (names.length === 0 || names.length > 64 || names.includes("__proto__")) return null;
      continue;
    }
    let j = 0;
    for (const k in v) {
      if (names[j] !== k) return null;
      j++;
    }
    if (j !== names.length) return null;
  }
  return names;
}

/** The kind of column a value alone would make. */
function kindOf(v: Value): ColumnMeta["kind"] {
  if (typeof v === "number") {
    return (v | 0) === v && (v !== 0 || 1 / v > 0) ? "i32" : "f64";
  }
  if (typeof v === "string") return "str";
  if (typeof v === "boolean") return "bool";
  if (v instanceof Timestamp) return "ts";
  if (v instanceof IpAddr && v.version === 4) return "ip4";
  return "json";
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
  /** Every row, as encoded. */
  rows(): Row[];
  /**
   * The rows `scan.keep` keeps, made only for those; with `scan.fold`, the rows it can fold
   * without a row are folded, and the others handed to its `add`, in order (none returned).
   */
  scan(scan: BlockScan): Row[];
  /**
   * The columns of `names` as vectors, for a writer of the rows' bytes
   * (engine/render/render_bytes.ts's compileColumnBytesWriter); null where one is given only as
   * rows (a tuple, rows stored whole).
   */
  vectors(names: readonly string[]): ColumnVectors[] | null;
  /**
   * The indexes of the rows `scan` keeps ("all": every row), without making them; null where
   * its filter needs whole rows (`scan.fold` is not used).
   */
  picks(scan: BlockScan): Int32Array | "all" | null;
}

/**
 * What a reader of a block asks of its rows: a filter (`keep`, which reads only the fields
 * `reads`: it is given a row of just those), and a grouping to fold rows into
 * (DirectGroups of engine/plan/context.ts, one key, counts and sums).
 */
export interface BlockScan {
  readonly keep?: ((row: Row) => boolean) | undefined;
  readonly reads?: ReadonlySet<string> | undefined;
  /** The rows already chosen (1: taken), as by `keep` over the rows the block was made of. */
  readonly select?: Uint8Array | undefined;
  /**
   * Comparisons of `keep`'s (engine/exec/zone_maps.ts's columnTest) tested on the columns
   * first; `exact`: they are all of it, and `keep` is not called.
   */
  readonly test?: { readonly test: BlockTest; readonly exact: boolean } | null | undefined;
  readonly fold?: BlockFold | undefined;
}

/** Comparisons of a field with a number (`num`) or a timestamp's milliseconds (`ts`). */
export type BlockTest =
  | { readonly and: readonly [BlockTest, BlockTest] }
  | { readonly or: readonly [BlockTest, BlockTest] }
  | {
    readonly field: string;
    readonly op: "<" | "<=" | ">" | ">=" | "=";
    readonly value: number;
    readonly kind: "num" | "ts";
  };

/**
 * The code of `t` over row `i` of `cols` (its constants pushed to `consts`, read as K[j]), or
 * null where a field's column is not of the kind compared (mixed values): `keep` then decides.
 * A field no row has compares with null: not true.
 */
function testCode(t: BlockTest, cols: readonly ColumnView[], consts: number[]): string | null {
  if ("and" in t || "or" in t) {
    const [a, b] = "and" in t ? t.and : t.or;
    const l = testCode(a, cols, consts);
    const r = testCode(b, cols, consts);
    return l === null || r === null ? null : `(${l} ${"and" in t ? "&&" : "||"} ${r})`;
  }
  const c = cols.find((x) => x.name === t.field);
  if (c === undefined) return "false";
  if (c.kind !== (t.kind === "num" ? "i32" : "ts")) return null;
  consts.push(t.value);
  const cmp = `v${c.id}[i] ${t.op === "=" ? "===" : t.op} K[${consts.length - 1}]`;
  return c.tags === null ? `(${cmp})` : `(t${c.id}[i] === 0 && ${cmp})`;
}

/** DirectGroups (engine/plan/context.ts), as a block scan folds into it. */
export interface BlockFold {
  readonly key: string;
  readonly folds: readonly { readonly kind: "count" | "sum"; readonly field: string | null }[];
  add(row: Row): void;
  ipv4(): { readonly slots: Uint32Array; readonly shift: number };
  smallInts(): Int32Array | null;
  values(i: number): Float64Array;
  flags(i: number): Uint8Array;
}

/**
 * The bytes a block's file holds before its body, from its first BLOCK_PREFIX_BYTES (the
 * magic and the header's length): what `blockHeader` needs. Throws CorruptBlock when they are
 * not a block's.
 */
export function headerSpan(prefix: Uint8Array): number {
  if (prefix.length < BLOCK_PREFIX_BYTES) throw new CorruptBlock("too short");
  for (let i = 0; i < MAGIC.length; i++) {
    if (prefix[i] !== MAGIC[i]) throw new CorruptBlock("not a cache block");
  }
  const len = new DataView(prefix.buffer, prefix.byteOffset).getUint32(MAGIC.length, true);
  return BLOCK_PREFIX_BYTES + len;
}

/**
 * The header of a block from its file's first bytes (at least `headerSpan` of them; the body
 * need not follow): checked by its own CRC-32, so that its statistics can be trusted without
 * the rest of the file. Throws CorruptBlock when they are not a block's header.
 */
export function blockHeader(bytes: Uint8Array): BlockMeta {
  const span = headerSpan(bytes);
  if (span > bytes.length) throw new CorruptBlock("header past the end");
  const header = bytes.subarray(BLOCK_PREFIX_BYTES, span);
  const stored = new DataView(bytes.buffer, bytes.byteOffset).getUint32(MAGIC.length + 4, true);
  if (crc32(header) !== stored) throw new CorruptBlock("header checksum mismatch");
  try {
    return JSON.parse(decoder.decode(header));
  } catch {
    throw new CorruptBlock("header is not JSON");
  }
}

/**
 * The block in `bytes` (a whole file); throws CorruptBlock when its checksum fails (checked
 * unless `verify` is false).
 */
export function decodeBlock(bytes: Uint8Array, verify = true): DecodedBlock {
  if (bytes.length < BLOCK_PREFIX_BYTES + 4) throw new CorruptBlock("too short");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stored = view.getUint32(bytes.length - 4, true);
  // `verify` false: bytes encodeBlock just gave, never stored.
  if (verify && crc32(bytes.subarray(0, bytes.length - 4)) !== stored) {
    throw new CorruptBlock("checksum mismatch");
  }
  const meta = blockHeader(bytes);
  const start = headerSpan(bytes);
  if (start > bytes.length - 4) throw new CorruptBlock("header past the end");
  const bodyAt = start + ((8 - (start % 8)) % 8);
  // Typed arrays view the body where it is aligned (a freshly read file is), else a copy.
  const body = (bytes.byteOffset + bodyAt) % 8 === 0
    ? new Uint8Array(bytes.buffer, bytes.byteOffset + bodyAt, bytes.length - bodyAt - 4)
    : bytes.slice(bodyAt, bytes.length - 4);
  // Its columns viewed once (a string column's text decoded once) for all that reads them.
  let viewed: ColumnView[] | undefined;
  const cols = () => viewed ??= views(meta, body);
  return {
    meta,
    rows: () => scanRows(meta, body, cols, {}),
    scan: (scan) => scanRows(meta, body, cols, scan),
    vectors: (names) => blockVectors(meta, cols, names),
    picks: (scan) => pickRows(meta, cols, scan),
  };
}

/**
 * The columns `names` of a block as vectors (a name no row has: all absent), or null where one
 * is of a kind given only as rows (a tuple), or the block's rows are stored whole.
 */
function blockVectors(
  meta: BlockMeta,
  viewed: () => ColumnView[],
  names: readonly string[],
): ColumnVectors[] | null {
  if (meta.whole) return null;
  const cols = viewed();
  const out: ColumnVectors[] = [];
  for (const name of names) {
    const c = cols.find((x) => x.name === name);
    if (c === undefined) {
      out.push({ kind: "values", list: new Array<undefined>(meta.rowCount) });
      continue;
    }
    switch (c.kind) {
      case "i32":
      case "f64":
        out.push({ kind: "num", vec: c.vec!, tags: c.tags });
        break;
      case "ts":
      case "ip4":
      case "bool":
        out.push({ kind: c.kind, vec: c.vec!, tags: c.tags });
        break;
      case "str":
        out.push({ kind: "str", text: c.text, offsets: c.offsets!, tags: c.tags });
        break;
      case "dict":
        out.push({ kind: "dict", list: c.list as string[], vec: c.vec!, tags: c.tags });
        break;
      case "tuple":
        return null;
      default: {
        const t = c.tags;
        const list = c.list!.map((x, i) => t === null || t[i] === 0 ? decodeValue(x) : null);
        out.push({ kind: "values", list });
      }
    }
  }
  return out;
}

/**
 * The indexes of the rows `scan` keeps (its `select`, its comparisons on the columns, its
 * filter given a row of the fields it reads), made without the rows; "all" when it keeps
 * every row; null where the filter needs whole rows (a field it reads is absent from some).
 */
function pickRows(
  meta: BlockMeta,
  viewed: () => ColumnView[],
  scan: BlockScan,
): Int32Array | "all" | null {
  if (meta.whole) return null;
  if (scan.select === undefined && !scan.test && !scan.keep) return "all";
  const picked = scanCode(meta, viewed(), scan, true);
  return picked === null ? null : Int32Array.from(picked as number[]);
}

/** A column's vectors, viewed over the block's body (strings decoded once). */
interface ColumnView {
  readonly name: string;
  readonly kind: ColumnMeta["kind"];
  readonly tags: Uint8Array | null;
  /** Some row lacks the field (a tag 2). */
  readonly absent: boolean;
  /** i32, f64, ts, ip4, bool: the values; dict: the entry per row. */
  readonly vec: ArrayLike<number> | null;
  /** str: the text, and where each value ends in it (UTF-16 units, a leading 0). */
  readonly text: string;
  readonly offsets: Uint32Array | null;
  /** dict: the distinct strings; json: the values as parsed. */
  readonly list: readonly unknown[] | null;
  /** tuple: its members' columns. */
  readonly members: readonly ColumnView[] | null;
  /** The names of its variables in generated code (`v<id>`...): a path of indexes. */
  readonly id: string;
}

function views(meta: BlockMeta, body: Uint8Array): ColumnView[] {
  return columnViews(meta.columns, body, "");
}

function columnViews(
  columns: readonly ColumnMeta[],
  body: Uint8Array,
  prefix: string,
): ColumnView[] {
  const slice = (at: { off: number; len: number }) => body.subarray(at.off, at.off + at.len);
  return columns.map((c, k) => {
    const id = `${prefix}${k}`;
    const tags = c.tags ? slice(c.tags) : null;
    const raw = slice(c);
    const words = <T>(
      Ctor: { new (b: ArrayBuffer, o: number, l: number): T; BYTES_PER_ELEMENT: number },
      at: Uint8Array = raw,
    ) => new Ctor(at.buffer as ArrayBuffer, at.byteOffset, at.byteLength / Ctor.BYTES_PER_ELEMENT);
    let vec: ArrayLike<number> | null = null;
    let text = "";
    let offsets: Uint32Array | null = null;
    let list: unknown[] | null = null;
    switch (c.kind) {
      case "i32":
        vec = words(Int32Array);
        break;
      case "f64":
      case "ts":
        vec = words(Float64Array);
        break;
      case "ip4":
        vec = words(Uint32Array);
        break;
      case "bool":
        vec = raw;
        break;
      case "str":
        offsets = words(Uint32Array);
        text = decoder.decode(slice(c.text!));
        break;
      case "tuple":
        break;
      case "dict": {
        const o = words(Uint32Array, slice(c.offsets!));
        const all = decoder.decode(slice(c.text!));
        list = new Array<string>(c.entries!);
        for (let e = 0; e < list.length; e++) list[e] = all.slice(o[e]!, o[e + 1]!);
        vec = words(Uint16Array);
        break;
      }
      default:
        list = JSON.parse(decoder.decode(raw)) as unknown[];
    }
    return {
      name: c.name,
      kind: c.kind,
      tags,
      absent: tags !== null && tags.includes(2),
      vec,
      text,
      offsets,
      list,
      members: c.kind === "tuple" ? columnViews(c.members ?? [], body, `${id}_`) : null,
      id,
    };
  });
}

/** Every column and member column, depth first (each has variables in generated code). */
function flatViews(cols: readonly ColumnView[]): ColumnView[] {
  return cols.flatMap((c) => [c, ...flatViews(c.members ?? [])]);
}

/** The expression of column `k`'s value in row `i` (null where its tag says so). */
function valueCode(c: ColumnView): string {
  const k = c.id;
  let e: string;
  switch (c.kind) {
    case "i32":
    case "f64":
      e = `v${k}[i]`;
      break;
    case "ts":
      e = `new Timestamp(v${k}[i])`;
      break;
    case "ip4":
      e = `new IpAddr(4, v${k}[i])`;
      break;
    case "bool":
      e = `v${k}[i] === 1`;
      break;
    case "str":
      e = `x${k}.slice(o${k}[i], o${k}[i + 1])`;
      break;
    case "dict":
      e = `l${k}[v${k}[i]]`;
      break;
    case "tuple":
      // Every tuple there has every member (a member's tag 2 only where the tuple is not).
      e = `{ ${
        (c.members ?? []).map((m) => `${JSON.stringify(m.name)}: ${valueCode(m)}`).join(", ")
      } }`;
      break;
    default:
      e = `decodeValue(l${k}[i])`;
  }
  return c.tags === null ? e : `(t${k}[i] === 0 ? ${e} : null)`;
}

/** Code making the row of the columns `ks` into `name` (absent fields left out). */
function rowCode(cols: readonly ColumnView[], ks: readonly number[], name: string): string {
  if (!ks.some((k) => cols[k]!.absent)) {
    const fields = ks.map((k) => `${JSON.stringify(cols[k]!.name)}: ${valueCode(cols[k]!)}`);
    return `const ${name} = { ${fields.join(", ")} };`;
  }
  const sets = ks.map((k) => {
    const set = `${name}[${JSON.stringify(cols[k]!.name)}] = ${valueCode(cols[k]!)};`;
    return cols[k]!.absent ? `if (t${k}[i] !== 2) ${set}` : set;
  });
  return `const ${name} = {};\n${sets.join("\n")}`;
}

/**
 * Code folding row `i` into the grouping (as byte_scanner.ts's directCode does for a line),
 * and going on to the next row, when its group exists and its values are plain numbers; ""
 * when the block's columns cannot be folded so (the key not an IPv4 address or an integer,
 * a summed field not integers).
 */
function foldCode(cols: readonly ColumnView[], fold: BlockFold): string {
  const at = new Map(cols.map((c, k) => [c.name, k]));
  const key = at.get(fold.key);
  if (key === undefined) return "";
  const kc = cols[key]!;
  const tests: string[] = kc.tags === null ? [] : [`t${key}[i] === 0`];
  let find: string;
  if (kc.kind === "ip4") {
    find = `let g = -1;
{
  const n = v${key}[i];
  let at = (Math.imul(n, 0x9e3779b1) >>> T_SHIFT) << 1;
  const mask = T_SLOTS.length - 2;
  for (;;) {
    const x = T_SLOTS[at + 1];
    if (x === 0) break;
    if (T_SLOTS[at] === n) { g = x - 1; break; }
    at = (at + 2) & mask;
  }
}`;
  } else if (kc.kind === "i32") {
    find = `const n = v${key}[i];
const g = SMALL !== null && n >= 0 && n < SMALL.length ? SMALL[n] - 1 : -1;`;
  } else return "";
  const adds: string[] = [];
  for (let f = 0; f < fold.folds.length; f++) {
    const { kind, field } = fold.folds[f]!;
    if (field === null) {
      if (kind !== "count") return "";
      adds.push(`V${f}[g]++;`);
      continue;
    }
    const k = at.get(field);
    if (k === undefined || cols[k]!.kind !== "i32") return "";
    const has = cols[k]!.tags === null ? "" : `if (t${k}[i] === 0) `;
    adds.push(
      kind === "count" ? `${has}V${f}[g]++;` : `${has}{ V${f}[g] += v${k}[i]; F${f}[g] |= 1; }`,
    );
  }
  return `${tests.length > 0 ? `if (${tests.join(" && ")}) ` : ""}{
${find}
if (g >= 0) {
${adds.join("\n")}
continue;
}
}`;
}

/** The rows of a block (scanRows's signature), made by code generated for its columns. */
type BlockRows = (
  cols: readonly ColumnView[],
  K: readonly number[],
  n: number,
  select: Uint8Array | undefined,
  keep: ((row: Row) => boolean) | undefined,
  fold: BlockFold | undefined,
  Timestamp: unknown,
  IpAddr: unknown,
  decodeValue: unknown,
) => Row[];

function scanRows(
  meta: BlockMeta,
  body: Uint8Array,
  viewed: () => ColumnView[],
  scan: BlockScan,
): Row[] {
  const n = meta.rowCount;
  if (meta.whole) {
    const c = meta.columns[0]!;
    const text = decoder.decode(body.subarray(c.off, c.off + c.len));
    const rows = text.length === 0 && n === 0
      ? []
      : text.split("\n").map((line) => decodeParsedRow(JSON.parse(line)));
    const chosen = scan.select ? rows.filter((_, i) => scan.select![i] === 1) : rows;
    const kept = scan.keep ? chosen.filter(scan.keep) : chosen;
    if (!scan.fold) return kept;
    for (const row of kept) scan.fold.add(row);
    return [];
  }
  return scanCode(meta, viewed(), scan, false) as Row[];
}

/**
 * Code generated for a block's columns going through its rows as `scan` says: the rows kept
 * (`picks` false), or their indexes (`picks` true; null where the filter needs whole rows).
 */
function scanCode(
  meta: BlockMeta,
  cols: readonly ColumnView[],
  scan: BlockScan,
  picks: boolean,
): (Row | number)[] | null {
  const n = meta.rowCount;
  // Rows with an own "__proto__" are stored whole (encodeBlock): a literal would set it.
  if (cols.some((c) => c.name === "__proto__")) throw new CorruptBlock("a column __proto__");
  const all = cols.map((_, k) => k);
  const flat = flatViews(cols);
  const consts: number[] = [];
  const test = scan.test ? testCode(scan.test.test, cols, consts) : null;
  // The comparisons on the columns first; the filter itself only where they are not all of it.
  const keep = test !== null && scan.test!.exact ? undefined : scan.keep;
  // The filter is given a row of the fields it reads where none of them is ever absent.
  const reads = keep === undefined || scan.reads === undefined
    ? null
    : all.filter((k) => scan.reads!.has(cols[k]!.name));
  const partial = reads !== null && !reads.some((k) => cols[k]!.absent);
  if (picks && keep !== undefined && !partial) return null;
  const fold = scan.fold === undefined || picks ? "" : foldCode(cols, scan.fold);
  const folding = fold !== "";
  const fs = folding ? scan.fold!.folds.map((_, f) => f) : [];
  const source = `const out = [];
${
    flat.map(({ id }, j) =>
      `const c${id} = cols[${j}], v${id} = c${id}.vec, t${id} = c${id}.tags, x${id} = c${id}.text, o${id} = c${id}.offsets, l${id} = c${id}.list;`
    ).join("\n")
  }
let T_SLOTS = null, T_SHIFT = 0, SMALL = null${
    fs.map((f) => `, V${f} = null, F${f} = null`).join("")
  };
function refresh() {
${
    folding
      ? `const t = fold.ipv4(); T_SLOTS = t.slots; T_SHIFT = t.shift; SMALL = fold.smallInts();
${fs.map((f) => `V${f} = fold.values(${f}); F${f} = fold.flags(${f});`).join("\n")}`
      : ""
  }
}
refresh();
for (let i = 0; i < n; i++) {
${scan.select === undefined ? "" : "if (select[i] === 0) continue;"}
${test === null ? "" : `if (!${test}) continue;`}
${keep === undefined ? "" : partial ? `${rowCode(cols, reads!, "f")}\nif (!keep(f)) continue;` : ""}
${fold}
${
    picks ? "out.push(i);" : `${rowCode(cols, all, "row")}
${keep !== undefined && !partial ? "if (!keep(row)) continue;" : ""}
${
      folding
        ? "fold.add(row);\nrefresh();"
        : scan.fold !== undefined
        ? "fold.add(row);"
        : "out.push(row);"
    }`
  }
}
return out;`;
  const make = generatedFunction<BlockRows>(
    ["cols", "K", "n", "select", "keep", "fold", "Timestamp", "IpAddr", "decodeValue"],
    source,
  );
  return make(
    flat,
    consts,
    n,
    scan.select,
    keep,
    picks ? undefined : scan.fold,
    Timestamp,
    IpAddr,
    decodeValue,
  );
}
