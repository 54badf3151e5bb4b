/**
 * The one lossless JSON form of values: a `.sxt` row line (docs/sxt-format.md), a result
 * spilled to disk (actors/result_store.ts) and rows and aggregate states crossing to and from a
 * scan worker (`encodeRow`/`decodeRow`: `postMessage` clones plain data only, so a Timestamp
 * would arrive as `{ ms }`) all use it. The encoding describes itself, so a row
 * decodes the same whatever the schema says: a table whose schema widened while it was written
 * (READ_JSON) still reads back exactly. JSON carries booleans, finite
 * numbers, strings, arrays and tuples (objects); everything else is a string with a `~` tag:
 *
 * | value                  | encoded                                 |
 * |------------------------|-----------------------------------------|
 * | Timestamp(ms)          | `"~T1714561200000"`                     |
 * | Interval(ms)           | `"~I90000"`                             |
 * | IpAddr v4 / v6         | `"~4" + uint32` / `"~6" + 32 hex digits` |
 * | IpNet                  | `"~N" + address as above + "/" + prefix` |
 * | NaN, ±Infinity, -0     | `"~DNaN"`, `"~DInfinity"`, `"~D-0"`     |
 * | a string starting `~`  | `"~" + the string` (so `"~~x"` is `~x`) |
 */

import type { Row, TupleValue, Value } from "../values/values.ts";
import { Interval, IpAddr, IpNet, Timestamp } from "../values/values.ts";
import type { RowColumns } from "../contracts/scan_workers.ts";

const TILDE = 126; // "~"

/** Column names as JSON strings; rows of a result share a few names. */
const quotedNames = new Map<string, string>();

/**
 * One line of JSON (no newline inside) for a row as an object, values encoded as
 * `encodeValue` does. Written out directly rather than through an encoded copy of the row:
 * results of millions of rows pass through here, and each copy was garbage for the collector.
 */
export function encodeRowObject(row: Row): string {
  let text = "{";
  for (const k in row) {
    const v = row[k];
    if (v === undefined) continue; // as JSON.stringify would leave it out
    let name = quotedNames.get(k);
    if (name === undefined) {
      name = JSON.stringify(k);
      if (quotedNames.size < 10_000) quotedNames.set(k, name);
    }
    if (text.length > 1) text += ",";
    text += name + ":" +
      (typeof v === "string"
        ? JSON.stringify(v.length > 0 && v.charCodeAt(0) === TILDE ? "~" + v : v)
        : typeof v === "number" && Number.isFinite(v) && !Object.is(v, -0)
        ? String(v)
        : v === null || typeof v === "boolean"
        ? String(v)
        : JSON.stringify(encodeValue(v)));
  }
  return text + "}";
}

/**
 * The row of an `encodeRowObject` line already parsed from JSON, decoded in place: columns
 * holding a plain number, string, boolean or null are taken as they are, which is most of them.
 */
export function decodeParsedRow(parsed: Record<string, unknown>): Row {
  for (const k in parsed) {
    const v = parsed[k];
    if (
      v !== null &&
      (typeof v === "object" || (typeof v === "string" && v.charCodeAt(0) === TILDE))
    ) parsed[k] = decodeValue(v);
  }
  return parsed as Row;
}

/** A row's fields as plain data (`encodeValue` each, keys in their order), for a clone. */
export function encodeRow(row: Row): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(row)) out[k] = encodeValue(row[k]!);
  return out;
}

/** The row of an `encodeRow` result (a new object: the encoded one is left as it is). */
export function decodeRow(encoded: Readonly<Record<string, unknown>>): Row {
  const out: Row = {};
  for (const k of Object.keys(encoded)) out[k] = decodeValue(encoded[k]);
  return out;
}

/**
 * `rows` as columns (RowColumns), or null when they do not all have the same fields in the same
 * order.
 */
export function encodeRowColumns(rows: readonly Row[]): RowColumns | null {
  if (rows.length === 0) return null;
  const names = Object.keys(rows[0]!);
  for (const row of rows) {
    let j = 0;
    for (const k in row) {
      if (names[j++] !== k) return null;
    }
    if (j !== names.length) return null;
  }
  const columns = names.map((name) => {
    let ipv4 = true;
    let numbers = true;
    for (const row of rows) {
      const v = row[name];
      if (typeof v !== "number") numbers = false;
      if (!(v instanceof IpAddr && v.version === 4 && (v.bits as number) >>> 0 === v.bits)) {
        ipv4 = false;
      }
      if (!ipv4 && !numbers) break;
    }
    if (ipv4) return Uint32Array.from(rows, (row) => (row[name] as IpAddr).bits as number);
    if (numbers) return Float64Array.from(rows, (row) => row[name] as number);
    return rows.map((row) => encodeValue(row[name]!));
  });
  return { length: rows.length, names, columns };
}

