/**
 * The time a path's fields name, as a span: `2024/05` names all of May, `2024/05/17/09` one
 * hour. A file's `path_time` is the start of its span; the span decides whether a file, or a
 * whole folder, can hold anything between `from` and `to`.
 */

import type { TimeCaptures } from "../glob.ts";
import { localToInstant } from "../../engine/values/time.ts";

export interface TimeSpan {
  /** Epoch ms of the first instant the fields name. */
  readonly start: number;
  /** Epoch ms just past the last instant. */
  readonly end: number;
}

/**
 * The span of the fields captured so far, in `zone`; only fields that follow on from the
 * year count (`$yyyy$/$dd$` without a month names the whole year). Null without a year.
 */
export function timeSpan(captures: TimeCaptures, zone: string): TimeSpan | null {
  const { yyyy, MM, dd, HH, mm } = captures;
  if (yyyy === undefined) return null;
  const fields = [yyyy, 1, 1, 0, 0];
  let known = 1;
  for (const v of [MM, dd, HH, mm]) {
    if (v === undefined) break;
    fields[known++] = v;
  }
  const [year, month, day, hour, minute] = fields;
  const next = [...fields];
  next[known - 1]! += 1;
  // Date.UTC carries overflow (month 13, day 32) into the next unit of the wall clock.
  const startLocal = Date.UTC(year!, month! - 1, day, hour, minute);
  const endLocal = Date.UTC(next[0]!, next[1]! - 1, next[2], next[3], next[4]);
  if (Number.isNaN(startLocal)) return null;
  return { start: localToInstant(startLocal, zone), end: localToInstant(endLocal, zone) };
}

/**
 * Whether a span can hold a time in `[from, to)`; a path without time fields always can.
 * A daily file of the 17th is kept for `from` = the 17th at noon: it holds that afternoon;
 * it is not kept for `to` = the 17th at midnight, which excludes the 17th.
 */
export function spanOverlaps(span: TimeSpan | null, from?: number, to?: number): boolean {
  if (!span) return true;
  if (from !== undefined && span.end <= from) return false;
  if (to !== undefined && span.start >= to) return false;
  return true;
}
