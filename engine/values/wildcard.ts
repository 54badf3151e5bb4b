/**
 * Wildcard patterns (`like`'s `%` and `_`, a glob's `*` and time fields) matched without a
 * regular expression: a backtracking engine takes exponential or high-polynomial time on
 * `'%a%a%a%a%a%a%a%b'` against a long run of `a`s, which froze the server. Here a star only
 * ever moves back to the last star seen, so a match costs at most (text length × pattern
 * length) steps; patterns of stars and literal text only (the usual `'adm%'`, `'%error%'`,
 * `'*.log'`) are a few `startsWith`/`indexOf`/`endsWith` calls.
 *
 *   const w = compileWildcard([lit("adm"), STAR]);
 *   w.test("admin"); // true
 */

/** One element of a pattern: a run of any characters, one character, a digit, or a character. */
export type WildcardToken =
  | { readonly kind: "star" }
  | { readonly kind: "one" }
  | { readonly kind: "digit" }
  | { readonly kind: "char"; readonly code: number };

export interface Wildcard {
  /** Whether the whole of `text` matches. */
  test(text: string): boolean;
  /**
   * Where each token matched in `text` (its start offset; a star: where its run starts), or null
   * when `text` does not match.
   */
  positions(text: string): number[] | null;
}

export const STAR: WildcardToken = { kind: "star" };

/** The tokens of literal text (by code point). */
export function literalTokens(text: string): WildcardToken[] {
  return Array.from(text, (c) => ({ kind: "char", code: c.codePointAt(0)! }) as const);
}

export function compileWildcard(tokens: readonly WildcardToken[]): Wildcard {
  const parts = literalParts(tokens);
  const positions = (text: string) => {
    const at = new Array<number>(tokens.length);
    return matchTokens(tokens, text, at) ? at : null;
  };
  if (parts === null) return { test: (text) => matchTokens(tokens, text, null), positions };
  return { test: (text) => matchParts(parts, text), positions };
}

/**
 * The literal texts between the stars (the first and last may be empty: a leading or trailing
 * star), or null when the pattern has a token other than stars and characters.
 */
function literalParts(tokens: readonly WildcardToken[]): string[] | null {
  const parts = [""];
  for (const t of tokens) {
    if (t.kind === "star") parts.push("");
    else if (t.kind === "char") parts[parts.length - 1] += String.fromCodePoint(t.code);
    else return null;
  }
  return parts;
}

/** Leftmost placement of each middle part is enough: a later one could only leave less room. */
function matchParts(parts: readonly string[], text: string): boolean {
  const first = parts[0]!;
  if (parts.length === 1) return text === first;
  const last = parts[parts.length - 1]!;
  if (text.length < first.length + last.length) return false;
  if (!text.startsWith(first) || !text.endsWith(last)) return false;
  let pos = first.length;
  const end = text.length - last.length;
  for (let k = 1; k < parts.length - 1; k++) {
    const part = parts[k]!;
    if (part === "") continue;
    const i = text.indexOf(part, pos);
    if (i < 0 || i + part.length > end) return false;
    pos = i + part.length;
  }
  return true;
}

const ZERO = 48;
const NINE = 57;

/** The width (1 or 2 code units) of the code point at `i`. */
function widthAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
    const d = text.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 2;
  }
  return 1;
}

/**
 * The classic wildcard walk: on a mismatch, the last star takes one more character and the
 * tokens after it start again. Each token matches one code point, so the tokens before the last
 * star never need to move: a match is at most (text length × tokens) steps.
 */
function matchTokens(tokens: readonly WildcardToken[], text: string, at: number[] | null): boolean {
  let p = 0;
  let t = 0;
  let starT = -1;
  let starP = 0;
  while (p < text.length || t < tokens.length) {
    if (t < tokens.length) {
      const token = tokens[t]!;
      if (token.kind === "star") {
        if (at) at[t] = p;
        // A last star takes whatever is left.
        if (t === tokens.length - 1) return true;
        starT = t++;
        starP = p;
        continue;
      }
      if (p < text.length) {
        const width = widthAt(text, p);
        let ok: boolean;
        switch (token.kind) {
          case "one":
            ok = true;
            break;
          case "digit": {
            const c = text.charCodeAt(p);
            ok = c >= ZERO && c <= NINE;
            break;
          }
          case "char":
            ok = text.codePointAt(p) === token.code;
            break;
        }
        if (ok) {
          if (at) at[t] = p;
          t++;
          p += width;
          continue;
        }
      }
    }
    // A mismatch, or text left after the last token: the last star takes one more character.
    if (starT < 0 || starP >= text.length) return false;
    starP += widthAt(text, starP);
    p = starP;
    t = starT + 1;
  }
  return true;
}
