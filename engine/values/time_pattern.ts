/**
 * Java-style time patterns (`yyyy-MM-dd HH:mm:ss.SSS Z`): checked (`checkTimePattern`) and
 * compiled into a parser of timestamps (`compileTimestampParser`). Letters: yyyy yy MM M MMM MMMM
 * dd d HH H hh h mm m ss s SSS a Z X XX XXX EEE EEEE u, z and VV (a zone's name: `CEST`,
 * `Europe/Tallinn`, time_zones.ts), 'quoted text', '' for a quote.
 */

import { DAY, daysFromCivil, HOUR, localToInstant, MINUTE } from "./time.ts";
import { instantInNamedZone, readZoneName } from "./time_zones.ts";
import {
  digitAt,
  digits,
  monthAt,
  MONTHS_LONG,
  validDate,
  WEEKDAYS_LONG,
  WEEKDAYS_SHORT,
} from "./time_parse.ts";

type PatternToken =
  | { readonly kind: "literal"; readonly text: string }
  | { readonly kind: "field"; readonly letter: string; readonly count: number };

const PATTERN_LETTERS = "yMdHhmsSaZXxEuzV";

export function tokenizePattern(pattern: string): PatternToken[] {
  const out: PatternToken[] = [];
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
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
    } else if (PATTERN_LETTERS.includes(c!)) {
      let j = i;
      while (pattern[j] === c) j++;
      out.push({ kind: "field", letter: c!, count: j - i });
      i = j;
    } else if (/[A-Za-z]/.test(c!)) {
      throw new Error(
        `unknown letter '${c}' in time pattern '${pattern}'; put literal text in quotes, e.g. 'T'`,
      );
    } else {
      out.push({ kind: "literal", text: c! });
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
  /** A zone read by name (`z`, `VV`). */
  zone: string | null;
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

function numberField(
  count: number,
  set: (st: ParseState, v: number) => void,
  min = count,
): FieldParser {
  return (text, i, st) => {
    const [v, j] = readNumber(text, i, min, count >= 3 ? count : Math.max(count, 2));
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
            const name = MONTHS_LONG[m - 1];
            if (text.slice(i, i + name!.length).toLowerCase() === name!.toLowerCase()) {
              st.month = m;
              return i + name!.length;
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
      if (count === 1) {
        // `S` alone: a count of milliseconds without padding, as Java's SimpleDateFormat writes
        // it (`13:55:36.5` is 5 ms, `.50` 50 ms); `SSS` and longer are a fraction of a second.
        return numberField(3, (st, v) => st.millis = v, 1);
      }
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
    case "z":
    case "V":
      return (text, i, st) => {
        const read = readZoneName(text, i);
        if (read === null) return -1;
        st.zone = read.name;
        return read.end;
      };
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
      zone: null,
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
    if (st.offset !== null) return local - st.offset;
    return st.zone !== null ? instantInNamedZone(local, st.zone) : localToInstant(local, zone);
  };
}
