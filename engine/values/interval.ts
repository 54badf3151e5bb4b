/**
 * Time intervals: the one parser the whole project uses (settings, scripts, datastore
 * definitions, log lists). Syntax: one or more `<number> <unit>` parts, e.g. `15 min`,
 * `1 h 30 min`, `500ms`, `90 days`. Units are those of the language reference, section 1.
 */

const UNIT_MILLIS: Readonly<Record<string, number>> = {
  ms: 1,
  msec: 1,
  millis: 1,
  s: 1_000,
  sec: 1_000,
  second: 1_000,
  seconds: 1_000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
  weeks: 604_800_000,
};

/** The unit names an interval may use, for messages and for the lexer. */
export const INTERVAL_UNITS: readonly string[] = Object.keys(UNIT_MILLIS);

/** Milliseconds in one of `unit`, or undefined when it is not a unit (case-insensitive). */
export function unitMillis(unit: string): number | undefined {
  return UNIT_MILLIS[unit.toLowerCase()];
}

export const INTERVAL_FORM = "a number and a unit, e.g. '15 min', '1 h 30 min', '500 ms', '7 days'";

/** What a value that must be whole milliseconds is told when it is not ('1.5 ms', 1.5). */
export const NOT_WHOLE_MILLIS =
  "expected whole milliseconds: a whole number, or an interval such as '1500 ms' or '2 s' " +
  "(no fraction of a millisecond)";

const PART = /\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*/y;

/**
 * Parses an interval into whole milliseconds (rounded), or returns an error message. `whole`
 * says whether it was whole milliseconds before rounding ('1.5 ms' is not; '0.5 s' is): a
 * setting documented as whole milliseconds refuses the others.
 *
 * @example parseInterval("1 h 30 min") // { ok: true, millis: 5400000, whole: true }
 */
export function parseInterval(text: string): { ok: true; millis: number; whole: boolean } | {
  ok: false;
  message: string;
} {
  const trimmed = text.trim();
  if (trimmed === "") return { ok: false, message: `empty interval; expected ${INTERVAL_FORM}` };
  let total = 0;
  PART.lastIndex = 0;
  let pos = 0;
  while (pos < text.length) {
    PART.lastIndex = pos;
    const m = PART.exec(text);
    if (!m) {
      if (text.slice(pos).trim() === "") break;
      return { ok: false, message: `'${text}' is not an interval; expected ${INTERVAL_FORM}` };
    }
    const unit = unitMillis(m[2]!);
    if (unit === undefined) {
      return {
        ok: false,
        message: `unknown time unit '${m[2]}' in '${text}'; units are ${INTERVAL_UNITS.join(", ")}`,
      };
    }
    total += Number(m[1]) * unit;
    pos = PART.lastIndex;
  }
  if (!Number.isFinite(total) || total > Number.MAX_SAFE_INTEGER) {
    return { ok: false, message: `interval '${text}' is too large` };
  }
  const millis = Math.round(total);
  // A tolerance for the binary fractions of decimal ones ('0.3 s' is 300.00000000000006).
  return { ok: true, millis, whole: Math.abs(total - millis) < 1e-6 };
}

/** Like parseInterval, but throws a plain Error; for trusted constants only. */
export function intervalMillis(text: string): number {
  const r = parseInterval(text);
  if (!r.ok) throw new Error(r.message);
  return r.millis;
}

const FORMAT_UNITS: readonly [string, number][] = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["min", 60_000],
  ["s", 1_000],
  ["ms", 1],
];

/** Formats milliseconds in the same syntax parseInterval reads: `1 h 30 min`, `0 ms`. */
export function formatInterval(millis: number): string {
  if (millis === 0) return "0 ms";
  const sign = millis < 0 ? "-" : "";
  let rest = Math.abs(millis);
  const parts: string[] = [];
  for (const [unit, size] of FORMAT_UNITS) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      parts.push(`${n} ${unit}`);
      rest -= n * size;
    }
  }
  return sign + parts.join(" ");
}
