/**
 * Casts: INTEGER(x) LONG(x) DOUBLE(x) STRING(x) BOOLEAN(x) TIMESTAMP(s [, format]). A cast that
 * fails gives null, never an error: they are how scripts clean up untidy data.
 */

import { timestampMatcher } from "../pattern/timestamp_matcher.ts";
import { inferYear } from "../pattern/year_inference.ts";
import { parseTimestamp } from "../values/time_parse.ts";
import { truncatedMillis } from "../values/time.ts";
import { checkTimePattern, compileTimestampParser } from "../values/time_pattern.ts";
import { toText } from "../render/render.ts";
import { scalar } from "../values/types.ts";
import { Interval, Timestamp, type Value } from "../values/values.ts";
import { type FunctionDef, returns } from "./function_def.ts";

const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
/** A hexadecimal whole number, `0x1eba8` (INTEGER and LONG read it; DOUBLE does not). */
const HEX_TEXT = /^([+-]?)0[xX]([0-9a-fA-F]{1,16})$/;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** A number from a value, or null: numbers, numeric text, booleans as 0/1, times as ms. */
function toNumber(v: Value): number | null {
  switch (typeof v) {
    case "number":
      return Number.isFinite(v) ? v : null;
    case "boolean":
      return v ? 1 : 0;
    case "string": {
      const t = v.trim();
      return NUMBER_TEXT.test(t) ? Number(t) : null;
    }
  }
  if (v instanceof Timestamp || v instanceof Interval) return v.ms;
  return null;
}

function toWhole(v: Value, min: number, max: number): number | null {
  const hex = typeof v === "string" ? HEX_TEXT.exec(v.trim()) : null;
  if (hex !== null) {
    const n = parseInt(hex[2]!, 16) * (hex[1] === "-" ? -1 : 1);
    return n >= min && n <= max ? n + 0 : null;
  }
  const n = toNumber(v);
  if (n === null) return null;
  const whole = Math.trunc(n);
  return whole >= min && whole <= max ? whole + 0 : null;
}

function toBoolean(v: Value): boolean | null {
  switch (typeof v) {
    case "boolean":
      return v;
    case "number":
      return Number.isNaN(v) ? null : v !== 0;
    case "string": {
      const t = v.trim().toLowerCase();
      if (t === "true" || t === "1" || t === "yes") return true;
      if (t === "false" || t === "0" || t === "no") return false;
      return null;
    }
  }
  return null;
}

function cast(convert: (v: Value) => Value): FunctionDef["compile"] {
  return ([f]) => (row) => {
    const v = f!(row);
    return v === null ? null : convert(v);
  };
}

export const CAST_FUNCTIONS: readonly FunctionDef[] = [
  {
    name: "integer",
    signature: "INTEGER(x)",
    params: ["ANY"],
    result: returns(scalar("INTEGER")),
    compile: cast((v) => toWhole(v, INT32_MIN, INT32_MAX)),
  },
  {
    name: "long",
    signature: "LONG(x)",
    params: ["ANY"],
    result: returns(scalar("LONG")),
    compile: cast((v) => toWhole(v, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)),
  },
  {
    name: "double",
    signature: "DOUBLE(x)",
    params: ["ANY"],
    result: returns(scalar("DOUBLE")),
    compile: cast(toNumber),
  },
  {
    name: "string",
    signature: "STRING(x)",
    params: ["ANY"],
    result: returns(scalar("STRING")),
    compile: (fns, _args, ctx) => {
      const opts = { timeZone: ctx.timeZone };
      return cast((v) => (typeof v === "string" ? v : toText(v, opts)))(fns, _args, ctx);
    },
  },
  {
    name: "boolean",
    signature: "BOOLEAN(x)",
    params: ["ANY"],
    result: returns(scalar("BOOLEAN")),
    compile: cast(toBoolean),
  },
  {
    name: "timestamp",
    signature: "TIMESTAMP(s [, format STRING]), TIMESTAMP(n, 's' | 'ms' | 'us' | 'ns')",
    params: ["ANY", "STRING"],
    optional: 1,
    result: returns(scalar("TIMESTAMP")),
    compile: (fns, args, ctx) => {
      const zone = ctx.timeZone;
      const [fv, fformat] = fns;
      const constFormat = args[1]?.constant?.value;
      if (typeof constFormat === "string" && epochUnit(constFormat) !== null) {
        // A number of seconds (ms, us, ns) since the epoch, or its text.
        const unit = epochUnit(constFormat)!;
        return (row) => {
          const v = fv!(row);
          const n = typeof v === "number"
            ? v
            : typeof v === "string" && v.trim() !== ""
            ? Number(v)
            : NaN;
          // Truncated to the millisecond, as every reader of times does (truncatedMillis).
          return Number.isFinite(n) ? new Timestamp(truncatedMillis(n, unit)) : null;
        };
      }
      if (typeof constFormat === "string") {
        const problem = checkTimePattern(constFormat);
        if (problem !== null) ctx.fail(problem, 1);
      }
      const fixed = typeof constFormat === "string"
        ? yearlessParser(constFormat, ctx.now) ?? compileTimestampParser(constFormat)
        : null;
      let lastFormat = "";
      let last: ((text: string, zone: string) => number | null) | null = null;
      return (row) => {
        const v = fv!(row);
        if (v === null) return null;
        if (v instanceof Timestamp) return v;
        if (typeof v === "number") {
          return Number.isFinite(v) ? new Timestamp(truncatedMillis(v, 1)) : null;
        }
        if (typeof v !== "string") return null;
        let parse = fixed;
        if (!parse && fformat) {
          const format = fformat(row);
          if (typeof format !== "string" || checkTimePattern(format) !== null) return null;
          if (format !== lastFormat || !last) {
            last = compileTimestampParser(format);
            lastFormat = format;
          }
          parse = last;
        }
        const ms = parse ? parse(v, zone) : parseTimestamp(v, zone);
        return ms === null ? null : new Timestamp(ms);
      };
    },
  },
];

/** Milliseconds per unit of an epoch number (`TIMESTAMP(n, 's')`), or null for a time pattern. */
function epochUnit(format: string): number | null {
  switch (format) {
    case "s":
      return 1000;
    case "ms":
      return 1;
    case "us":
      return 1e-3;
    case "ns":
      return 1e-6;
    default:
      return null;
  }
}

/**
 * For a format without a year (`MMM d HH:mm:ss`), a parser that takes the year as PARSE does
 * for a record not read from a file (pattern/year_inference.ts): that of `now`, or the year
 * before when that would put the time more than a day after `now`. Null for other formats.
 */
function yearlessParser(
  format: string,
  now: number,
): ((text: string, zone: string) => number | null) | null {
  if (format.trim() === "") return null;
  const { parseInYear } = timestampMatcher(format);
  if (parseInYear === null) return null;
  const clock = { pathTime: null, modified: now, version: 0 };
  return (text, zone) => inferYear((year) => parseInYear(text, year, zone), clock, zone);
}
