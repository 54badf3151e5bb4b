/**
 * Zone names in timestamps: the abbreviations logs write (`CEST`, `EDT`, `PST`), each a fixed
 * offset, and IANA names (`Europe/Tallinn`), whose offset at the instant follows daylight
 * saving. An abbreviation that stands for several zones (`IST`: India, Ireland or Israel) is
 * refused rather than guessed: the timestamp is not read (a constant is an error that names
 * the candidates). The table is docs/language.md's ("Zone names").
 */

import { isValidZone, localToInstant } from "./time.ts";

const H = 60;

/** Offsets in minutes east of UTC, by abbreviation (upper case). */
export const ZONE_ABBREVIATIONS: ReadonlyMap<string, number> = new Map([
  ["UTC", 0],
  ["UT", 0],
  ["GMT", 0],
  ["WET", 0],
  ["WEST", 1 * H],
  ["CET", 1 * H],
  ["CEST", 2 * H],
  ["MET", 1 * H],
  ["MEST", 2 * H],
  ["EET", 2 * H],
  ["EEST", 3 * H],
  ["MSK", 3 * H],
  ["WAT", 1 * H],
  ["CAT", 2 * H],
  ["SAST", 2 * H],
  ["EAT", 3 * H],
  ["PKT", 5 * H],
  ["NPT", 5 * H + 45],
  ["WIB", 7 * H],
  ["HKT", 8 * H],
  ["SGT", 8 * H],
  ["AWST", 8 * H],
  ["JST", 9 * H],
  ["KST", 9 * H],
  ["ACST", 9 * H + 30],
  ["ACDT", 10 * H + 30],
  ["AEST", 10 * H],
  ["AEDT", 11 * H],
  ["NZST", 12 * H],
  ["NZDT", 13 * H],
  ["HST", -10 * H],
  ["AKST", -9 * H],
  ["AKDT", -8 * H],
  ["PST", -8 * H],
  ["PDT", -7 * H],
  ["MST", -7 * H],
  ["MDT", -6 * H],
  ["CDT", -5 * H],
  ["EST", -5 * H],
  ["EDT", -4 * H],
  ["ADT", -3 * H],
  ["NST", -3 * H - 30],
  ["NDT", -2 * H - 30],
  ["BRT", -3 * H],
  ["ART", -3 * H],
]);

/** Abbreviations of several zones, refused, with what they may mean. */
export const AMBIGUOUS_ZONES: ReadonlyMap<string, string> = new Map([
  ["IST", "India +05:30, Irish summer +01:00 or Israel +02:00"],
  ["BST", "British summer +01:00 or Bangladesh +06:00"],
  ["CST", "US Central -06:00, China +08:00 or Cuba -05:00"],
  ["AST", "Atlantic -04:00 or Arabia +03:00"],
  ["SST", "Samoa -11:00 or Singapore +08:00"],
  ["GST", "Gulf +04:00 or South Georgia -02:00"],
  ["ECT", "Ecuador -05:00 or Eastern Caribbean -04:00"],
]);

/**
 * The instant of `local` (ms of a wall clock) in the zone named `name`: an abbreviation of the
 * table or an IANA name; null when it is neither, or an ambiguous abbreviation.
 */
export function instantInNamedZone(local: number, name: string): number | null {
  const upper = name.toUpperCase();
  const minutes = ZONE_ABBREVIATIONS.get(upper);
  if (minutes !== undefined) return local - minutes * 60_000;
  if (AMBIGUOUS_ZONES.has(upper)) return null;
  if (/^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)+$/.test(name) && isValidZone(name)) {
    return localToInstant(local, name);
  }
  return null;
}

/** Why the zone name in `text` (its last word) is refused, when it is an ambiguous one. */
export function ambiguousZoneIn(text: string): string | null {
  const word = /([A-Za-z]+)\s*$/.exec(text)?.[1]?.toUpperCase();
  const meanings = word === undefined ? undefined : AMBIGUOUS_ZONES.get(word);
  return meanings === undefined
    ? null
    : `the zone '${word}' is ambiguous (${meanings}): write the offset or an IANA name such as ` +
      `'Asia/Kolkata'`;
}

/**
 * The zone name at `i` in `text` (letters, or an IANA name with `/`), for a pattern's `z`:
 * its end and the instant of `local` there, or null.
 */
export function readZoneName(text: string, i: number): { end: number; name: string } | null {
  const m = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*/.exec(text.slice(i, i + 64));
  return m ? { end: i + m[0].length, name: m[0] } : null;
}
