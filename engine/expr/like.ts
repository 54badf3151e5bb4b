/** SQL `like` patterns: `%` any run of characters, `_` one character, `\` escapes either. */

/**
 * The anchored RegExp of a like pattern.
 *
 * @example likeToRegExp("adm%").test("admin") // true
 */
export function likeToRegExp(pattern: string): RegExp {
  let source = "^";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\" && i + 1 < pattern.length) {
      source += escapeChar(pattern[++i]);
    } else if (c === "%") source += "[\\s\\S]*";
    else if (c === "_") source += "[\\s\\S]";
    else source += escapeChar(c);
  }
  return new RegExp(source + "$", "u");
}

function escapeChar(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? "\\" + c : c;
}