/** Row `i` of `encoded` (a new object, its fields in their order). */
export function rowOfColumns(encoded: RowColumns, i: number): Row {
  const out: Row = {};
  const { names, columns } = encoded;
  for (let j = 0; j < names.length; j++) {
    const c = columns[j]!;
    out[names[j]!] = c instanceof Uint32Array
      ? new IpAddr(4, c[i]!)
      : c instanceof Float64Array
      ? c[i]!
      : decodeValue(c[i]);
  }
  return out;
}

/** The JSON-ready form of a value. */
export function encodeValue(v: Value): unknown {
  switch (typeof v) {
    case "number":
      return Number.isFinite(v) && !Object.is(v, -0) ? v : `~D${Object.is(v, -0) ? "-0" : v}`;
    case "string":
      return v.length > 0 && v.charCodeAt(0) === TILDE ? "~" + v : v;
    case "boolean":
      return v;
    case "object":
      if (v === null) return null;
      if (v instanceof Timestamp) return `~T${v.ms}`;
      if (v instanceof Interval) return `~I${v.ms}`;
      if (v instanceof IpAddr) return "~" + encodeIp(v);
      if (v instanceof IpNet) return `~N${encodeIp(v.address)}/${v.prefix}`;
      if (Array.isArray(v)) return v.map(encodeValue);
      return encodeTuple(v as TupleValue);
    default:
      throw new Error(`cannot store a value of JavaScript type ${typeof v}`);
  }
}

function encodeTuple(t: TupleValue): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(t)) out[k] = encodeValue(t[k]!);
  return out;
}

function encodeIp(ip: IpAddr): string {
  return ip.version === 4
    ? `4${ip.bits as number}`
    : `6${(ip.bits as bigint).toString(16).padStart(32, "0")}`;
}

/** The value of an encoded form; throws an Error naming what is malformed. */
export function decodeValue(e: unknown): Value {
  switch (typeof e) {
    case "number":
    case "boolean":
      return e;
    case "string":
      return e.length > 0 && e.charCodeAt(0) === TILDE ? decodeTagged(e) : e;
    case "object": {
      if (e === null) return null;
      if (Array.isArray(e)) return e.map(decodeValue);
      const src = e as Record<string, unknown>;
      const out: Record<string, Value> = {};
      for (const k of Object.keys(src)) out[k] = decodeValue(src[k]);
      return out;
    }
    default:
      throw new Error(`unexpected JSON value ${String(e)}`);
  }
}

function decodeTagged(s: string): Value {
  const body = s.slice(2);
  switch (s[1]) {
    case "~":
      return s.slice(1);
    case "T":
      return new Timestamp(decodeNumber(body, s));
    case "I":
      return new Interval(decodeNumber(body, s));
    case "4":
    case "6":
      return decodeIp(s.slice(1), s);
    case "N": {
      const slash = body.lastIndexOf("/");
      const prefix = Number(body.slice(slash + 1));
      const max = body[0] === "4" ? 32 : 128;
      if (slash < 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > max) {
        throw new Error(`malformed network '${s}'`);
      }
      return new IpNet(decodeIp(body.slice(0, slash), s), prefix);
    }
    case "D":
      if (body === "-0") return -0;
      if (body === "NaN") return NaN;
      if (body === "Infinity") return Infinity;
      if (body === "-Infinity") return -Infinity;
      break;
  }
  throw new Error(`malformed tagged value '${s}'`);
}

function decodeNumber(text: string, whole: string): number {
  const n = Number(text);
  if (text === "" || !Number.isFinite(n)) throw new Error(`malformed number in '${whole}'`);
  return n;
}

function decodeIp(text: string, whole: string): IpAddr {
  if (text[0] === "4") {
    const n = Number(text.slice(1));
    if (/^4\d{1,10}$/.test(text) && n <= 0xffffffff) return new IpAddr(4, n);
  } else if (/^6[0-9a-f]{32}$/.test(text)) {
    return new IpAddr(6, BigInt("0x" + text.slice(1)));
  }
  throw new Error(`malformed address in '${whole}'`);
}
