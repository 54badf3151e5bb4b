/** Time functions: now() T(s) time_trunc(ts, interval) format_time(ts, pattern [, zone]) hour(ts) day(ts). */

import { ambiguousZoneIn } from "../values/time_zones.ts";
import { fromLocalParts, isValidZone, localParts, truncate } from "../values/time.ts";
import { parseInterval } from "../values/interval.ts";
import { compileTimestampFormatter } from "../values/time_format.ts";
import { parseTimestamp } from "../values/time_parse.ts";
import { checkTimePattern } from "../values/time_pattern.ts";
import { scalar } from "../values/types.ts";
import { type Interval, Timestamp, type Value } from "../values/values.ts";
import {
  type FunctionContext,
  type FunctionDef,
  returns,
  strict1,
  strict2,
} from "./function_def.ts";

const TIMESTAMP = scalar("TIMESTAMP");
/** The calendar units time_trunc takes by name (their length varies). */
const CALENDAR_UNITS = ["month", "quarter", "year"];
const INTEGER = scalar("INTEGER");
const STRING = scalar("STRING");

/** A string or a timestamp as a timestamp; null when the string is not one. */
function toTimestamp(v: Value, zone: string): Timestamp | null {
  if (v instanceof Timestamp) return v;
  if (typeof v !== "string") return null;
  const ms = parseTimestamp(v, zone);
  return ms === null ? null : new Timestamp(ms);
}

/** The formatter of a pattern, checked: a bad constant pattern is reported at the argument. */
function formatterOf(pattern: string, ctx: FunctionContext, argIndex: number) {
  const problem = checkTimePattern(pattern);
  if (problem !== null) ctx.fail(problem, argIndex);
  return compileTimestampFormatter(pattern);
}

export const TIME_FUNCTIONS: readonly FunctionDef[] = [
  {
    name: "now",
    signature: "now()",
    params: [],
    result: returns(TIMESTAMP),
    compile: (_fns, _args, ctx) => {
      const now = new Timestamp(ctx.now);
      return () => now;
    },
  },
  {
    name: "t",
    signature: "T(s STRING)",
    params: ["ANY"],
    result: returns(TIMESTAMP),
    compile: ([fs], [arg], ctx) => {
      const zone = ctx.timeZone;
      if (arg!.constant && arg!.constant.value !== null) {
        const ts = toTimestamp(arg!.constant.value, zone);
        if (ts === null) {
          const text = arg!.constant.value;
          const ambiguous = typeof text === "string" ? ambiguousZoneIn(text) : null;
          ctx.fail(
            `${JSON.stringify(text)} is not a timestamp; ${
              ambiguous ??
                "expected e.g. '2024-05-01 13:00:00', '2024-05-01T13:00:00.250Z', " +
                  "'2024-05-01 13:00:00 +0200' or '2024-05-01 13:00:00 Europe/Tallinn'"
            }`,
            0,
          );
        }
        return () => ts;
      }
      return (row) => {
        const v = fs!(row);
        return v === null ? null : toTimestamp(v, zone);
      };
    },
  },
  {
    name: "time_trunc",
    signature: "time_trunc(ts TIMESTAMP, size INTERVAL or 'month', 'quarter', 'year')",
    params: ["TIMESTAMP", "ANY"],
    result: ([, size], ctx) => {
      const c = size!.constant?.value;
      if (typeof c === "string" && CALENDAR_UNITS.includes(c.toLowerCase())) return TIMESTAMP;
      if (typeof c === "string" && parseInterval(c).ok) return TIMESTAMP;
      if (size!.type.kind !== "INTERVAL" && size!.type.kind !== "NULL") {
        ctx.fail(
          `the second argument of time_trunc must be INTERVAL (1 hour, 1 day) or one of ` +
            `'month', 'quarter', 'year', found ${
              typeof c === "string" ? JSON.stringify(c) : size!.type.kind
            }`,
          1,
        );
      }
      return TIMESTAMP;
    },
    compile: (fns, args, ctx) => {
      const zone = ctx.timeZone;
      const unit = args[1]!.constant?.value;
      if (typeof unit === "string" && !CALENDAR_UNITS.includes(unit.toLowerCase())) {
        // An interval written as text: '15 min'.
        const parsed = parseInterval(unit);
        const ms = parsed.ok ? parsed.millis : 0;
        if (ms <= 0) ctx.fail(`time_trunc needs a positive interval`, 1);
        return strict1((ts: Timestamp) => new Timestamp(truncate(ts.ms, ms, zone)))(fns, args, ctx);
      }
      if (typeof unit === "string") {
        // Calendar units, in the query's time zone: the first instant of the month,
        // quarter or year.
        const months = { month: 1, quarter: 3, year: 12 }[unit.toLowerCase()]!;
        return strict1((ts: Timestamp) => {
          const p = localParts(ts.ms, zone);
          const month = p.month - ((p.month - 1) % months);
          return new Timestamp(fromLocalParts({ year: p.year, month, day: 1 }, zone));
        })(fns, args, ctx);
      }
      const size = args[1]!.constant?.value as Interval | null | undefined;
      if (size && size.ms <= 0) ctx.fail(`time_trunc needs a positive interval`, 1);
      return strict2((ts: Timestamp, iv: Interval) =>
        iv.ms > 0 ? new Timestamp(truncate(ts.ms, iv.ms, zone)) : null
      )(fns, args, ctx);
    },
  },
  {
    name: "format_time",
    signature: "format_time(ts TIMESTAMP, pattern STRING [, zone STRING])",
    params: ["TIMESTAMP", "STRING", "STRING"],
    optional: 1,
    result: returns(STRING),
    compile: (fns, args, ctx) => {
      const [fts, fpattern] = fns;
      const fzone = fns[2] ?? (() => ctx.timeZone);
      const constPattern = args[1]!.constant?.value;
      const fixed = typeof constPattern === "string" ? formatterOf(constPattern, ctx, 1) : null;
      const constZone = args[2]?.constant?.value;
      if (typeof constZone === "string" && !isValidZone(constZone)) {
        ctx.fail(`unknown time zone '${constZone}'`, 2);
      }
      let lastPattern = "";
      let last = fixed;
      return (row) => {
        const ts = fts!(row) as Timestamp | null;
        if (ts === null) return null;
        const zone = fzone(row) as string | null;
        if (zone === null || (zone !== constZone && !isValidZone(zone))) return null;
        let format = fixed;
        if (!format) {
          const pattern = fpattern!(row) as string | null;
          if (pattern === null || checkTimePattern(pattern) !== null) return null;
          if (pattern !== lastPattern || !last) {
            last = compileTimestampFormatter(pattern);
            lastPattern = pattern;
          }
          format = last;
        }
        return format(ts.ms, zone);
      };
    },
  },
  {
    name: "hour",
    signature: "hour(ts TIMESTAMP)",
    params: ["TIMESTAMP"],
    result: returns(INTEGER),
    compile: (fns, args, ctx) =>
      strict1((ts: Timestamp) => localParts(ts.ms, ctx.timeZone).hour)(fns, args, ctx),
  },
  {
    name: "day",
    signature: "day(ts TIMESTAMP)",
    params: ["TIMESTAMP"],
    result: returns(INTEGER),
    compile: (fns, args, ctx) =>
      strict1((ts: Timestamp) => localParts(ts.ms, ctx.timeZone).day)(fns, args, ctx),
  },
];
