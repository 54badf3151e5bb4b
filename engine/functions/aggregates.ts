/**
 * Aggregate functions as factories: one accumulator per group. Nulls are skipped by all of
 * them (count(*) counts rows: it is given a non-null marker per row); sum, avg, min and max
 * of no values are null, count is 0.
 */

import { QueryError } from "../front/diagnostics.ts";
import { arrayOf, isNumeric, scalar, type Type, typeToString } from "../values/types.ts";
import { Interval, Timestamp, type Value } from "../values/values.ts";
import { compareValues, estimateBytes, type ValueKey, valueKey } from "../values/value_ops.ts";
import { decodeValue, encodeValue } from "../table/sxt_values.ts";

export interface Accumulator {
  add(v: Value): void;
  result(): Value;
  /** Bytes held beyond a fixed small size (distinct sets, arrays), for the memory budget. */
  readonly bytes?: number;
  /**
   * The state as plain data that survives postMessage (a scan worker's partial aggregate,
   * engine/exec/parallel/); `mergeState` takes in such a state of the values that came after
   * this accumulator's: merged in input order, the result is that of one pass.
   */
  exportState(): unknown;
  mergeState(state: unknown): void;
}

/**
 * An aggregate takes one argument, then `params` constant numbers (`percentile(x, 0.95)`); the
 * checker's catalogue derives that from here.
 */
export interface AggregateDef {
  /** Accepts `*` as its argument: only count(*). */
  readonly star?: boolean;
  /** Constant numbers after the argument, each checked by `check` (absent: none). */
  readonly params?: {
    readonly names: readonly string[];
    /** A message when the value is out of range, else null. */
    check(value: number, index: number): string | null;
  };
  /** The result type for the argument's type (null for `count(*)`); throws a TYPE_ERROR QueryError. */
  resultType(arg: Type | null): Type;
  create(params?: readonly number[]): Accumulator;
}

const LONG = scalar("LONG");
const DOUBLE = scalar("DOUBLE");

function clash(message: string): never {
  throw new QueryError({ code: "TYPE_ERROR", message });
}

function needArg(name: string, arg: Type | null): Type {
  if (arg === null) clash(`${name}(*) is not allowed; only count(*) takes *`);
  return arg;
}

function numericArg(name: string, arg: Type | null, intervals: boolean): Type {
  const t = needArg(name, arg);
  if (isNumeric(t) || t.kind === "ANY" || t.kind === "NULL") return t;
  if (intervals && t.kind === "INTERVAL") return t;
  return clash(
    `${name} needs a number${intervals ? " or an interval" : ""}, found ${typeToString(t)}`,
  );
}

function notNumber(name: string, v: Value): never {
  return clash(`${name} needs numbers, found the value ${JSON.stringify(String(v))}`);
}

function countAccumulator(): Accumulator {
  let n = 0;
  return {
    add(v) {
      if (v !== null) n++;
    },
    result: () => n,
    exportState: () => n,
    mergeState(state) {
      n += state as number;
    },
  };
}

function countDistinctAccumulator(): Accumulator {
  const seen = new Set<ValueKey>();
  let bytes = 0;
  return {
    add(v) {
      if (v === null) return;
      const k = valueKey(v);
      if (!seen.has(k)) {
        seen.add(k);
        bytes += 16 + (typeof k === "string" ? 2 * k.length : 8);
      }
    },
    result: () => seen.size,
    get bytes() {
      return bytes;
    },
    exportState: () => [...seen],
    mergeState(state) {
      for (const k of state as ValueKey[]) {
        if (!seen.has(k)) {
          seen.add(k);
          bytes += 16 + (typeof k === "string" ? 2 * k.length : 8);
        }
      }
    },
  };
}

function sumAccumulator(): Accumulator {
  let total = 0;
  let seen = false;
  let interval = false;
  return {
    add(v) {
      if (v === null) return;
      if (typeof v === "number") total += v;
      else if (v instanceof Interval) {
        total += v.ms;
        interval = true;
      } else notNumber("sum", v);
      seen = true;
    },
    result: () => (!seen ? null : interval ? new Interval(total) : total),
    exportState: () => [total, seen, interval],
    mergeState(state) {
      const [t, s, i] = state as [number, boolean, boolean];
      total += t;
      seen ||= s;
      interval ||= i;
    },
  };
}

function avgAccumulator(): Accumulator {
  let total = 0;
  let n = 0;
  return {
    add(v) {
      if (v === null) return;
      if (typeof v !== "number") notNumber("avg", v);
      total += v;
      n++;
    },
    result: () => (n === 0 ? null : total / n),
    exportState: () => [total, n],
    mergeState(state) {
      const [t, k] = state as [number, number];
      total += t;
      n += k;
    },
  };
}

function extremeAccumulator(sign: 1 | -1): Accumulator {
  let best: Value = null;
  const add = (v: Value) => {
    if (v === null) return;
    if (best === null || sign * compareValues(v, best) > 0) best = v;
  };
  return {
    add,
    result: () => best,
    exportState: () => encodeValue(best),
    // The earlier best wins a tie, as in one pass.
    mergeState: (state) => add(decodeValue(state)),
  };
}

function firstAccumulator(): Accumulator {
  let first: Value = null;
  return {
    add(v) {
      if (first === null) first = v;
    },
    result: () => first,
    exportState: () => encodeValue(first),
    mergeState(state) {
      if (first === null) first = decodeValue(state);
    },
  };
}

