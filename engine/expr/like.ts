/** SQL `like` patterns: `%` any run of characters, `_` one character, `\` escapes either. */

import { compileWildcard, STAR, type WildcardToken } from "../values/wildcard.ts";

/**
 * A test of whether a whole text matches a like pattern, in time linear in the text for each
 * token of the pattern (engine/values/wildcard.ts: no regular expression, no backtracking).
 *
 * @example likeMatcher("adm%")("admin") // true
 */
export function likeMatcher(pattern: string): (text: string) => boolean {
  const tokens: WildcardToken[] = [];
  const chars = Array.from(pattern);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === "\\" && i + 1 < chars.length) {
      tokens.push({ kind: "char", code: chars[++i]!.codePointAt(0)! });
    } else if (c === "%") {
      // `%%` is one `%`: consecutive stars would only add steps.
      if (tokens.at(-1)?.kind !== "star") tokens.push(STAR);
    } else if (c === "_") tokens.push({ kind: "one" });
    else tokens.push({ kind: "char", code: c.codePointAt(0)! });
  }
  const wildcard = compileWildcard(tokens);
  return (text) => wildcard.test(text);
}
