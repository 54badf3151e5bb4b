/**
 * Numbers the groups of a hash aggregation by their keys, 0, 1, 2... in the order they first
 * appear, so that the aggregate operator keeps per-group state in plain arrays.
 *
 *   const g = table.find(row); // -1: a new group, then table.add() gives its number
 *
 * An IPv4 address or a timestamp, the usual single keys besides numbers and strings, is looked
 * up by its number, which spares building a string key per row: an IPv4 address in an
 * open-addressing table of its 32 bits (typed arrays: no boxed number and no Map entry per
 * lookup), a timestamp in a map of its own; a small non-negative integer (an HTTP status)
 * indexes an array.
 */

import type { Compiled } from "../plan/plan.ts";
import { SMALL_INTS } from "../plan/context.ts";
import { IpAddr, type Row, Timestamp } from "../values/values.ts";
import { combineKeys, valueKey } from "../values/value_ops.ts";

export class GroupTable {
  readonly #keys: readonly Compiled[];
  readonly #byKey = new Map<unknown, number>();
  readonly #byIpv4 = new Uint32Table();
  readonly #byTime = new Map<unknown, number>();
  #lastMap = this.#byKey;
  #lastKey: unknown = "";
  /** Group number + 1 by a small non-negative integer key (status codes, ports...), 0: none. */
  #bySmallInt: Int32Array | null = null;
  /** The small integer key of the last `find`, or -1. */
  #lastSmall = -1;
  /** The IPv4 bits of the last `find` when its key was an IPv4 address, or -1. */
  #lastIpv4 = -1;
  #size = 0;

  constructor(keys: readonly Compiled[]) {
    this.#keys = keys;
  }

  get size(): number {
    return this.#size;
  }

  /**
   * The number of the group of `row`, or -1 when its keys are new: `add` then numbers the new
   * group under the keys computed here (so that they are computed once per row).
   */
  find(row: Row): number {
    const keys = this.#keys;
    let map = this.#byKey;
    let key: unknown = "";
    this.#lastSmall = -1;
    this.#lastIpv4 = -1;
    if (keys.length === 1) {
      const v = keys[0]!.fn(row);
      if (typeof v === "number" && v >= 0 && v < SMALL_INTS && (v | 0) === v) {
        // One array read instead of a hash lookup; 0 and -0 are one key, as in a Map.
        this.#bySmallInt ??= new Int32Array(SMALL_INTS);
        this.#lastSmall = v;
        return this.#bySmallInt[v]! - 1;
      }
      if (v instanceof IpAddr && v.version === 4 && (v.bits as number) >>> 0 === v.bits) {
        const bits = v.bits as number;
        this.#lastIpv4 = bits;
        return this.#byIpv4.get(bits);
      } else if (v instanceof Timestamp) {
        map = this.#byTime;
        key = v.ms;
      } else key = valueKey(v);
    } else if (keys.length > 1) {
      key = combineKeys(keys.map((k) => valueKey(k.fn(row))));
    }
    this.#lastMap = map;
    this.#lastKey = key;
    return map.get(key) ?? -1;
  }

  /**
   * The group of a one-key table whose key is the IPv4 address of these 32 bits (what `find`
   * answers for a row holding that address), or -1 when it has none yet.
   */
  findIpv4Bits(bits: number): number {
    return this.#byIpv4.get(bits);
  }

  /** The table of IPv4 keys' groups (for a reader that probes it itself: DirectGroups). */
  get ipv4Table(): Uint32Table {
    return this.#byIpv4;
  }

  /** Group + 1 by small integer key (0: none), or null while no such key was found. */
  get smallInts(): Int32Array | null {
    return this.#bySmallInt;
  }

  /**
   * The group of a one-key table whose key is the integer `v`, 0 <= v < 65536 (what `find`
   * answers for a row holding that number), or -1 when it has none yet.
   */
  findSmallInt(v: number): number {
    const byInt = this.#bySmallInt;
    return byInt === null ? -1 : byInt[v]! - 1;
  }

  /** Numbers a new group under the keys of the last `find`. */
  add(): number {
    const g = this.#size++;
    if (this.#lastSmall >= 0) this.#bySmallInt![this.#lastSmall] = g + 1;
    else if (this.#lastIpv4 >= 0) this.#byIpv4.set(this.#lastIpv4, g);
    else this.#lastMap.set(this.#lastKey, g);
    return g;
  }

  /** Numbers the one group of a select without keys (over no input). */
  addEmpty(): number {
    const g = this.#size++;
    this.#byKey.set("", g);
    return g;
  }
}

/**
 * Group numbers by uint32 keys: open addressing with linear probing over one typed array, kept
 * at most half full. A slot is two numbers side by side (one cache line holds both): its key
 * and its group number + 1 (0: empty).
 */
export class Uint32Table {
  #slots = new Uint32Array(2048);
  #shift = 22; // 32 - log2(capacity)
  #count = 0;

  /**
   * The slots, for a reader that probes them itself (byte_scanner.ts) as `get` does: the key at
   * an even index, the group + 1 after it; a key starts at (Math.imul(key, 0x9e3779b1) >>>
   * shift) << 1. Replaced by a larger array when the table grows.
   */
  get slots(): Uint32Array {
    return this.#slots;
  }

  get shift(): number {
    return this.#shift;
  }

  /** The group of `key` (a uint32), or -1. */
  get(key: number): number {
    const slots = this.#slots;
    const mask = slots.length - 2;
    let at = (Math.imul(key, 0x9e3779b1) >>> this.#shift) << 1;
    for (;;) {
      const g = slots[at + 1]!;
      if (g === 0) return -1;
      if (slots[at] === key) return g - 1;
      at = (at + 2) & mask;
    }
  }

  /** Records `group` under `key`, which `get` has just answered -1 for. */
  set(key: number, group: number): void {
    if (++this.#count * 4 > this.#slots.length) this.#grow();
    this.#place(key, group + 1);
  }

  #place(key: number, slotValue: number): void {
    const slots = this.#slots;
    const mask = slots.length - 2;
    let at = (Math.imul(key, 0x9e3779b1) >>> this.#shift) << 1;
    while (slots[at + 1] !== 0) at = (at + 2) & mask;
    slots[at] = key;
    slots[at + 1] = slotValue;
  }

  #grow(): void {
    const slots = this.#slots;
    this.#slots = new Uint32Array(slots.length * 2);
    this.#shift--;
    for (let k = 0; k < slots.length; k += 2) {
      if (slots[k + 1] !== 0) this.#place(slots[k]!, slots[k + 1]!);
    }
  }
}