function lastAccumulator(): Accumulator {
  let last: Value = null;
  return {
    add(v) {
      if (v !== null) last = v;
    },
    result: () => last,
    exportState: () => encodeValue(last),
    mergeState(state) {
      const v = decodeValue(state);
      if (v !== null) last = v;
    },
  };
}

function arrayAccumulator(): Accumulator {
  const items: Value[] = [];
  let bytes = 0;
  return {
    add(v) {
      if (v === null) return;
      items.push(v);
      bytes += 8 + estimateBytes(v);
    },
    result: () => items,
    get bytes() {
      return bytes;
    },
    exportState: () => items.map(encodeValue),
    mergeState(state) {
      for (const e of state as unknown[]) {
        const v = decodeValue(e);
        items.push(v);
        bytes += 8 + estimateBytes(v);
      }
    },
  };
}

/**
 * An exact percentile: every non-null value is held (8 bytes each, charged to the memory budget
 * as the group's state), sorted once when the result is asked for, and interpolated linearly
 * between the two nearest ranks (SQL's `percentile_cont`, DuckDB's `quantile_cont`, numpy's
 * default): for n values sorted `v[0..n-1]`, the p-th is at rank `p * (n - 1)`. Merging states
 * concatenates them, so one thread and several workers give the same answer to the last bit.
 * Numbers give a DOUBLE; intervals an INTERVAL and timestamps a TIMESTAMP (milliseconds,
 * interpolated the same way and rounded down to a whole millisecond).
 */
function percentileAccumulator(p: number): Accumulator {
  const values: number[] = [];
  let sorted = true;
  let kind: "number" | "interval" | "timestamp" | null = null;
  const push = (x: number) => {
    if (sorted && values.length > 0 && x < values[values.length - 1]!) sorted = false;
    values.push(x);
  };
  return {
    add(v) {
      if (v === null) return;
      if (typeof v === "number") {
        if (Number.isNaN(v)) return;
        kind ??= "number";
        push(v);
      } else if (v instanceof Interval) {
        kind = "interval";
        push(v.ms);
      } else if (v instanceof Timestamp) {
        kind = "timestamp";
        push(v.ms);
      } else {clash(
          `percentile needs numbers, intervals or timestamps, found ${JSON.stringify(String(v))}`,
        );}
    },
    result() {
      const n = values.length;
      if (n === 0) return null;
      if (!sorted) {
        values.sort((a, b) => a - b);
        sorted = true;
      }
      const rank = p * (n - 1);
      const lo = Math.floor(rank), hi = Math.ceil(rank);
      const a = values[lo]!, b = values[hi]!;
      const x = lo === hi ? a : a + (b - a) * (rank - lo);
      if (kind === "interval") return new Interval(Math.floor(x));
      if (kind === "timestamp") return new Timestamp(Math.floor(x));
      return x;
    },
    get bytes() {
      return 8 * values.length;
    },
    exportState: () => [kind, values],
    mergeState(state) {
      const [k, vs] = state as [typeof kind, number[]];
      if (k !== null) kind = k;
      for (const x of vs) push(x);
    },
  };
}

function percentileType(name: string): (arg: Type | null) => Type {
  return (arg) => {
    const t = needArg(name, arg);
    if (isNumeric(t) || t.kind === "NULL") return DOUBLE;
    if (t.kind === "INTERVAL" || t.kind === "TIMESTAMP" || t.kind === "ANY") return t;
    return clash(`${name} needs a number, an interval or a timestamp, found ${typeToString(t)}`);
  };
}

function sameAsArg(name: string): (arg: Type | null) => Type {
  return (arg) => needArg(name, arg);
}

export const AGGREGATES: ReadonlyMap<string, AggregateDef> = new Map<string, AggregateDef>([
  ["count", { star: true, resultType: () => LONG, create: countAccumulator }],
  [
    "count_distinct",
    {
      resultType: (arg) => (needArg("count_distinct", arg), LONG),
      create: countDistinctAccumulator,
    },
  ],
  [
    "sum",
    {
      resultType: (arg) => {
        const t = numericArg("sum", arg, true);
        if (t.kind === "INTEGER" || t.kind === "LONG") return LONG;
        return t.kind === "NULL" ? LONG : t;
      },
      create: sumAccumulator,
    },
  ],
  ["min", { resultType: sameAsArg("min"), create: () => extremeAccumulator(-1) }],
  ["max", { resultType: sameAsArg("max"), create: () => extremeAccumulator(1) }],
  [
    "avg",
    { resultType: (arg) => (numericArg("avg", arg, false), DOUBLE), create: avgAccumulator },
  ],
  ["first", { resultType: sameAsArg("first"), create: firstAccumulator }],
  ["last", { resultType: sameAsArg("last"), create: lastAccumulator }],
  [
    "percentile",
    {
      params: {
        names: ["p"],
        check: (p) =>
          p >= 0 && p <= 1
            ? null
            : `percentile takes a fraction between 0 and 1 (0.95 for the 95th), found ${p}`,
      },
      resultType: percentileType("percentile"),
      create: (params) => percentileAccumulator(params?.[0] ?? 0.5),
    },
  ],
  ["median", { resultType: percentileType("median"), create: () => percentileAccumulator(0.5) }],
  [
    "array_agg",
    { resultType: (arg) => arrayOf(needArg("array_agg", arg)), create: arrayAccumulator },
  ],
]);

/** True for the name of an aggregate function, in any case. */
export function isAggregate(name: string): boolean {
  return AGGREGATES.has(name.toLowerCase());
}
