/**
 * Rendering values for results (API.md, "Result formats"): JSON values, CSV cells and fast
 * whole-row writers. Timestamps are ISO 8601 with the numeric offset of the zone, or follow
 * `timestampFormat`; intervals are milliseconds; addresses and networks are strings.
 */

import { compileTimestampFormatter, formatIso } from "./time.ts";
import { formatIp, formatNet } from "./ip.ts";
import {
  Interval,
  IpAddr,
  IpNet,
  type Row,
  Timestamp,
  type TupleValue,
  type Value,
} from "./values.ts";

export interface RenderOptions {
  /** IANA zone timestamps are shown in. */
  readonly timeZone: string;
  /** A Java-style pattern (`yyyy-MM-dd HH:mm:ss.SSS Z`) instead of ISO 8601. */
  readonly timestampFormat?: string | undefined;
}

type TimestampText = (ms: number) => string;

function timestampRenderer(opts: RenderOptions): TimestampText {
  const zone = opts.timeZone;
  if (opts.timestampFormat) {
    const format = compileTimestampFormatter(opts.timestampFormat);
    return (ms) => format(ms, zone);
  }
  return (ms) => formatIso(ms, zone);
}

function jsonValue(v: Value, ts: TimestampText): unknown {
  if (v === null) return null;
  switch (typeof v) {
    case "number":
      return Number.isFinite(v) ? v : null;
    case "boolean":
    case "string":
      return v;
  }
  if (v instanceof Timestamp) return ts(v.ms);
  if (v instanceof Interval) return v.ms;
  if (v instanceof IpAddr) return formatIp(v);
  if (v instanceof IpNet) return formatNet(v);
  if (Array.isArray(v)) return v.map((e) => jsonValue(e, ts));
  const out: Record<string, unknown> = {};
  for (const [k, fv] of Object.entries(v as TupleValue)) out[k] = jsonValue(fv, ts);
  return out;
}

/** The JSON form of a value (for JSON.stringify). */
export function toJsonValue(v: Value, opts: RenderOptions): unknown {
  return jsonValue(v, timestampRenderer(opts));
}

function textValue(v: Value, ts: TimestampText): string | null {
  if (v === null) return null;
  switch (typeof v) {
    case "number":
      return Number.isFinite(v) ? String(v) : null;
    case "boolean":
      return v ? "true" : "false";
    case "string":
      return v;
  }
  if (v instanceof Timestamp) return ts(v.ms);
  if (v instanceof Interval) return String(v.ms);
  if (v instanceof IpAddr) return formatIp(v);
  if (v instanceof IpNet) return formatNet(v);
  return JSON.stringify(jsonValue(v, ts));
}

/** The text of a value for a CSV cell: JSON renderings as text, arrays and tuples as JSON; null → null. */
export function toText(v: Value, opts: RenderOptions): string | null {
  return textValue(v, timestampRenderer(opts));
}

/**
 * A serialiser of one row to a JSON object text, for the result path: keys are quoted once,
 * numbers and booleans written directly, strings through JSON.stringify.
 */
export function makeJsonRowWriter(
  columns: readonly string[],
  opts: RenderOptions,
): (row: Row) => string {
  const ts = timestampRenderer(opts);
  const plainIso = !opts.timestampFormat;
  const prefixes = columns.map((c, i) => (i === 0 ? "{" : ",") + JSON.stringify(c) + ":");
  const n = columns.length;
  if (n === 0) return () => "{}";
  return (row) => {
    let out = "";
    for (let i = 0; i < n; i++) {
      out += prefixes[i];
      const v = row[columns[i]!];
      if (v === null || v === undefined) {
        out += "null";
        continue;
      }
      switch (typeof v) {
        case "string":
          out += JSON.stringify(v);
          continue;
        case "number":
          out += Number.isFinite(v) ? v : "null";
          continue;
        case "boolean":
          out += v ? "true" : "false";
          continue;
      }
      if (v instanceof Timestamp) {
        // ISO text never needs escaping; a user pattern may hold quotes.
        out += plainIso ? '"' + ts(v.ms) + '"' : JSON.stringify(ts(v.ms));
      } else if (v instanceof Interval) out += v.ms;
      else if (v instanceof IpAddr) out += '"' + formatIp(v) + '"';
      else out += JSON.stringify(jsonValue(v, ts));
    }
    return out + "}";
  };
}

function csvQuote(s: string): string {
  return '"' + (s.includes('"') ? s.replaceAll('"', '""') : s) + '"';
}

/** The CSV header line (without the line end): quoted column names separated by `;`. */
export function csvHeader(columns: readonly string[]): string {
  return columns.map(csvQuote).join(";");
}

/**
 * A serialiser of one row to a CSV line (without the line end): `;` separated, text quoted
 * with `"` doubled inside, numbers and booleans bare, null empty.
 */
export function makeCsvRowWriter(
  columns: readonly string[],
  opts: RenderOptions,
): (row: Row) => string {
  const ts = timestampRenderer(opts);
  const n = columns.length;
  return (row) => {
    let out = "";
    for (let i = 0; i < n; i++) {
      if (i > 0) out += ";";
      const v = row[columns[i]!];
      if (v === null || v === undefined) continue;
      switch (typeof v) {
        case "string":
          out += csvQuote(v);
          continue;
        case "number":
          if (Number.isFinite(v)) out += v;
          continue;
        case "boolean":
          out += v ? "true" : "false";
          continue;
      }
      if (v instanceof Interval) out += v.ms;
      else out += csvQuote(textValue(v, ts)!);
    }
    return out;
  };
}
