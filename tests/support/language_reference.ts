/**
 * The words docs/language.md (the reference) documents, read from its sections: the sources of
 * section 3's table, the commands of section 4's, the functions named in section 6 (aggregates
 * apart). Tests compare the engine's catalogues with them, so that no test hard-codes how many
 * there are: a word added to the catalogue and the reference passes, one added to either alone
 * fails.
 */

import assert from "node:assert/strict";

export interface LanguageReference {
  readonly sources: readonly string[];
  readonly commands: readonly string[];
  /** Lower case, sorted. */
  readonly functions: readonly string[];
  readonly aggregates: readonly string[];
}

const names = (text: string, pattern: RegExp) =>
  [...new Set([...text.matchAll(pattern)].map((m) => m[1]!))].sort();

export function languageReference(): LanguageReference {
  const text = Deno.readTextFileSync(new URL("../../docs/language.md", import.meta.url));
  const section = (from: string, to: string) => {
    const start = text.indexOf(from);
    const end = text.indexOf(to, start);
    assert.ok(start >= 0 && end > start, `docs/language.md has '${from}' before '${to}'`);
    return text.slice(start, end);
  };
  const functions = section("## 6. Functions", "Timestamp patterns (");
  const lower = (part: string) => names(part, /`([A-Za-z_]+)\(/g).map((n) => n.toLowerCase());
  return {
    sources: names(section("## 3. Sources", "### Tables of text"), /^\| `([A-Z0-9_]+)\(/gm),
    commands: names(section("## 4. Commands", "## 5."), /`([a-z_]+)\(/g),
    functions: [...new Set(lower(functions))].sort(),
    aggregates: [...new Set(lower(functions.slice(0, functions.indexOf("Strings:"))))].sort(),
  };
}
