/**
 * Source patterns: a path with globs and time fields, compiled once into per-segment matchers.
 * The one glob dialect of every scheme (resource tree paths, `file://`, `cloudapi://`, `azblob://`):
 *
 * - `*` matches any characters within one path segment;
 * - `?` matches exactly one character within one path segment;
 * - `**` (a whole segment) matches any number of segments, none included; within a segment
 *   it is the same as `*`;
 * - `$yyyy$ $MM$ $dd$ $HH$ $mm$` match digits and give the file its `path_time`, alone or
 *   inside a segment (Azure's archives: `y=$yyyy$/m=$MM$`);
 * - anything else is literal.
 *
 *   const g = compileGlob("/shared/logs/$yyyy$/$MM$/*.log");
 *   g.base;     // "/shared/logs": walking starts here
 *   g.segments; // matchers for "$yyyy$", "$MM$", "*.log"
 *
 * Segments match through engine/values/wildcard.ts, not a RegExp: `*a*a*a*a*a*b` against a long file
 * name backtracked for minutes.
 */

import {
  compileWildcard,
  literalTokens,
  STAR,
  type Wildcard,
  type WildcardToken,
} from "../engine/values/wildcard.ts";

export type TimeField = "yyyy" | "MM" | "dd" | "HH" | "mm";

/** Values the time fields of a path captured so far, by field. */
export type TimeCaptures = Readonly<Partial<Record<TimeField, number>>>;

export type GlobSegment =
  | { readonly kind: "literal"; readonly text: string }
  | { readonly kind: "any" } // `**`
  | {
    readonly kind: "match";
    readonly text: string;
    readonly wildcard: Wildcard;
    /** The time fields, in order, with the index of the first of each one's digit tokens. */
    readonly fields: readonly TimeField[];
    readonly fieldTokens: readonly number[];
  };

export interface Glob {
  /** The pattern as given. */
  readonly pattern: string;
  /** The leading segments without globs, joined by `/` (with the leading `/` if absolute). */
  readonly base: string;
  /** The segments after `base`; empty when the pattern names one file. */
  readonly segments: readonly GlobSegment[];
  /** Whether the pattern has any time field. */
  readonly hasTime: boolean;
}

const FIELD_DIGITS: Readonly<Record<TimeField, number>> = {
  yyyy: 4,
  MM: 2,
  dd: 2,
  HH: 2,
  mm: 2,
};

const TIME_FIELD = /\$(yyyy|MM|dd|HH|mm)\$/;

/** Compiles a source pattern; segments are split on `/`, empty ones (`a//b`) dropped. */
export function compileGlob(pattern: string): Glob {
  const absolute = pattern.startsWith("/");
  const parts = pattern.split("/").filter((p) => p !== "");
  const base: string[] = [];
  let i = 0;
  while (i < parts.length - 1 && isLiteral(parts[i]!)) base.push(parts[i++]!);
  // A pattern without globs names one file: all of it but the last segment is the base.
  const segments = parts.slice(i).map(compileSegment);
  return {
    pattern,
    base: (absolute ? "/" : "") + base.join("/"),
    segments,
    hasTime: segments.some((s) => s.kind === "match" && s.fields.length > 0),
  };
}

function isLiteral(segment: string): boolean {
  return !segment.includes("*") && !segment.includes("?") && !TIME_FIELD.test(segment);
}

function compileSegment(text: string): GlobSegment {
  if (text === "**") return { kind: "any" };
  if (isLiteral(text)) return { kind: "literal", text };
  const fields: TimeField[] = [];
  const fieldTokens: number[] = [];
  const tokens: WildcardToken[] = [];
  for (const piece of text.split(/(\$(?:yyyy|MM|dd|HH|mm)\$|\*+|\?)/)) {
    if (piece === "") continue;
    if (piece.startsWith("*")) tokens.push(STAR);
    else if (piece === "?") tokens.push({ kind: "one" });
    else if (TIME_FIELD.test(piece) && piece.length <= 6) {
      const field = piece.slice(1, -1) as TimeField;
      fields.push(field);
      fieldTokens.push(tokens.length);
      for (let k = 0; k < FIELD_DIGITS[field]; k++) tokens.push({ kind: "digit" });
    } else tokens.push(...literalTokens(piece));
  }
  return { kind: "match", text, wildcard: compileWildcard(tokens), fields, fieldTokens };
}

/**
 * Matches one name against a segment; returns the captures extended by the segment's time
 * fields, or null when it does not match (or a field repeats with a different value).
 */
export function matchSegment(
  segment: GlobSegment,
  name: string,
  captures: TimeCaptures,
): TimeCaptures | null {
  switch (segment.kind) {
    case "literal":
      return segment.text === name ? captures : null;
    case "any":
      return captures;
    case "match": {
      if (segment.fields.length === 0) return segment.wildcard.test(name) ? captures : null;
      const at = segment.wildcard.positions(name);
      if (!at) return null;
      const out: Partial<Record<TimeField, number>> = { ...captures };
      for (let k = 0; k < segment.fields.length; k++) {
        const field = segment.fields[k]!;
        const from = at[segment.fieldTokens[k]!]!;
        const value = Number(name.slice(from, from + FIELD_DIGITS[field]));
        if (out[field] !== undefined && out[field] !== value) return null;
        out[field] = value;
      }
      return out;
    }
  }
}

/** Whether the segments of a path below `glob.base` match the rest of the pattern. */
export function matchPath(glob: Glob, relative: readonly string[]): TimeCaptures | null {
  return matchFrom(glob.segments, 0, relative, 0, {});
}

/**
 * Matches a whole path (base included; empty segments ignored, as in patterns); the time
 * fields it captured, or null when it does not match.
 *
 * @example matchGlob(compileGlob("logs/$yyyy$/*.json"), "logs/2024/a.json") // { yyyy: 2024 }
 */
export function matchGlob(glob: Glob, path: string): TimeCaptures | null {
  const names = path.split("/").filter((s) => s !== "");
  const base = glob.base.split("/").filter((s) => s !== "");
  if (names.length < base.length || base.some((b, i) => names[i] !== b)) return null;
  return matchPath(glob, names.slice(base.length));
}

function matchFrom(
  segs: readonly GlobSegment[],
  si: number,
  names: readonly string[],
  ni: number,
  captures: TimeCaptures,
): TimeCaptures | null {
  if (si === segs.length) return ni === names.length ? captures : null;
  const seg = segs[si]!;
  if (seg.kind === "any") {
    for (let k = ni; k <= names.length; k++) {
      const r = matchFrom(segs, si + 1, names, k, captures);
      if (r) return r;
    }
    return null;
  }
  if (ni === names.length) return null;
  const c = matchSegment(seg, names[ni]!, captures);
  return c ? matchFrom(segs, si + 1, names, ni + 1, c) : null;
}
