/**
 * The `condition` of a Sigma rule (specification v2, "Condition"): `or` binds loosest, then `and`,
 * then `not`; parentheses; `1 of name*` / `all of name*` / `1 of them` / `all of them` (`any of`
 * is the same as `1 of`). A `|` starts the deprecated aggregation (`| count() > 5`), which is
 * refused by the caller; any other text that is not this grammar is an error naming the word.
 */

export type Condition =
  | { readonly kind: "ref"; readonly name: string }
  | { readonly kind: "of"; readonly quantifier: "one" | "all"; readonly pattern: string }
  | { readonly kind: "not"; readonly item: Condition }
  | { readonly kind: "and" | "or"; readonly items: readonly Condition[] };

export type ConditionParse =
  | { readonly ok: true; readonly condition: Condition }
  | { readonly ok: false; readonly aggregation: boolean; readonly message: string };

const TOKEN = /\s*(\(|\)|\||[^\s()|]+)/y;

export function parseCondition(text: string): ConditionParse {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = TOKEN.exec(text)) !== null) tokens.push(m[1]!);
  if (text.slice(TOKEN.lastIndex).trim() !== "" && tokens.length === 0) {
    return { ok: false, aggregation: false, message: `cannot read condition '${text}'` };
  }
  if (tokens.includes("|")) {
    return {
      ok: false,
      aggregation: true,
      message: `the condition '${text}' uses the deprecated pipe aggregation`,
    };
  }
  let at = 0;
  const peek = () => tokens[at]?.toLowerCase();
  const fail = (what: string): never => {
    throw new SyntaxError(
      tokens[at] === undefined
        ? `condition '${text}': ${what}, found the end`
        : `condition '${text}': ${what}, found '${tokens[at]}'`,
    );
  };
  const orExpr = (): Condition => {
    const items = [andExpr()];
    while (peek() === "or") {
      at++;
      items.push(andExpr());
    }
    return items.length === 1 ? items[0]! : { kind: "or", items };
  };
  const andExpr = (): Condition => {
    const items = [notExpr()];
    while (peek() === "and") {
      at++;
      items.push(notExpr());
    }
    return items.length === 1 ? items[0]! : { kind: "and", items };
  };
  const notExpr = (): Condition => {
    if (peek() === "not") {
      at++;
      return { kind: "not", item: notExpr() };
    }
    return primary();
  };
  const primary = (): Condition => {
    const t = tokens[at];
    if (t === undefined) return fail("expected a name, '(' or 'not'");
    if (t === "(") {
      at++;
      const inner = orExpr();
      if (tokens[at] !== ")") fail("expected ')'");
      at++;
      return inner;
    }
    const lower = t.toLowerCase();
    if (lower === "1" || lower === "all" || lower === "any") {
      if (tokens[at + 1]?.toLowerCase() === "of") {
        at += 2;
        const pattern = tokens[at];
        if (pattern === undefined || pattern === "(" || pattern === ")") {
          fail("expected a name pattern or 'them' after 'of'");
        }
        at++;
        return { kind: "of", quantifier: lower === "all" ? "all" : "one", pattern: pattern! };
      }
    }
    if (["and", "or", "of", ")"].includes(lower) || !/^[A-Za-z0-9_*]+$/.test(t)) {
      return fail("expected a name, '(' or 'not'");
    }
    if (/^\d+$/.test(t)) return fail("only '1 of' and 'all of' are quantifiers");
    at++;
    return { kind: "ref", name: t };
  };
  try {
    const condition = orExpr();
    if (at < tokens.length) fail("expected 'and', 'or' or the end");
    return { ok: true, condition };
  } catch (e) {
    if (e instanceof SyntaxError) return { ok: false, aggregation: false, message: e.message };
    throw e;
  }
}

/** The names of `names` a `1 of`/`all of` pattern covers (`them`: all but those starting `_`). */
export function namesMatching(pattern: string, names: readonly string[]): string[] {
  if (pattern.toLowerCase() === "them") return names.filter((n) => !n.startsWith("_"));
  const re = new RegExp(
    "^" + pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*") + "$",
  );
  return names.filter((n) => re.test(n));
}
