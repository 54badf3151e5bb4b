/**
 * A lossless JSON form of rows for results spilled to disk: the value classes (Timestamp,
 * IpAddr, ...) become tagged arrays, so that reading a spilled row gives back the same values.
 * Arrays are tagged too (`[0, ...elements]`), which keeps the tags unambiguous.
 */

import { Interval, IpAddr, IpNet, type Row, Timestamp, type Value } from "../engine/values.ts";

type Encoded = null | boolean | number | string | Encoded[] | { [k: string]: Encoded };

const ARRAY = 0, TIMESTAMP = 1, INTERVAL = 2, IPADDR = 3, IPNET = 4;

/** One line of JSON (no newline inside) for a row. */
export function encodeRow(row: Row): string {
  const out: Record<string, Encoded> = {};
  for (const k in row) out[k] = encodeValue(row[k]);
  return JSON.stringify(out);
}

export function decodeRow(line: string): Row {
  const parsed = JSON.parse(line) as Record<string, Encoded>;
  const out: Row = {};
  for (const k in parsed) out[k] = decodeValue(parsed[k]);
  return out;
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
