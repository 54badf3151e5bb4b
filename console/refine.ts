/**
 * Refining a script from the result grid: a header's sort, a column's filter, "filter for / out"
 * a cell's value become one more pipe stage (`| sort(...)`, `| filter(...)`) appended to the
 * script, written in Trawl's language (/work/shared/LANGUAGE.md §4, §5) from the schema's types.
 * Pure functions: tests/browser/refine_test.ts checks them without a browser.
 */

export type SortDirection = "asc" | "desc";

/** A field name as the language writes it: plain, or in backquotes. */
export function fieldName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : "`" + name.replace(/`/g, "``") + "`";
}

/** A string literal with the language's backslash escapes. */
export function stringLiteral(s: string): string {
  return "'" + s.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n")
    .replace(/\t/g, "\\t").replace(/\r/g, "\\r") +
    "'";
}

/**
 * The literal for `value` of schema type `type` (a leading `?` marks nullable), or null when the
 * type has none the console writes (arrays, tuples).
 */
export function literal(value: unknown, type: string): string | null {
  const t = type.replace(/^\?/, "");
  if (value === null || value === undefined) return null;
  switch (t) {
    case "INTEGER":
    case "LONG":
    case "DOUBLE":
      return /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(String(value)) ? String(value) : null;
    case "BOOLEAN":
      return value === true || value === "true" ? "true" : "false";
    case "TIMESTAMP":
      return `T(${stringLiteral(String(value))})`;
    case "IPADDR":
      return `IP(${stringLiteral(String(value))})`;
    case "IPNET":
      return `NET(${stringLiteral(String(value))})`;
    case "STRING":
      return stringLiteral(String(value));
    default:
      return null;
  }
}

/**
 * The condition "`field` is `value`" (`keep`) or "is not" for a cell, or null when the value's
 * type cannot be written as a literal.
 */
export function valueCondition(
  field: string,
  type: string,
  value: unknown,
  keep: boolean,
): string | null {
  const f = fieldName(field);
  if (value === null || value === undefined) return `${f} is ${keep ? "" : "not "}null`;
  const lit = literal(value, type);
  if (lit === null) return null;
  return `${f} ${keep ? "=" : "!="} ${lit}`;
}

const OPERATOR = /^\s*(=|!=|<>|<=|>=|<|>|~|like\b|not\b|is\b|in\b)/i;

/**
 * What a person typed in a column's filter box as a condition: an expression's tail that starts
 * with an operator (`> 500`, `~ '^GET'`, `is null`, `in (1, 2)`) applies to the field as
 * written; other text is a search: `contains()` on a string column (on the text of any other),
 * `=` on a number column when it is a number.
 */
export function columnCondition(field: string, type: string, typed: string): string | null {
  const text = typed.trim();
  if (text === "") return null;
  const f = fieldName(field);
  if (OPERATOR.test(text)) return `${f} ${text}`;
  const t = type.replace(/^\?/, "");
  if (["INTEGER", "LONG", "DOUBLE"].includes(t) && literal(text, t) !== null) {
    return `${f} = ${text}`;
  }
  if (t === "STRING") return `contains(${f}, ${stringLiteral(text)})`;
  return `contains(STRING(${f}), ${stringLiteral(text)})`;
}

const SORT_LINE = /\n\| sort\((.*)\)\s*$/;

