/**
 * Time: parsing, formatting and zone arithmetic on epoch milliseconds. Hot paths (parsing log
 * timestamps, rendering results) never build a `Date`: zone offsets are computed once per zone
 * and quarter hour with `Intl.DateTimeFormat` and cached, and calendar fields come from
 * integer arithmetic on days since the epoch.
 */

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** Offsets change on quarter hours in every zone in use (Chatham, Lord Howe, India, Nepal). */
const BUCKET = 15 * MINUTE;
const MAX_CACHED_BUCKETS = 200_000;

export interface LocalParts {
  readonly year: number;
  /** 1..12 */
  readonly month: number;
  /** 1..31 */
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly millis: number;
  /** ISO weekday: 1 = Monday ... 7 = Sunday. */
  readonly weekday: number;
}

interface ZoneCache {
  readonly format: Intl.DateTimeFormat | null;
  readonly buckets: Map<number, number>;
  lastBucket: number;
  lastOffset: number;
}

const zones = new Map<string, ZoneCache>();
const UTC_NAMES = new Set(["UTC", "Etc/UTC", "GMT", "Etc/GMT", "Z", "utc"]);

function zoneCache(zone: string): ZoneCache {
  let cache = zones.get(zone);
  if (!cache) {
    const format = UTC_NAMES.has(zone) ? null : new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
      era: "short",
    });
    cache = { format, buckets: new Map(), lastBucket: NaN, lastOffset: 0 };
    zones.set(zone, cache);
  }
  return cache;
}

/**
 * True when `zone` is an IANA zone name (or UTC) that Intl knows: the one check of every zone a
 * setting, a user, a store definition, a request or a query names.
 */
