/**
 * Time: zone arithmetic and calendar fields on epoch milliseconds. Hot paths (parsing log
 * timestamps, rendering results) never build a `Date`: zone offsets are computed once per zone
 * and quarter hour with `Intl.DateTimeFormat` and cached, and calendar fields come from
 * integer arithmetic on days since the epoch. Text to time: time_parse.ts (the forms logs use)
 * and time_pattern.ts (Java-style patterns); time to text: time_format.ts.
 */

/**
 * The one precision rule for times read with a fraction of a millisecond (EPOCH, READ_ZEEK's
 * `time` and `interval`, `TIMESTAMP(n, 's')`, a timestamp's text with more than 3 fraction
 * digits): whole milliseconds, truncated toward the earlier one (1320279566.447996 s is
 * .447, never .448). `count` of `unitMs` (1000 for seconds, 1e-3 for microseconds) is read
 * through microseconds first, so that a decimal fraction is not cut by binary rounding
 * (1730800801.987 s is .987, not .986999...).
 */
export function truncatedMillis(count: number, unitMs = 1000): number {
  return Math.floor(Math.round(count * unitMs * 1e3) / 1e3);
}

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;
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
export function partsOfLocal(local: number): LocalParts {
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
