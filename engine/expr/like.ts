/** SQL `like` patterns: `%` any run of characters, `_` one character, `\` escapes either. */

/**
 * The anchored RegExp of a like pattern.
 *
 * @example likeToRegExp("adm%").test("admin") // true
 */
export function likeToRegExp(pattern: string): RegExp {
  let source = "^";
  let literal = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\" && i + 1 < pattern.length) literal += pattern[++i];
    else if (c === "%" || c === "_") {
      source += RegExp.escape(literal) + (c === "%" ? "[\\s\\S]*" : "[\\s\\S]");
      literal = "";
    } else literal += c;
  }
  return new RegExp(source + RegExp.escape(literal) + "$", "u");
}
