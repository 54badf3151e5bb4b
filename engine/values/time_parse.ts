/**
 * Timestamps of logs read from text without a pattern: ISO 8601 (`parseIso8601`), the access-log
 * form (`parseHttpDate`), and `parseTimestamp`, which tries the forms logs use. Text without an
 * offset is local time of the given zone (engine/values/time.ts).
 */

import { DAY, daysFromCivil, HOUR, localToInstant, MINUTE } from "./time.ts";
import { instantInNamedZone } from "./time_zones.ts";

export function digitAt(text: string, i: number): number {
  const c = text.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : -1;
}

/** Value of `n` digits at `i`, or -1. */
export function digits(text: string, i: number, n: number): number {
  if (i + n > text.length) return -1;
  let v = 0;
  for (let k = 0; k < n; k++) {
    const d = digitAt(text, i + k);
    if (d < 0) return -1;
    v = v * 10 + d;
  }
  return v;
}

export function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Parses a numeric zone offset `Z`, `+02`, `+0200`, `+02:00` at `i` up to the end of the text.
 * Returns the offset in ms, or null when the rest is not an offset.
 */
function parseOffsetRest(text: string, i: number): number | null {
  const c = text[i];
  if (c === "Z" || c === "z") return i + 1 === text.length ? 0 : null;
  if (c !== "+" && c !== "-") return null;
  const sign = c === "-" ? -1 : 1;
  const h = digits(text, i + 1, 2);
  if (h < 0) return null;
  let j = i + 3;
  let m = 0;
  if (j < text.length) {
    if (text[j] === ":") j++;
    m = digits(text, j, 2);
    if (m < 0) return null;
    j += 2;
  }
  if (j !== text.length || h > 23 || m > 59) return null;
  return sign * (h * HOUR + m * MINUTE);
}

/**
 * Parses `2024-05-01`, `2024-05-01 13:00`, `2024-05-01 13:00:00`, `2024-05-01T13:00:00.250Z`,
 * `2024-05-01 13:00:00 +0200`, `...+02:00`, `... CEST`, `... Europe/Tallinn`; without an offset
 * or a zone the local time of `zone`.
 * Returns epoch ms or null.
 */
export function parseTimestamp(text: string, zone: string): number | null {
  let s = text;
  if (s.length > 0 && (s.charCodeAt(0) <= 32 || s.charCodeAt(s.length - 1) <= 32)) s = s.trim();
  const year = digits(s, 0, 4);
  if (year < 0 || s[4] !== "-") return null;
  const month = digits(s, 5, 2);
  if (month < 0 || s[7] !== "-") return null;
  const day = digits(s, 8, 2);
  if (day < 0 || !validDate(year, month, day)) return null;
  let local = daysFromCivil(year, month, day) * DAY;
  let i = 10;
  if (i < s.length && (s[i] === "T" || s[i] === "t" || s[i] === " ")) {
    const hour = digits(s, i + 1, 2);
    if (hour >= 0 && s[i + 3] === ":") {
      const minute = digits(s, i + 4, 2);
      if (minute < 0 || hour > 23 || minute > 59) return null;
      local += hour * HOUR + minute * MINUTE;
      i += 6;
      if (s[i] === ":") {
        const second = digits(s, i + 1, 2);
        if (second < 0 || second > 60) return null;
        local += Math.min(second, 59) * 1000;
        i += 3;
        if (s[i] === "." || s[i] === ",") {
          i++;
          let frac = 0;
          let scale = 100;
          const start = i;
          while (i < s.length) {
            const d = digitAt(s, i);
            if (d < 0) break;
            frac += d * scale;
            scale /= 10;
            i++;
          }
          if (i === start) return null;
          local += Math.floor(frac + 1e-9);
        }
      }
    }
  }
  if (i === s.length) return localToInstant(local, zone);
  if (s[i] === " ") i++;
  const offset = parseOffsetRest(s, i);
  if (offset === null) {
    // A zone by name: `CEST`, `Europe/Tallinn` (time_zones.ts).
    const c = s.charCodeAt(i) | 32;
    return c >= 97 && c <= 122 ? instantInNamedZone(local, s.slice(i)) : null;
  }
  return local - offset;
}

/** ISO 8601 date-times (`2024-05-01T13:00:00.250+02:00`, or a space for the `T`). */
export function parseIso8601(text: string, zone: string): number | null {
  return parseTimestamp(text, zone);
}

