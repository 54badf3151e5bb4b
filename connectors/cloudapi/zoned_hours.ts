/**
 * Hours in a time zone. Log files are cut at the zone's hour boundaries (so `$HH$` in a URI
 * means the local hour); Intl gives the local fields, which is all that is needed.
 */

export interface LocalParts {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The local date and time of `epochMs` in `zone`. */
export function localParts(epochMs: number, zone: string): LocalParts {
  const out: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(epochMs))) {
    if (p.type !== "literal") out[p.type] = Number(p.value);
  }
  return {
    year: out.year,
    month: out.month,
    day: out.day,
    hour: out.hour,
    minute: out.minute,
    second: out.second,
  };
}

/** Start (epoch ms) of the local hour that contains `epochMs`. */
export function hourStart(epochMs: number, zone: string): number {
  const p = localParts(epochMs, zone);
  return epochMs - (epochMs % 1000 + 1000) % 1000 - p.second * 1000 - p.minute * 60_000;
}

/** Starts of the local hours that overlap [from, to), oldest first. */
export function hoursBetween(from: number, to: number, zone: string): number[] {
  const hours: number[] = [];
  let h = hourStart(from, zone);
  while (h < to) {
    hours.push(h);
    // Re-align after each step: a zone whose offset changes keeps its local hour boundaries.
    h = hourStart(h + 3_600_000 + 1_000, zone);
  }
  return hours;
}

/** `yyyy`, `MM`, `dd`, `HH` of the local hour starting at `hour`. */
export function hourFields(hour: number, zone: string): {
  yyyy: string;
  MM: string;
  dd: string;
  HH: string;
} {
  const p = localParts(hour, zone);
  return {
    yyyy: String(p.year).padStart(4, "0"),
    MM: String(p.month).padStart(2, "0"),
    dd: String(p.day).padStart(2, "0"),
    HH: String(p.hour).padStart(2, "0"),
  };
}
