/**
 * The rule for an optional part after a lazy run (docs/language.md section 7), made explicit
 * in the pattern before it is compiled, so that V8's engine and the linear one (which has no
 * lookahead) read it the same way.
 *
 * A lazy `LD` (or `DATA`) right before an optional part X, with R the rest of the pattern:
 *
 *   LD X? R   becomes   ( LD X R | LD R )
 *
 * The first alternative wins whenever it matches at all: X is present with the shortest LD
 * for which X and then R match, and absent only when no length of the LD lets it be present.
 * Plain `LD X? R` would take X absent with the LD empty as soon as R matches there. Each
 * alternative is rewritten again, for the optional parts of R: with `LD X? Y? R`, X present if
 * it can be, else Y, else neither. When nothing follows, the absent reading runs the LD to the
 * line's end (DATA to the record's end): `LD:msg (', client: ' IPADDR:client)?` gives the whole
 * line to msg when there is no client.
 *
 * An optional matcher that takes a lone `-` as absent keeps that in the present reading.
 */

import type { PatternElement } from "./pattern_ast.ts";

/**
 * The most elements the rewritten pattern may hold: each split copies the rest of the pattern,
 * so a pattern with many such pairs grows fast (8 pairs `LD (...)?` in a row make a 15 kB
 * expression, compiled in about 0.2 s; 12 pairs, 240 kB in 1.6 s).
 */
export const MAX_SPLIT_ELEMENTS = 4000;

/**
 * `elements` with every "lazy run, optional part" pair split as above, or null when that
 * would exceed MAX_SPLIT_ELEMENTS.
 */
export function splitOptionalParts(
  elements: readonly PatternElement[],
  dashIsAbsent: (el: PatternElement) => boolean,
): PatternElement[] | null {
  let made = 0;
  const rewrite = (seq: readonly PatternElement[], atEnd: boolean): PatternElement[] => {
    made += seq.length;
    if (made > MAX_SPLIT_ELEMENTS) return [];
    const out: PatternElement[] = [];
    for (let k = 0; k < seq.length; k++) {
      const el = seq[k]!;
      const lazy = out[out.length - 1];
      if (el.optional && lazy !== undefined && isLazyRun(lazy) && k > 0) {
        out.pop();
        const rest = seq.slice(k + 1);
        const present = [lazy, presentForm(el, dashIsAbsent), ...rest];
        const absent = [
          atEnd && rest.length === 0 && lazy.kind === "matcher"
            ? { ...lazy, toEnd: true as const }
            : lazy,
          ...rest,
        ];
        out.push({
          kind: "choice",
          alternatives: [rewrite(present, atEnd), rewrite(absent, atEnd)],
          optional: false,
          offset: el.offset,
          split: true,
        });
        return out;
      }
      out.push(
        el.kind === "choice"
          ? {
            ...el,
            alternatives: el.alternatives.map((alt) => rewrite(alt, atEnd && k === seq.length - 1)),
          }
          : el,
      );
    }
    return out;
  };
  const rewritten = rewrite(elements, true);
  return made > MAX_SPLIT_ELEMENTS ? null : rewritten;
}

/** `el` required; a field in it stays nullable, and a lone `-` still reads as absent. */
function presentForm(
  el: PatternElement,
  dashIsAbsent: (el: PatternElement) => boolean,
): PatternElement {
  const required = { ...el, optional: false };
  if (required.kind !== "matcher") return required;
  const dash: PatternElement = { kind: "literal", text: "-", optional: false, offset: el.offset };
  return {
    kind: "choice",
    alternatives: dashIsAbsent(el) ? [[required], [dash]] : [[required]],
    optional: false,
    offset: el.offset,
  };
}

/** A lazy run of any text (LD, DATA), which an optional part after it would leave empty. */
function isLazyRun(el: PatternElement): boolean {
  return el.kind === "matcher" && (el.matcher === "LD" || el.matcher === "DATA") && !el.optional;
}
