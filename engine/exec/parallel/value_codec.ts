/**
 * Rows across the worker boundary. `postMessage` clones plain data only: a Timestamp would
 * arrive as `{ ms }`, no longer a Timestamp. Values are encoded as plain data that says what
 * they were, and decoded on the other side:
 *
 * | value     | encoded                       |
 * |-----------|-------------------------------|
 * | null, boolean, number, string | itself    |
 * | Timestamp | [0, ms]                       |
 * | Interval  | [1, ms]                       |
 * | IpAddr    | [2, version, bits]            |
 * | IpNet     | [3, version, bits, prefix]    |
 * | array     | [4, ...encoded elements]      |
 * | tuple     | [5, { field: encoded }]       |
 */

import { Interval, IpAddr, IpNet, type Row, Timestamp, type Value } from "../../values/values.ts";

export type Encoded = null | boolean | number | string | bigint | readonly unknown[];

export function encodeValue(v: Value): Encoded {
  if (v === null || typeof v !== "object") return v;
  if (v instanceof Timestamp) return [0, v.ms];
  if (v instanceof Interval) return [1, v.ms];
  if (v instanceof IpAddr) return [2, v.version, v.bits];
  if (v instanceof IpNet) return [3, v.address.version, v.address.bits, v.prefix];
  if (Array.isArray(v)) return [4, ...v.map(encodeValue)];
  const out: Record<string, Encoded> = {};
  for (const k of Object.keys(v)) out[k] = encodeValue((v as Record<string, Value>)[k]!);
  return [5, out];
}

export function decodeValue(e: Encoded): Value {
  if (e === null || typeof e !== "object") return e as Value;
  const a = e as readonly unknown[];
  switch (a[0]) {
    case 0:
      return new Timestamp(a[1] as number);
    case 1:
      return new Interval(a[1] as number);
    case 2:
      return new IpAddr(a[1] as 4 | 6, a[2] as number | bigint);
    case 3:
      return new IpNet(new IpAddr(a[1] as 4 | 6, a[2] as number | bigint), a[3] as number);
    case 4:
      return a.slice(1).map((x) => decodeValue(x as Encoded));
    default: {
      const fields = a[1] as Record<string, Encoded>;
      const out: Record<string, Value> = {};
      for (const k of Object.keys(fields)) out[k] = decodeValue(fields[k]!);
      return out;
    }
  }
}

/** A row's fields, encoded; keys keep their order. */
export function encodeRow(row: Row): Record<string, Encoded> {
  const out: Record<string, Encoded> = {};
  for (const k of Object.keys(row)) out[k] = encodeValue(row[k]!);
  return out;
}

export function decodeRow(row: Record<string, Encoded>): Row {
  const out: Row = {};
  for (const k of Object.keys(row)) out[k] = decodeValue(row[k]!);
  return out;
}
