/**
 * Runtime values. They describe themselves, so that rendering, comparing and hashing need no
 * schema:
 *
 * | type      | runtime form                                   |
 * |-----------|------------------------------------------------|
 * | BOOLEAN   | boolean                                        |
 * | INTEGER, LONG, DOUBLE | number (LONG exact up to 2^53)     |
 * | STRING    | string                                         |
 * | TIMESTAMP | Timestamp (epoch milliseconds)                 |
 * | INTERVAL  | Interval (milliseconds)                        |
 * | IPADDR    | IpAddr (v4 as uint32, v6 as 128-bit bigint)    |
 * | IPNET     | IpNet (address and prefix length)              |
 * | ARRAY     | Value[]                                        |
 * | TUPLE     | TupleValue: a plain object keyed by field name |
 * | null      | null                                           |
 *
 * Parsing and formatting live in engine/values/time.ts and engine/values/ip.ts.
 */

export type Value =
  | null
  | boolean
  | number
  | string
  | Timestamp
  | Interval
  | IpAddr
  | IpNet
  | readonly Value[]
  | TupleValue;

export interface TupleValue {
  readonly [field: string]: Value;
}

/** A record flowing through the engine: field name to value. */
export type Row = Record<string, Value>;

/** An absolute instant with millisecond precision. */
export class Timestamp {
  constructor(readonly ms: number) {}
  valueOf(): number {
    return this.ms;
  }
}

/** A signed duration in milliseconds. */
export class Interval {
  constructor(readonly ms: number) {}
  valueOf(): number {
    return this.ms;
  }
}

/** An IPv4 (`bits` is a uint32 number) or IPv6 (`bits` is a 128-bit bigint) address. */
export class IpAddr {
  constructor(readonly version: 4 | 6, readonly bits: number | bigint) {}
  /** A primitive that is equal for equal addresses: for hash keys. */
  get key(): number | string {
    return this.version === 4 ? (this.bits as number) : `6:${this.bits}`;
  }
}

/** A network: an address with its host bits cleared, and the prefix length. */
export class IpNet {
  constructor(readonly address: IpAddr, readonly prefix: number) {}
  get key(): string {
    return `${this.address.key}/${this.prefix}`;
  }
}

export function isTuple(v: Value): v is TupleValue {
  return typeof v === "object" && v !== null && !Array.isArray(v) &&
    Object.getPrototypeOf(v) === Object.prototype;
}