export const MONTHS_SHORT = [
  "Jan",
  "Feb",
  "Mar",
  "Apr",
  "May",
  "Jun",
  "Jul",
  "Aug",
  "Sep",
  "Oct",
  "Nov",
  "Dec",
];
export const MONTHS_LONG = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
export const WEEKDAYS_SHORT = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
export const WEEKDAYS_LONG = [
  "Monday",
  "Tuesday",
  "Wednesday",
  "Thursday",
  "Friday",
  "Saturday",
  "Sunday",
];

/** Month number 1..12 of a three-letter English abbreviation at `i` (any case), or -1. */
export function monthAt(text: string, i: number): number {
  if (i + 3 > text.length) return -1;
  const a = text.charCodeAt(i) | 32,
    b = text.charCodeAt(i + 1) | 32,
    c = text.charCodeAt(i + 2) | 32;
  for (let m = 0; m < 12; m++) {
    const n = MONTHS_SHORT[m];
    if ((n!.charCodeAt(0) | 32) === a && n!.charCodeAt(1) === b && n!.charCodeAt(2) === c) {
      return m + 1;
    }
  }
  return -1;
}

/**
 * parseHttpDate over the 26 bytes at `i` of `b`, whose shape the caller checked: digits,
 * letters and a sign where `dd/aaa/dddd:dd:dd:dd sdddd` has them (PARSE's byte scanner). No text
 * is made: a scan reads a time of this form on every line of an access log.
 */
export function httpDateBytesMs(b: Uint8Array, i: number): number | null {
  const two = (k: number) => (b[i + k]! - 48) * 10 + b[i + k + 1]! - 48;
  const day = two(0);
  const month = monthOfBytes(b[i + 3]!, b[i + 4]!, b[i + 5]!);
  const year = two(7) * 100 + two(9);
  const hour = two(12);
  const minute = two(15);
  const second = two(18);
  const offsetHours = two(22);
  const offsetMinutes = two(24);
  if (
    month < 0 || hour > 23 || minute > 59 || second > 60 || offsetHours > 23 ||
    offsetMinutes > 59
  ) return null;
  // The lines of a log share their day: its number is the one of the call before.
  const dayKey = (year * 16 + month) * 100 + day;
  if (dayKey !== lastDay.key) {
    if (!validDate(year, month, day)) return null;
    lastDay.key = dayKey;
    lastDay.days = daysFromCivil(year, month, day);
  }
  const offset = (b[i + 21] === 0x2d ? -1 : 1) * (offsetHours * HOUR + offsetMinutes * MINUTE);
  return lastDay.days * DAY + hour * HOUR + minute * MINUTE + Math.min(second, 59) * 1000 -
    offset;
}

/** The valid day httpDateBytesMs read last: its key (year, month, day) and days since 1970. */
const lastDay = { key: -1, days: 0 };

/** monthAt of three bytes (any case), or -1. */
function monthOfBytes(a: number, b: number, c: number): number {
  switch (((a | 32) << 16) | ((b | 32) << 8) | (c | 32)) {
    case 0x6a616e: // jan
      return 1;
    case 0x666562:
      return 2;
    case 0x6d6172:
      return 3;
    case 0x617072:
      return 4;
    case 0x6d6179:
      return 5;
    case 0x6a756e:
      return 6;
    case 0x6a756c:
      return 7;
    case 0x617567:
      return 8;
    case 0x736570:
      return 9;
    case 0x6f6374:
      return 10;
    case 0x6e6f76:
      return 11;
    case 0x646563:
      return 12;
    default:
      return -1;
  }
}

/** Parses the access-log form `10/Oct/2024:13:55:36 +0000`. Returns epoch ms or null. */
export function parseHttpDate(text: string): number | null {
  if (text.length !== 26 || text[2] !== "/" || text[6] !== "/" || text[11] !== ":") return null;
  const day = digits(text, 0, 2);
  const month = monthAt(text, 3);
  const year = digits(text, 7, 4);
  const hour = digits(text, 12, 2);
  const minute = digits(text, 15, 2);
  const second = digits(text, 18, 2);
  if (
    day < 0 || month < 0 || year < 0 || hour < 0 || minute < 0 || second < 0 ||
    text[14] !== ":" || text[17] !== ":" || text[20] !== " " || !validDate(year, month, day) ||
    hour > 23 || minute > 59 || second > 60
  ) return null;
  const offset = parseOffsetRest(text, 21);
  if (offset === null) return null;
  return daysFromCivil(year, month, day) * DAY + hour * HOUR + minute * MINUTE +
    Math.min(second, 59) * 1000 - offset;
}