/** The sort a script ends with, as the grid shows it on a header: when it is one field. */
export function trailingSort(script: string): { field: string; direction: SortDirection } | null {
  const m = SORT_LINE.exec(script);
  if (!m) return null;
  const one = /^(`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_]*)(?:\s+(asc|desc))?$/i.exec(m[1]!.trim());
  if (!one) return null;
  const raw = one[1]!;
  const field = raw.startsWith("`") ? raw.slice(1, -1).replace(/``/g, "`") : raw;
  return { field, direction: (one[2]?.toLowerCase() ?? "asc") as SortDirection };
}

/** The script sorted by `field`: a trailing `| sort(...)` line is replaced, not stacked. */
export function withSort(script: string, field: string, direction: SortDirection): string {
  const base = script.replace(SORT_LINE, "").replace(/\s+$/, "");
  return `${base}\n| sort(${fieldName(field)}${direction === "desc" ? " desc" : ""})`;
}

/** The script with one more `| filter(cond)` stage (before a trailing sort the grid added). */
export function withFilter(script: string, condition: string): string {
  const sort = SORT_LINE.exec(script);
  const base = script.replace(SORT_LINE, "").replace(/\s+$/, "");
  const filtered = `${base}\n| filter(${condition})`;
  return sort ? `${filtered}\n| sort(${sort[1]})` : filtered;
}

/** The sources whose `from:` and `to:` bound what is read (LANGUAGE.md §3). */
const TIMED_SOURCES = /\b(PARSE|LIST|READ_JSON)\s*\(/g;

/** The index just past the `)` closing the call whose `(` is at `open`, skipping strings. */
function closingParen(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s[i]!;
    if (s.startsWith("'''", i)) {
      const end = s.indexOf("'''", i + 3);
      if (end < 0) return -1;
      i = end + 2;
    } else if (c === "'" || c === '"') {
      for (i++; i < s.length && s[i] !== c; i++) if (s[i] === "\\") i++;
    } else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i + 1;
  }
  return -1;
}

/** The top-level arguments of a call's text between its parentheses. */
function splitArguments(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (s.startsWith("'''", i)) {
      const end = s.indexOf("'''", i + 3);
      i = end < 0 ? s.length : end + 2;
    } else if (c === "'" || c === '"') {
      for (i++; i < s.length && s[i] !== c; i++) if (s[i] === "\\") i++;
    } else if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if (c === "," && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out.filter((a) => a.trim() !== "");
}

/**
 * The script with every PARSE, LIST and READ_JSON source given `from:` and `to:` (replacing
 * those it had; null leaves the bound out), as the time picker sets them.
 */
export function withSourceRange(script: string, from: Date | null, to: Date | null): string {
  let out = "";
  let at = 0;
  for (const m of script.matchAll(TIMED_SOURCES)) {
    const open = m.index! + m[0].length - 1;
    if (open < at) continue;
    const close = closingParen(script, open);
    if (close < 0) break;
    const args = splitArguments(script.slice(open + 1, close - 1))
      .filter((a) => !/^\s*(from|to)\s*:/.test(a));
    const kept = args.map((a, i) => (i === 0 ? a.replace(/^\s+/, "") : a));
    if (from) kept.push(` from: T('${from.toISOString()}')`);
    if (to) kept.push(` to: T('${to.toISOString()}')`);
    out += script.slice(at, open + 1) + kept.join(",") + ")";
    at = close;
  }
  return out + script.slice(at);
}

const RANGE_LINE =
  /\n\| filter\(\S+ >= T\('[^']*'\) and \S+ < T\('[^']*'\)\)(?=\n\| (sort|limit)\(|\s*$)/;

/**
 * The script with the time picker's filter on `field` (one `| filter(f >= T(..) and f < T(..))`
 * line, replaced on each change, before a trailing sort the grid added), or without it.
 */
export function withRangeFilter(
  script: string,
  field: string | null,
  from: Date | null,
  to: Date | null,
): string {
  const base = script.replace(RANGE_LINE, "");
  if (!field || !from || !to) return base;
  const f = fieldName(field);
  // Before a trailing limit or sort: the range narrows the events, then they are cut.
  const head = withoutTail(base);
  return `${head}\n| filter(${f} >= T('${from.toISOString()}') and ${f} < T('${to.toISOString()}'))` +
    base.slice(head.length);
}

/** Aggregates in a script: its result is a summary, not events. */
export function isAggregate(script: string): boolean {
  return /\|\s*group\s*\(/.test(script) ||
    /\b(count|count_distinct|sum|avg|min|max|first|last|array_agg)\s*\(/.test(script);
}

/** The script without trailing `| limit(...)` / `| sort(...)` stages: every event, any order. */
export function withoutTail(script: string): string {
  let s = script.replace(/\s+$/, "");
  for (;;) {
    const next = s.replace(/\n?\s*\|\s*(limit|sort)\([^()]*\)\s*$/, "");
    if (next === s) return s;
    s = next;
  }
}
