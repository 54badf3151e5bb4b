/**
 * Timestamps written as text: ISO 8601 with the numeric offset (`formatIso`, results), local
 * time without zone (`formatLocal`, warnings) and Java-style patterns
 * (`compileTimestampFormatter`, the patterns of engine/values/time_pattern.ts).
 */

import { type LocalParts, MINUTE, partsOfLocal, zoneOffsetMillis } from "./time.ts";
import { MONTHS_LONG, MONTHS_SHORT, WEEKDAYS_LONG, WEEKDAYS_SHORT } from "./time_parse.ts";
import { tokenizePattern } from "./time_pattern.ts";

function pad(n: number, width: number): string {
  const s = String(n);
  return s.length >= width ? s : "0".repeat(width - s.length) + s;
}

function formatOffset(offset: number, colon: boolean, zulu: boolean): string {
  if (offset === 0 && zulu) return "Z";
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(Math.round(offset / MINUTE));
  return sign + pad(Math.floor(abs / 60), 2) + (colon ? ":" : "") + pad(abs % 60, 2);
}

/** `2024-05-01T15:00:00.000+02:00`: always the numeric offset, `+00:00` for UTC. */
export function formatIso(ms: number, zone: string): string {
  const offset = zoneOffsetMillis(ms, zone);
  const p = partsOfLocal(ms + offset);
  const year = p.year >= 0 && p.year <= 9999 ? pad(p.year, 4) : String(p.year);
  return `${year}-${pad(p.month, 2)}-${pad(p.day, 2)}T${pad(p.hour, 2)}:${pad(p.minute, 2)}:${
    pad(p.second, 2)
  }.${pad(p.millis, 3)}${formatOffset(offset, true, false)}`;
}

/** Local date-time without zone, `yyyy-MM-ddTHH:mm:ss.SSS` (warnings use it). */
export function formatLocal(ms: number, zone: string): string {
  const iso = formatIso(ms, zone);
  return iso.slice(0, iso.length - 6);
}

type FieldFormatter = (p: LocalParts, offset: number, zone: string) => string;

function fieldFormatter(letter: string, count: number): FieldFormatter {
  switch (letter) {
    case "y":
    case "u":
      return count === 2 ? (p) => pad(((p.year % 100) + 100) % 100, 2) : (p) => pad(p.year, count);
    case "M":
      if (count >= 4) return (p) => MONTHS_LONG[p.month - 1]!;
      if (count === 3) return (p) => MONTHS_SHORT[p.month - 1]!;
      return (p) => pad(p.month, count);
    case "d":
      return (p) => pad(p.day, count);
    case "H":
      return (p) => pad(p.hour, count);
    case "h":
      return (p) => pad(p.hour % 12 === 0 ? 12 : p.hour % 12, count);
    case "m":
      return (p) => pad(p.minute, count);
    case "s":
      return (p) => pad(p.second, count);
    case "S":
      // `S` alone: the count of milliseconds, unpadded (SimpleDateFormat's `.S`: 5 ms is `5`).
      if (count === 1) return (p) => String(p.millis);
      return (p) => {
        const s = pad(p.millis, 3);
        return count <= 3 ? s.slice(0, count) : s + "0".repeat(count - 3);
      };
    case "a":
      return (p) => (p.hour < 12 ? "AM" : "PM");
    case "E":
      return count >= 4
        ? (p) => WEEKDAYS_LONG[p.weekday - 1]!
        : (p) => WEEKDAYS_SHORT[p.weekday - 1]!;
    case "Z":
      return (_p, o) => formatOffset(o, count >= 4, false);
    case "X":
      return count === 1
        ? (_p, o) => formatOffset(o, false, true).slice(0, o === 0 ? 1 : 3)
        : (_p, o) => formatOffset(o, count >= 3, true);
    case "x":
      return (_p, o) => formatOffset(o, count >= 3, false);
    case "z":
    case "V":
      // The zone's name as given (`Europe/Tallinn`, `UTC`); read back by the same letters.
      return (_p, _offset, zone) => zone;
    default:
      throw new Error(`unknown time pattern letter '${letter}'`);
  }
}

/**
 * Compiles a Java-style pattern into a formatter of epoch ms in a zone.
 *
 * @example compileTimestampFormatter("yyyy-MM-dd HH:mm")(0, "UTC") // "1970-01-01 00:00"
 */
export function compileTimestampFormatter(pattern: string): (ms: number, zone: string) => string {
  const parts: FieldFormatter[] = tokenizePattern(pattern).map((t) => {
    if (t.kind === "literal") {
      const text = t.text;
      return () => text;
    }
    return fieldFormatter(t.letter, t.count);
  });
  return (ms, zone) => {
    const offset = zoneOffsetMillis(ms, zone);
    const p = partsOfLocal(ms + offset);
    let out = "";
    for (const f of parts) out += f(p, offset, zone);
    return out;
  };
}
