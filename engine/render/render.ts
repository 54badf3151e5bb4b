/**
 * Rendering values for results (API.md, "Result formats"): JSON values and CSV cells (whole rows
 * are written by engine/render_bytes.ts). Timestamps are ISO 8601 with the numeric offset of the zone, or follow
 * `timestampFormat`; intervals are milliseconds; addresses and networks are strings.
 */

import { compileTimestampFormatter, formatIso } from "../values/time_format.ts";
import { formatIp, formatNet } from "../values/ip.ts";
import {
  Interval,
  IpAddr,
  IpNet,
  Timestamp,
  type TupleValue,
  type Value,
} from "../values/values.ts";

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
