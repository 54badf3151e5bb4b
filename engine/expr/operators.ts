/**
 * Run-time semantics of the operators, on values of any kind: the compiler uses these for
 * operands whose type is known only when data is read (ANY), and for the less hot typed cases.
 * `undefined` means a type clash, which the caller reports with the expression's position.
 */

import { Interval, IpAddr, IpNet, Timestamp, type Value } from "../values/values.ts";
import { compareValues } from "../values/value_ops.ts";
import { coerceValue } from "./coerce.ts";

export type ArithOp = "+" | "-" | "*" | "/" | "%";

/** Numbers: `/` is always a real division; division or remainder by zero is null. */
export function numericOp(op: ArithOp, a: number, b: number): number | null {
  switch (op) {
    case "+":
      return a + b;
    case "-":
      return a - b;
    case "*":
      return a * b;
    case "/":
      return b === 0 ? null : a / b;
    case "%":
      return b === 0 ? null : a % b;
  }
}

/**
 * `a op b` for values of any kind: numbers, `timestamp ± interval`, `timestamp - timestamp`,
 * `interval ± interval`, `interval * number`, `interval / number`, `interval / interval`.
 */
export function arithValues(op: ArithOp, a: Value, b: Value): Value | undefined {
  if (a === null || b === null) return null;
  if (typeof a === "number" && typeof b === "number") return numericOp(op, a, b);
  if (a instanceof Timestamp) {
    if (b instanceof Interval) {
      if (op === "+") return new Timestamp(a.ms + b.ms);
      if (op === "-") return new Timestamp(a.ms - b.ms);
    } else if (b instanceof Timestamp && op === "-") return new Interval(a.ms - b.ms);
    return undefined;
  }
  if (a instanceof Interval) {
    if (b instanceof Interval) {
      if (op === "+") return new Interval(a.ms + b.ms);
      if (op === "-") return new Interval(a.ms - b.ms);
      if (op === "/") return b.ms === 0 ? null : a.ms / b.ms;
    } else if (b instanceof Timestamp && op === "+") return new Timestamp(a.ms + b.ms);
    else if (typeof b === "number") {
      if (op === "*") return new Interval(Math.round(a.ms * b));
      if (op === "/") return b === 0 ? null : new Interval(Math.round(a.ms / b));
    }
    return undefined;
  }
  if (typeof a === "number" && b instanceof Interval && op === "*") {
    return new Interval(Math.round(a * b.ms));
  }
  return undefined;
}

/** Strings meeting typed values (JSON data): read the string as the other side's kind. */
function alignString(s: string, other: Value, zone: string): Value | undefined {
  if (other instanceof Timestamp) return coerceValue("TIMESTAMP", s, zone);
  if (other instanceof IpAddr) return coerceValue("IPADDR", s, zone);
  if (other instanceof IpNet) return coerceValue("IPNET", s, zone);
  if (other instanceof Interval) return coerceValue("INTERVAL", s, zone);
  return undefined;
}

function sameKind(a: Value, b: Value): boolean {
  if (typeof a !== "object" || typeof b !== "object") return typeof a === typeof b;
  if (a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b);
  return Object.getPrototypeOf(a) === Object.getPrototypeOf(b);
}

/**
 * The order of two non-null values of any kind, reading a string as the other side's kind
 * when that is a timestamp, address, network or interval; undefined when they do not compare.
 */
export function compareAny(a: Value, b: Value, zone: string): number | undefined {
  if (sameKind(a, b)) return compareValues(a, b);
  if (typeof a === "string") {
    const x = alignString(a, b, zone);
    return x === undefined ? undefined : compareValues(x, b);
  }
  if (typeof b === "string") {
    const y = alignString(b, a, zone);
    return y === undefined ? undefined : compareValues(a, y);
  }
  return undefined;
}

export type CompareOp = "=" | "!=" | "<" | "<=" | ">" | ">=";

/** The truth of `c op 0` for a comparison result c. */
export function testOrder(op: CompareOp, c: number): boolean {
  switch (op) {
    case "=":
      return c === 0;
    case "!=":
      return c !== 0;
    case "<":
      return c < 0;
    case "<=":
      return c <= 0;
    case ">":
      return c > 0;
    case ">=":
      return c >= 0;
  }
}
