/**
 * Whether a PARSE pattern's regular expression could backtrack without bound in V8, so that it
 * must run on the linear-time engine (engine/user_regex.ts says why and how it was measured).
 *
 * The expression is sticky (one start per record), so its cost is the product of the choices
 * of its ambiguous runs: a run of unbounded length (INT, WORD, NSPACE, LD, ...) is ambiguous
 * when what follows it could also match its characters (`LD 'a'`, `WORD WORD`), so that V8 tries
 * every length. One such run costs at most (record length)² steps; two, a cube, and
 * `LD 'a' LD 'a' LD 'a' LD 'b'` over 2000 `a`s ran for minutes. A run followed by a literal it
 * cannot contain (`NSPACE ' '`, `INT ' '`, the common log shapes) or by the record's end is not
 * ambiguous. A REGEX that could backtrack without bound by itself always counts.
 */

import type { MatcherName, PatternElement } from "./pattern_ast.ts";
import { regexShape } from "../user_regex.ts";

/** Ambiguous runs from which a pattern runs on the linear-time engine. */
const MAX_AMBIGUOUS_RUNS = 2;

/** The characters each unbounded matcher's run may contain; absent: bounded length. */
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
  REGEX: /[\s\S]/,
};

/** What follows an element: the next one, or the end of the record. */
type Follower = PatternElement | "end";

export function needsLinearEngine(elements: readonly PatternElement[]): boolean {
  let ambiguous = 0;
  let unboundedRegex = false;
  const visit = (seq: readonly PatternElement[], after: Follower) => {
    seq.forEach((el, i) => {
      const next: Follower = i + 1 < seq.length ? seq[i + 1] : after;
      if (el.kind === "choice") {
        for (const alt of el.alternatives) visit(alt, next);
        return;
      }
      if (el.kind !== "matcher") return;
      if (el.matcher === "REGEX" && !regexShape(el.argument ?? "").bounded) unboundedRegex = true;
      const chars = RUN_CHARS[el.matcher];
      if (chars !== undefined && !settles(chars, next)) ambiguous++;
    });
  };
  visit(elements, "end");
  return unboundedRegex || ambiguous >= MAX_AMBIGUOUS_RUNS;
}

/** Whether a run of `chars` followed by `next` has only one length that can go on. */
function settles(chars: RegExp, next: Follower): boolean {
  if (next === "end") return true;
  if (next.optional) return false;
  switch (next.kind) {
    case "literal":
      return next.text.length > 0 && !chars.test(next.text[0]);
    case "matcher":
      // The final EOL is the line's end; DQS starts with a quote.
      if (next.matcher === "EOL") return !chars.test("\n");
      if (next.matcher === "DQS") return !chars.test('"');
      return false;
    case "choice":
      return false;
  }
}
