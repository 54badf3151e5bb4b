/**
 * A lossless JSON form of rows for results spilled to disk: the value classes (Timestamp,
 * IpAddr, ...) become tagged arrays, so that reading a spilled row gives back the same values.
 * Arrays are tagged too (`[0, ...elements]`), which keeps the tags unambiguous.
 */

import { Interval, IpAddr, IpNet, type Row, Timestamp, type Value } from "../engine/values.ts";

type Encoded = null | boolean | number | string | Encoded[] | { [k: string]: Encoded };

const ARRAY = 0, TIMESTAMP = 1, INTERVAL = 2, IPADDR = 3, IPNET = 4;

/** Column names as JSON strings; rows of a result share a few names. */
const quotedNames = new Map<string, string>();

/**
 * One line of JSON (no newline inside) for a row. Written out directly rather than through an
 * encoded copy of the row for JSON.stringify: results of millions of rows pass through here,
 * and each copy was garbage for the collector.
 */
export function encodeRow(row: Row): string {
  let text = "{";
  for (const k in row) {
    let name = quotedNames.get(k);
    if (name === undefined) {
      name = JSON.stringify(k);
      if (quotedNames.size < 10_000) quotedNames.set(k, name);
    }
    const v = row[k];
    if (v === undefined) continue; // as JSON.stringify would leave it out
    if (text.length > 1) text += ",";
    text += name + ":" +
      (typeof v === "string"
        ? JSON.stringify(v)
        : typeof v === "number"
        ? (Number.isFinite(v) ? String(v) : "null")
        : v === null || typeof v === "boolean"
        ? String(v)
        : JSON.stringify(encodeValue(v)));
  }
  return text + "}";
}

export function decodeRow(line: string): Row {
  return decodeParsedRow(JSON.parse(line));
}

/**
 * The row of an encoded row already parsed from JSON, decoded in place: columns holding a
 * number, string, boolean or null are taken as they are, which is most of them.
 */
export function decodeParsedRow(parsed: Record<string, unknown>): Row {
  const row = parsed as Record<string, Encoded>;
  for (const k in row) {
    const v = row[k];
    if (v !== null && typeof v === "object") (row as Record<string, Value>)[k] = decodeValue(v);
  }
  return row as Row;
}

function encodeValue(v: Value): Encoded {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return [ARRAY, ...v.map(encodeValue)];
  if (v instanceof Timestamp) return [TIMESTAMP, v.ms];
  if (v instanceof Interval) return [INTERVAL, v.ms];
  if (v instanceof IpAddr) return [IPADDR, v.version, String(v.bits)];
  if (v instanceof IpNet) return [IPNET, v.address.version, String(v.address.bits), v.prefix];
  const out: Record<string, Encoded> = {};
  const tuple = v as Readonly<Record<string, Value>>;
  for (const k in tuple) out[k] = encodeValue(tuple[k]);
  return out;
}

function decodeValue(e: Encoded): Value {
  if (e === null || typeof e !== "object") return e;
  if (Array.isArray(e)) {
    switch (e[0]) {
      case ARRAY:
        return e.slice(1).map(decodeValue);
      case TIMESTAMP:
        return new Timestamp(e[1] as number);
      case INTERVAL:
        return new Interval(e[1] as number);
      case IPADDR:
        return ipOf(e[1] as 4 | 6, e[2] as string);
      case IPNET:
        return new IpNet(ipOf(e[1] as 4 | 6, e[2] as string), e[3] as number);
      default:
        throw new Error(`corrupt spilled value tag ${JSON.stringify(e[0])}`);
    }
  }
  const out: Record<string, Value> = {};
  for (const k in e) out[k] = decodeValue(e[k]);
  return out;
}

function ipOf(version: 4 | 6, bits: string): IpAddr {
  return new IpAddr(version, version === 4 ? Number(bits) : BigInt(bits));
}

/** A cheap estimate of the bytes a value holds in memory, for the result memory budget. */
export function estimateBytes(v: Value): number {
  if (v === null || typeof v === "boolean" || typeof v === "number") return 8;
  if (typeof v === "string") return 16 + 2 * v.length;
  if (Array.isArray(v)) {
    let n = 32;
    for (const e of v) n += 8 + estimateBytes(e);
    return n;
  }
  if (v instanceof Timestamp || v instanceof Interval || v instanceof IpAddr) return 32;
  if (v instanceof IpNet) return 64;
  let n = 48;
  const tuple = v as Readonly<Record<string, Value>>;
  for (const k in tuple) n += 16 + 2 * k.length + estimateBytes(tuple[k]);
  return n;
}
