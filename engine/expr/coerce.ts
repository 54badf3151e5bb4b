/**
 * Values of one kind read as another where the meaning is plain: a string constant compared
 * with a timestamp is a timestamp, a JSON string in an IPADDR position is an address. Used at
 * compile time for constants and at run time for values of open-schema (ANY) fields.
 */

import { parseInterval } from "../values/interval.ts";
import { parseIp, parseNet } from "../values/ip.ts";
import { parseTimestamp } from "../values/time_parse.ts";
import { typeToString } from "../values/types.ts";
import { Interval, IpAddr, IpNet, Timestamp, type Value } from "../values/values.ts";
import { typeOfValue } from "../values/value_ops.ts";

/** The kinds of argument a function or operator asks for. */
export type ParamKind =
  | "STRING"
  | "NUMBER"
  | "WHOLE"
  | "BOOLEAN"
  | "TIMESTAMP"
  | "INTERVAL"
  | "IPADDR"
  | "IPNET"
  | "ARRAY"
  | "ANY";

/** How a kind reads in messages. */
export function describeKind(kind: ParamKind): string {
  switch (kind) {
    case "NUMBER":
      return "a number";
    case "WHOLE":
      return "INTEGER or LONG";
    case "ANY":
      return "any value";
    default:
      return kind;
  }
}

/** The type name of a runtime value, for messages: `STRING`, `ARRAY<INTEGER>`. */
export function describeValue(v: Value): string {
  return typeToString(typeOfValue(v));
}

/**
 * `v` as a value of `kind`, converting strings to timestamps, intervals, addresses and
 * networks; undefined when it is not one. Null stays null.
 */
export function coerceValue(kind: ParamKind, v: Value, zone: string): Value | undefined {
  if (v === null) return null;
  switch (kind) {
    case "ANY":
      return v;
    case "STRING":
      return typeof v === "string" ? v : undefined;
    case "NUMBER":
      return typeof v === "number" ? v : undefined;
    case "WHOLE":
      return typeof v === "number" && Number.isInteger(v) ? v : undefined;
    case "BOOLEAN":
      return typeof v === "boolean" ? v : undefined;
    case "ARRAY":
      return Array.isArray(v) ? v : undefined;
    case "TIMESTAMP": {
      if (v instanceof Timestamp) return v;
      if (typeof v !== "string") return undefined;
      const ms = parseTimestamp(v, zone);
      return ms === null ? undefined : new Timestamp(ms);
    }
    case "INTERVAL": {
      if (v instanceof Interval) return v;
      if (typeof v !== "string") return undefined;
      const r = parseInterval(v);
      return r.ok ? new Interval(r.millis) : undefined;
    }
    case "IPADDR":
      if (v instanceof IpAddr) return v;
      return typeof v === "string" ? parseIp(v) ?? undefined : undefined;
    case "IPNET":
      if (v instanceof IpNet) return v;
      return typeof v === "string" ? parseNet(v) ?? undefined : undefined;
  }
}
