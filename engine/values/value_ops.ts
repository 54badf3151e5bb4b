/**
 * Operations on runtime values that need no schema: ordering, equality, hash keys, the type a
 * value has, and a size estimate for the memory budget.
 */

import { ANY, arrayOf, type Field, NULL_TYPE, scalar, tupleOf, type Type, widen } from "./types.ts";
import {
  Interval,
  IpAddr,
  IpNet,
  isTuple,
  Timestamp,
  type TupleValue,
  type Value,
} from "./values.ts";

/** Rank of each kind of value, so that values of different kinds still have a total order. */
function rank(v: Value): number {
  if (v === null) return 99;
  switch (typeof v) {
    case "boolean":
      return 0;
    case "number":
      return 1;
    case "string":
      return 2;
  }
  if (v instanceof Timestamp) return 3;
  if (v instanceof Interval) return 4;
  if (v instanceof IpAddr) return 5;
  if (v instanceof IpNet) return 6;
  if (Array.isArray(v)) return 7;
  return 8;
}

function compareIp(a: IpAddr, b: IpAddr): number {
  if (a.version !== b.version) return a.version - b.version;
  return a.bits < b.bits ? -1 : a.bits > b.bits ? 1 : 0;
}

/**
 * A total order: numbers by value (NaN last), strings by UTF-16 code unit, false < true,
 * timestamps and intervals by ms, IPv4 before IPv6 then by bits, networks by address then
 * prefix, arrays and tuples element-wise. Values of different kinds order by kind; null after
 * everything (callers that place nulls themselves never pass them).
 */
export function compareValues(a: Value, b: Value): number {
  if (typeof a === "number" && typeof b === "number") {
    if (a < b) return -1;
    if (a > b) return 1;
    if (a === b) return 0;
    return Number.isNaN(a) ? (Number.isNaN(b) ? 0 : 1) : -1;
  }
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
  const ra = rank(a), rb = rank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 0:
      return (a ? 1 : 0) - (b ? 1 : 0);
    case 3:
    case 4: {
      const x = (a as Timestamp).ms, y = (b as Timestamp).ms;
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 5:
      return compareIp(a as IpAddr, b as IpAddr);
    case 6: {
      const c = compareIp((a as IpNet).address, (b as IpNet).address);
      return c !== 0 ? c : (a as IpNet).prefix - (b as IpNet).prefix;
    }
    case 7: {
      const x = a as readonly Value[], y = b as readonly Value[];
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const c = compareValues(x[i]!, y[i]!);
        if (c !== 0) return c;
      }
      return x.length - y.length;
    }
    case 8: {
      const x = a as TupleValue, y = b as TupleValue;
      const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])];
      for (const k of keys) {
        const c = compareValues(x[k] ?? null, y[k] ?? null);
        if (c !== 0) return c;
      }
      return 0;
    }
    default:
      return 0;
  }
}

/** Equality of values (null equals null here; SQL's null semantics are the caller's). */
export function valuesEqual(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") {
    return typeof a === "number" && typeof b === "number" && Number.isNaN(a) && Number.isNaN(b);
  }
  return compareValues(a, b) === 0;
}

/** A primitive key (Map/Set key) that is equal exactly for equal values. */
export type ValueKey = string | number | boolean | null;

/**
 * The hash key of a value. Plain strings map to themselves unless they begin with NUL;
 * every other non-primitive form begins with NUL and a tag letter, so keys of different kinds
 * never clash.
 */
export function valueKey(v: Value): ValueKey {
  if (v === null) return null;
  switch (typeof v) {
    case "string":
      return v.length > 0 && v.charCodeAt(0) === 0 ? "\u0000s" + v : v;
    case "number":
    case "boolean":
      return v;
  }
  if (v instanceof Timestamp) return "\u0000t" + v.ms;
  if (v instanceof Interval) return "\u0000d" + v.ms;
  if (v instanceof IpAddr) return "\u0000i" + v.key;
  if (v instanceof IpNet) return "\u0000n" + v.key;
  if (Array.isArray(v)) return "\u0000a" + combineKeys(v.map(valueKey));
  const t = v as TupleValue;
  const keys = Object.keys(t).sort();
  return "\u0000o" + combineKeys(keys.flatMap((k) => [k, valueKey(t[k]!)]));
}

/**
 * One string key for several keys (group and join keys), injective: each part carries its
 * kind and strings their length.
 */
export function combineKeys(keys: readonly ValueKey[]): string {
  let out = "";
  for (const k of keys) {
    switch (typeof k) {
      case "string":
        out += "s" + k.length + ":" + k;
        break;
      case "number":
        out += "n" + k + ";";
        break;
      case "boolean":
        out += k ? "T" : "F";
        break;
      default:
        out += "N";
    }
  }
  return out;
}

/** The type of a value: INTEGER for int32 numbers, LONG for other integers, DOUBLE otherwise. */
export function typeOfValue(v: Value): Type {
  if (v === null) return NULL_TYPE;
  switch (typeof v) {
    case "boolean":
      return scalar("BOOLEAN");
    case "number":
      if (Number.isInteger(v)) {
        return v >= -2147483648 && v <= 2147483647 ? scalar("INTEGER") : scalar("LONG");
      }
      return scalar("DOUBLE");
    case "string":
      return scalar("STRING");
  }
  if (v instanceof Timestamp) return scalar("TIMESTAMP");
  if (v instanceof Interval) return scalar("INTERVAL");
  if (v instanceof IpAddr) return scalar("IPADDR");
  if (v instanceof IpNet) return scalar("IPNET");
  if (Array.isArray(v)) {
    let element: Type = NULL_TYPE;
    for (const e of v) element = widen(element, typeOfValue(e));
    return arrayOf(element);
  }
  if (isTuple(v)) {
    const fields: Field[] = Object.entries(v).map(([name, fv]) => ({
      name,
      type: typeOfValue(fv),
      nullable: fv === null,
    }));
    return tupleOf(fields);
  }
  return ANY;
}

/** A rough size in bytes of a value held in memory (group, sort and join state). */
export function estimateBytes(v: Value): number {
  if (v === null) return 8;
  switch (typeof v) {
    case "boolean":
    case "number":
      return 8;
    case "string":
      return 16 + 2 * v.length;
  }
  if (v instanceof Timestamp || v instanceof Interval) return 24;
  if (v instanceof IpAddr) return v.version === 4 ? 24 : 56;
  if (v instanceof IpNet) return 40 + estimateBytes(v.address);
  if (Array.isArray(v)) {
    let n = 16;
    for (const e of v) n += 8 + estimateBytes(e);
    return n;
  }
  let n = 32;
  for (const [k, fv] of Object.entries(v as TupleValue)) n += 16 + 2 * k.length + estimateBytes(fv);
  return n;
}
