/**
 * Whether a PARSE pattern's regular expression could backtrack without bound in V8, so that it
 * must run on the linear-time engine (engine/values/user_regex.ts says why and how it was measured).
 *
 * The expression is sticky (one start per record). A run of unbounded length (INT, WORD,
 * NSPACE, LD, ...) is ambiguous when what follows it lets it end at many places: `LD 'a'` ends
 * at any `a`, `WORD WORD` anywhere. V8 then tries the rest of the pattern from each of them,
 * which is harmless when that rest is short, but when another run follows, each try can scan
 * the rest of the line: `LD 'a' NSPACE ' '` over 20 000 `a`s took 0.8 s, and
 * `LD 'a' LD 'a' LD 'a' LD 'b'` over 2000 `a`s minutes. Such patterns run on re2js.
 *
 * A run followed by a literal holding a character the run cannot contain (`NSPACE ' '`,
 * `NSPACE '" '`, `INT ' '`: the common log shapes) ends at one place, give or take the
 * literal's length; one followed by a rest that always matches (`LD EOL`) never backtracks.
 * A REGEX that could backtrack without bound by itself always counts.
 */

import type { MatcherName, PatternElement } from "./pattern_ast.ts";
import { regexShape } from "../values/user_regex.ts";

/**
 * The characters each unbounded matcher's run may contain; absent: bounded length (a REGEX that
 * regexShape finds bounded has a bounded length too; any other sends the pattern to re2js).
 */
const RUN_CHARS: Partial<Record<MatcherName, RegExp>> = {
  INT: /[-+\d]/,
  LONG: /[-+\d]/,
  DOUBLE: /[-+\d.eE]/,
  WORD: /\w/,
  NSPACE: /\S/,
  LD: /[^\n]/,
  SPACE: /[ \t]/,
  JSON: /[\s\S]/,
  KVP: /[\s\S]/,
};

/** What follows an element: the next one, or the end of the record. */
type Follower = PatternElement | "end";

export function needsLinearEngine(elements: readonly PatternElement[]): boolean {
  // The runs in pattern order (a choice's alternatives one after another), each marked
  // ambiguous or not.
  const runs: boolean[] = [];
  let unboundedRegex = false;
  const visit = (seq: readonly PatternElement[], after: Follower, restMatches: boolean) => {
    seq.forEach((el, i) => {
      const last = i + 1 === seq.length;
      const next: Follower = last ? after : seq[i + 1]!;
      if (el.kind === "choice") {
        for (const alt of el.alternatives) visit(alt, next, last && restMatches);
        return;
      }
      if (el.kind !== "matcher") return;
      if (el.matcher === "REGEX" && !regexShape(el.argument ?? "").bounded) unboundedRegex = true;
      const chars = RUN_CHARS[el.matcher];
      if (chars === undefined) return;
      const rest = seq.slice(i + 1);
      runs.push(
        !settles(chars, next) && !(alwaysMatches(rest) && (rest.length > 0 || restMatches)),
      );
    });
  };
  visit(elements, "end", true);
  const firstAmbiguous = runs.indexOf(true);
  return unboundedRegex || (firstAmbiguous >= 0 && firstAmbiguous < runs.length - 1);
}

/** Whether `seq` matches at any place in a line: nothing, or LD then the line's end. */
function alwaysMatches(seq: readonly PatternElement[]): boolean {
  const isLd = (el: PatternElement) => el.kind === "matcher" && el.matcher === "LD";
  const isEol = (el: PatternElement) => el.kind === "matcher" && el.matcher === "EOL";
  if (seq.length === 0) return true;
  if (!isLd(seq[0]!)) return false;
  return seq.length === 1 || (seq.length === 2 && isEol(seq[1]!));
}

/** Whether a run of `chars` followed by `next` can end at a few places only. */
function settles(chars: RegExp, next: Follower): boolean {
  if (next === "end") return true;
  if (next.optional) return false;
  switch (next.kind) {
    case "literal":
      // The run cannot cover the literal's foreign character: its ends lie within the literal's
      // length of each other.
      return Array.from(next.text).some((c) => !chars.test(c));
    case "matcher":
      // The final EOL is the line's end; DQS starts with a quote.
      if (next.matcher === "EOL") return !chars.test("\n");
      if (next.matcher === "DQS") return !chars.test('"');
      return false;
    case "choice":
      return false;
  }
}
