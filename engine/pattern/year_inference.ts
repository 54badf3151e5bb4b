/**
 * The year of a timestamp written without one (syslog's `Jul  1 09:10:11`, OpenSSH, Android's
 * `07-01 09:10:11.123`, any TIMESTAMP('...') format with no `y`), inferred from the file it was
 * read from, as log tools do:
 *
 * - the file's `path_time` (the `$yyyy$...` fields of its path) when it has one: its year, except
 *   across the turn of the year: a December line in a file whose path time is in January is of
 *   the year before, a January line in a file whose path time is in December of the year after;
 * - else the file's modification time, which comes after the lines written to it: its year,
 *   or the year before when that would put the line more than a day after the modification
 *   (a December line in a file written in January);
 * - with no file (a record not read from a file), the current time, as the modification time.
 *
 * Years are counted in the query's time zone.
 */

import { localParts } from "../values/time.ts";

const DAY = 86_400_000;

/**
 * The file the records being converted come from: an extractor sets it for each file, and the
 * converters of year-less timestamps read it. `version` changes with every file (for caches).
 */
export interface FileClock {
  pathTime: number | null;
  modified: number | null;
  version: number;
}

/** A clock for records not read from a file: the year comes from the current time. */
export function noFileClock(): FileClock {
  return { pathTime: null, modified: null, version: 0 };
}

/**
 * The instant of a year-less text: `parseInYear(year)` reads it as if written in `year` (null
 * when it is not a time, or not a date of that year: 29 February); the year is chosen as above.
 */
export function inferYear(
  parseInYear: (year: number) => number | null,
  clock: FileClock,
  zone: string,
): number | null {
  if (clock.pathTime !== null) {
    const ref = localParts(clock.pathTime, zone);
    const t = parseInYear(ref.year);
    if (t === null) return null;
    const month = localParts(t, zone).month;
    if (month === 12 && ref.month === 1) return parseInYear(ref.year - 1);
    if (month === 1 && ref.month === 12) return parseInYear(ref.year + 1);
    return t;
  }
  const reference = clock.modified ?? Date.now();
  const year = localParts(reference, zone).year;
  const t = parseInYear(year);
  if (t !== null && t <= reference + DAY) return t;
  return parseInYear(year - 1);
}