export function isValidZone(zone: string): boolean {
  if (UTC_NAMES.has(zone)) return true;
  if (zone.length > 64) return false; // no IANA name is so long; spares Intl a hostile string
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function computeOffset(format: Intl.DateTimeFormat, ms: number): number {
  let year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0, bc = false;
  for (const p of format.formatToParts(ms)) {
    switch (p.type) {
      case "year":
        year = Number(p.value);
        break;
      case "month":
        month = Number(p.value);
        break;
      case "day":
        day = Number(p.value);
        break;
      case "hour":
        hour = Number(p.value);
        break;
      case "minute":
        minute = Number(p.value);
        break;
      case "second":
        second = Number(p.value);
        break;
      case "era":
        bc = p.value.startsWith("B");
        break;
    }
  }
  if (bc) year = 1 - year;
  const local = daysFromCivil(year, month, day) * DAY + hour * HOUR + minute * MINUTE +
    second * 1000;
  const whole = Math.floor(ms / 1000) * 1000;
  return local - whole;
}

/** Offset of `zone` from UTC at the instant `ms`, in milliseconds (east positive). */
export function zoneOffsetMillis(ms: number, zone: string): number {
  const cache = zoneCache(zone);
  if (cache.format === null) return 0;
  const bucket = Math.floor(ms / BUCKET);
  if (bucket === cache.lastBucket) return cache.lastOffset;
  let offset = cache.buckets.get(bucket);
  if (offset === undefined) {
    offset = computeOffset(cache.format, bucket * BUCKET);
    if (cache.buckets.size >= MAX_CACHED_BUCKETS) cache.buckets.clear();
    cache.buckets.set(bucket, offset);
  }
  cache.lastBucket = bucket;
  cache.lastOffset = offset;
  return offset;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) -
      Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** Calendar fields of a local (zone-shifted) millisecond count. */
function partsOfLocal(local: number): LocalParts {
  const days = Math.floor(local / DAY);
  let rest = local - days * DAY;
  const { year, month, day } = civilFromDays(days);
  const hour = Math.floor(rest / HOUR);
  rest -= hour * HOUR;
  const minute = Math.floor(rest / MINUTE);
  rest -= minute * MINUTE;
  const second = Math.floor(rest / 1000);
  const millis = rest - second * 1000;
  const weekday = ((((days + 3) % 7) + 7) % 7) + 1;
  return { year, month, day, hour, minute, second, millis, weekday };
}

/** Calendar fields of the instant `ms` as seen in `zone`. */
export function localParts(ms: number, zone: string): LocalParts {
  return partsOfLocal(ms + zoneOffsetMillis(ms, zone));
}

/**
 * The instant of a local wall-clock time in `zone`, the milliseconds of the local fields as if
 * they were UTC. In a gap (spring forward) the time moves forward by the gap; in an overlap
 * (fall back) the earlier instant wins, as java.time does.
 */
export function localToInstant(local: number, zone: string): number {
  const cache = zoneCache(zone);
  if (cache.format === null) return local;
  const before = zoneOffsetMillis(local - DAY, zone);
  const after = zoneOffsetMillis(local + DAY, zone);
  const t1 = local - before;
  const t1Valid = zoneOffsetMillis(t1, zone) === before;
  if (before === after) {
    if (t1Valid) return t1;
  } else {
    const t2 = local - after;
    const t2Valid = zoneOffsetMillis(t2, zone) === after;
    if (t1Valid && t2Valid) return Math.min(t1, t2);
    if (t1Valid) return t1;
    if (t2Valid) return t2;
    return t1;
  }
  // Offsets that differ without a transition within a day (not seen in practice): iterate.
  const o = zoneOffsetMillis(local - zoneOffsetMillis(local, zone), zone);
  return local - o;
}

export interface LocalFields {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour?: number;
  readonly minute?: number;
  readonly second?: number;
  readonly millis?: number;
}

/** The instant of local calendar fields in `zone` (see localToInstant for gaps and overlaps). */
export function fromLocalParts(parts: LocalFields, zone: string): number {
  const local = daysFromCivil(parts.year, parts.month, parts.day) * DAY +
    (parts.hour ?? 0) * HOUR + (parts.minute ?? 0) * MINUTE + (parts.second ?? 0) * 1000 +
    (parts.millis ?? 0);
  return localToInstant(local, zone);
}

/**
 * time_trunc: the start of the interval that holds `ms`. Intervals of a day or more count in
 * the zone's local time (days start at local midnight, weeks on Monday); shorter ones on the
 * epoch.
 */
export function truncate(ms: number, intervalMs: number, zone: string): number {
  if (!(intervalMs > 0)) return ms;
  if (intervalMs < DAY) return Math.floor(ms / intervalMs) * intervalMs;
  const local = ms + zoneOffsetMillis(ms, zone);
  // 1970-01-05 was a Monday: weeks align on it.
  const anchor = intervalMs % (7 * DAY) === 0 ? 4 * DAY : 0;
  const start = Math.floor((local - anchor) / intervalMs) * intervalMs + anchor;
  return localToInstant(start, zone);
}

// ---------------------------------------------------------------------------------------------
// Parsing

function digitAt(text: string, i: number): number {
  const c = text.charCodeAt(i) - 48;
  return c >= 0 && c <= 9 ? c : -1;
}

/** Value of `n` digits at `i`, or -1. */
function digits(text: string, i: number, n: number): number {
  if (i + n > text.length) return -1;
  let v = 0;
  for (let k = 0; k < n; k++) {
    const d = digitAt(text, i + k);
    if (d < 0) return -1;
    v = v * 10 + d;
  }
  return v;
}

function validDate(year: number, month: number, day: number): boolean {
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
 * `2024-05-01 13:00:00 +0200`, `...+02:00`; without an offset the local time of `zone`.
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
  if (offset === null) return null;
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
const MONTHS_LONG = [
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
const WEEKDAYS_SHORT = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const WEEKDAYS_LONG = [
  "Monday",
  "Tuesday",
  "Wednesday",
  "Thursday",
  "Friday",
  "Saturday",
  "Sunday",
];

/** Month number 1..12 of a three-letter English abbreviation at `i` (any case), or -1. */
function monthAt(text: string, i: number): number {
  if (i + 3 > text.length) return -1;
  const a = text.charCodeAt(i) | 32,
    b = text.charCodeAt(i + 1) | 32,
    c = text.charCodeAt(i + 2) | 32;
  for (let m = 0; m < 12; m++) {
    const n = MONTHS_SHORT[m]!;
    if ((n.charCodeAt(0) | 32) === a && n.charCodeAt(1) === b && n.charCodeAt(2) === c) {
      return m + 1;
    }
  }
  return -1;
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

// ---------------------------------------------------------------------------------------------
// Java-style patterns: yyyy yy MM M MMM MMMM dd d HH H hh h mm m ss s SSS a Z X XX XXX EEE EEEE,
// 'quoted text', '' for a quote.

type PatternToken =
  | { readonly kind: "literal"; readonly text: string }
  | { readonly kind: "field"; readonly letter: string; readonly count: number };

const PATTERN_LETTERS = "yMdHhmsSaZXxEu";

function tokenizePattern(pattern: string): PatternToken[] {
  const out: PatternToken[] = [];
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "'") {
      if (pattern[i + 1] === "'") {
        out.push({ kind: "literal", text: "'" });
        i += 2;
        continue;
      }
      let j = i + 1;
      let text = "";
      while (j < pattern.length) {
        if (pattern[j] === "'") {
          if (pattern[j + 1] === "'") {
            text += "'";
            j += 2;
            continue;
          }
          break;
        }
        text += pattern[j++];
      }
      out.push({ kind: "literal", text });
      i = j + 1;
    } else if (PATTERN_LETTERS.includes(c)) {
      let j = i;
      while (pattern[j] === c) j++;
      out.push({ kind: "field", letter: c, count: j - i });
      i = j;
    } else if (/[A-Za-z]/.test(c)) {
      throw new Error(
        `unknown letter '${c}' in time pattern '${pattern}'; put literal text in quotes, e.g. 'T'`,
      );
    } else {
      out.push({ kind: "literal", text: c });
      i++;
    }
  }
  return out;
}

/** Checks a time pattern; returns an error message or null. */
export function checkTimePattern(pattern: string): string | null {
  try {
    tokenizePattern(pattern);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

interface ParseState {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millis: number;
  pm: number; // -1 unset, 0 am, 1 pm
  offset: number | null;
}

type FieldParser = (text: string, i: number, st: ParseState) => number; // new index or -1

function readNumber(text: string, i: number, min: number, max: number): [number, number] {
  let v = 0;
  let j = i;
  while (j < text.length && j - i < max) {
    const d = digitAt(text, j);
    if (d < 0) break;
    v = v * 10 + d;
    j++;
  }
  return j - i < min ? [-1, -1] : [v, j];
}

function numberField(count: number, set: (st: ParseState, v: number) => void): FieldParser {
  return (text, i, st) => {
    const [v, j] = readNumber(text, i, count, count >= 3 ? count : Math.max(count, 2));
    if (j < 0) return -1;
    set(st, v);
    return j;
  };
}

function offsetParser(text: string, i: number, st: ParseState): number {
  const c = text[i];
  if (c === "Z" || c === "z") {
    st.offset = 0;
    return i + 1;
  }
  if (c !== "+" && c !== "-") return -1;
  const h = digits(text, i + 1, 2);
  if (h < 0) return -1;
  let j = i + 3;
  let m = 0;
  if (text[j] === ":") j++;
  const mm = digits(text, j, 2);
  if (mm >= 0) {
    m = mm;
    j += 2;
  } else if (text[j - 1] === ":") return -1;
  st.offset = (c === "-" ? -1 : 1) * (h * HOUR + m * MINUTE);
  return j;
}

function fieldParser(letter: string, count: number): FieldParser {
  switch (letter) {
    case "y":
    case "u":
      if (count === 2) {
        return numberField(2, (st, v) => st.year = 2000 + v);
      }
      return (text, i, st) => {
        const [v, j] = readNumber(text, i, 4, 4);
        if (j < 0) return -1;
        st.year = v;
        return j;
      };
    case "M":
      if (count >= 3) {
        return (text, i, st) => {
          const m = monthAt(text, i);
          if (m < 0) return -1;
          if (count >= 4) {
            const name = MONTHS_LONG[m - 1]!;
            if (text.slice(i, i + name.length).toLowerCase() === name.toLowerCase()) {
              st.month = m;
              return i + name.length;
            }
          }
          st.month = m;
          return i + 3;
        };
      }
      return numberField(count, (st, v) => st.month = v);
    case "d":
      return numberField(count, (st, v) => st.day = v);
    case "H":
      return numberField(count, (st, v) => st.hour = v);
    case "h":
      return numberField(count, (st, v) => st.hour = v % 12);
    case "m":
      return numberField(count, (st, v) => st.minute = v);
    case "s":
      return numberField(count, (st, v) => st.second = v);
    case "S":
      return (text, i, st) => {
        const [v, j] = readNumber(text, i, count, count);
        if (j < 0) return -1;
        st.millis = Math.floor(v * Math.pow(10, 3 - count));
        return j;
      };
    case "a":
      return (text, i, st) => {
        const t = text.slice(i, i + 2).toUpperCase();
        if (t !== "AM" && t !== "PM") return -1;
        st.pm = t === "PM" ? 1 : 0;
        return i + 2;
      };
    case "E":
      return (text, i) => {
        const names = count >= 4 ? WEEKDAYS_LONG : WEEKDAYS_SHORT;
        for (const n of names) {
          if (text.slice(i, i + n.length).toLowerCase() === n.toLowerCase()) return i + n.length;
        }
        return -1;
      };
    case "Z":
    case "X":
    case "x":
      return offsetParser;
    default:
      throw new Error(`unknown time pattern letter '${letter}'`);
  }
}

/**
 * Compiles a Java-style pattern (`yyyy-MM-dd HH:mm:ss.SSS Z`) into a parser; text without an
 * offset field is local time of the given zone. Throws an Error for an unknown letter (check
 * user patterns with checkTimePattern first).
 */
export function compileTimestampParser(
  pattern: string,
): (text: string, zone: string) => number | null {
  const steps: FieldParser[] = tokenizePattern(pattern).map((t) => {
    if (t.kind === "literal") {
      const lit = t.text;
      return (text, i) => (text.startsWith(lit, i) ? i + lit.length : -1);
    }
    return fieldParser(t.letter, t.count);
  });
  return (text, zone) => {
    const st: ParseState = {
      year: 1970,
      month: 1,
      day: 1,
      hour: 0,
      minute: 0,
      second: 0,
      millis: 0,
      pm: -1,
      offset: null,
    };
    let i = 0;
    for (const step of steps) {
      i = step(text, i, st);
      if (i < 0) return null;
    }
    if (i !== text.length && text.slice(i).trim() !== "") return null;
    if (st.pm === 1) st.hour += 12;
    if (
      !validDate(st.year, st.month, st.day) || st.hour > 23 || st.minute > 59 || st.second > 60
    ) return null;
    const local = daysFromCivil(st.year, st.month, st.day) * DAY + st.hour * HOUR +
      st.minute * MINUTE + Math.min(st.second, 59) * 1000 + st.millis;
    return st.offset === null ? localToInstant(local, zone) : local - st.offset;
  };
}

// ---------------------------------------------------------------------------------------------
// Formatting

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

type FieldFormatter = (p: LocalParts, offset: number) => string;

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
    for (const f of parts) out += f(p, offset);
    return out;
  };
}
