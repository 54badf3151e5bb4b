/**
 * Hours in a time zone. Log files are cut at the zone's hour boundaries (so `$HH$` in a URI
 * means the local hour); the local fields come from engine/values/time.ts, as everywhere else.
 */

import { localParts } from "../../engine/values/time.ts";

/** Start (epoch ms) of the local hour that contains `epochMs`. */
export function hourStart(epochMs: number, zone: string): number {
  const p = localParts(epochMs, zone);
  let start = epochMs - (epochMs % 1000 + 1000) % 1000 - p.second * 1000 - p.minute * 60_000;
  // After a shift forward of less than an hour (Lord Howe Island's half hour: 02:00 becomes
  // 02:30), the hour's minute 0 never was: the hour began at the shift, a quarter hour boundary.
  for (let i = 0; i < 4 && localParts(start, zone).hour !== p.hour; i++) start += 15 * 60_000;
  return start;
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

/** Start of the local day that holds the local hour starting at `hour`. */
export function dayStart(hour: number, zone: string): number {
  let h = hour;
  for (let i = 0; i < 24; i++) {
    const prev = hourStart(h - 1, zone);
    if (sameDay(prev, h, zone)) h = prev;
    else break;
  }
  return h;
}

function sameDay(a: number, b: number, zone: string): boolean {
  const x = localParts(a, zone);
  const y = localParts(b, zone);
  return x.day === y.day && x.month === y.month && x.year === y.year;
}
