/**
 * Regular expressions written by users (`~`, `regex_extract`, a PARSE pattern's `REGEX`): the
 * JavaScript syntax (with the `u` flag), run so that no expression can backtrack without bound.
 *
 * V8's own engine backtracks: `^(a+)+$` over 29 `a`s and a `!` takes seconds, and even `\d+x`
 * over a line of 100 000 digits takes half a minute (quadratic: each start position scans the
 * run again), holding the event loop all the while. Measured choices (docs/language.md):
 * - V8's linear engine (`--enable-experimental-regexp-engine-on-excessive-backtracks`, flag `l`)
 *   refuses the `u` and `i` flags in this V8 (15.0) and must be given on every command line;
 * - RE2 in JavaScript (npm `re2js`): linear in the text, 2-30x slower than V8 on simple
 *   expressions;
 * so an expression runs on V8 only when it is proved bounded (no `*`, `+` or `{n,}`, no
 * quantified group, at most MAX_NATIVE_CHOICES combinations of bounded quantifiers: literal
 * words, alternations, classes, which are most filters), and on re2js otherwise. Both engines
 * take the same dialect: backreferences and lookaround, which no linear engine runs, are refused
 * when the query is checked, with their position.
 */

import { RE2JS } from "re2js";

export interface UserRegex {
  /** As written, `(?i)` included. */
  readonly source: string;
  /** Without a leading `(?i)`, which `ignoreCase` says. */
  readonly body: string;
  readonly ignoreCase: boolean;
  /** True when V8 runs it: it was proved unable to backtrack without bound. */
  readonly native: boolean;
  /** Whether the expression matches somewhere in `text`. */
  test(text: string): boolean;
  /** The first match (`[0]` the whole, then the groups; undefined: a group that did not take part). */
  exec(text: string): readonly (string | undefined)[] | null;
}

export type RegexResult =
  | { readonly ok: true; readonly regex: UserRegex }
  | { readonly ok: false; readonly message: string; readonly offset: number };

/** Combinations of bounded quantifiers (`?` counts 2, `{0,3}` 4) V8 may try at each position. */
const MAX_NATIVE_CHOICES = 256;

/** A leading `(?i)`: the rest of the expression ignores case. */
const IGNORE_CASE = "(?i)";

/**
 * Compiles `source`; a mistake or a refused construct comes back with its offset in `source`.
 * A leading `(?i)` makes it ignore case (the `i` flag; RE2's own syntax for it).
 */
export function compileUserRegex(source: string): RegexResult {
  const ignoreCase = source.startsWith(IGNORE_CASE);
  const body = ignoreCase ? source.slice(IGNORE_CASE.length) : source;
  let native: RegExp;
  try {
    native = new RegExp(body, ignoreCase ? "iu" : "u");
  } catch (e) {
    return { ok: false, message: (e as Error).message, offset: 0 };
  }
  const shape = regexShape(body);
  if (shape.refused) {
    const { message, offset } = shape.refused;
    return { ok: false, message, offset: offset + (source.length - body.length) };
  }
  if (shape.bounded) {
    return {
      ok: true,
      regex: {
        source,
        body,
        ignoreCase,
        native: true,
        test: (t) => native.test(t),
        exec: (t) => native.exec(t),
      },
    };
  }
  let linear: RE2JS;
  try {
    linear = RE2JS.compile(forRe2(body), ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (e) {
    return { ok: false, message: `${(e as Error).message} (RE2 dialect)`, offset: 0 };
  }
  return {
    ok: true,
    regex: {
      source,
      body,
      ignoreCase,
      native: false,
      test: (t) => linear.test(t),
      exec: (t) => linear.exec(t) as (string | undefined)[] | null,
    },
  };
}

/** JavaScript's white space (`\s`), which RE2 takes as ASCII's only, in RE2's syntax. */
const JS_SPACE = "\\t\\n\\x{0b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}" +
  "\\x{202f}\\x{205f}\\x{3000}\\x{feff}";

/**
 * `source` (JavaScript syntax, valid) in re2js's syntax, with `\s` and `\S` (outside classes)
 * meaning what they mean in JavaScript.
 */
export function forRe2(source: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") {
      const next = source[i + 1] ?? "";
      i++;
      if (next === "s") out += inClass ? JS_SPACE : `[${JS_SPACE}]`;
      else if (next === "S" && !inClass) out += `[^${JS_SPACE}]`;
      else out += c + next;
      continue;
    }
    if (c === "[" && !inClass) inClass = true;
    else if (c === "]" && inClass) inClass = false;
    out += c;
  }
  return RE2JS.translateRegExp(out);
}

/** The message of a regular expression that does not compile, naming where in it. */
export function regexMistake(text: string, mistake: { message: string; offset: number }): string {
  const where = mistake.offset > 0 ? ` (at character ${mistake.offset + 1})` : "";
  return `invalid regular expression '${text}': ${mistake.message}${where}`;
}

export interface RegexShape {
  /** A construct no linear engine runs, with its offset. */
  readonly refused: { readonly message: string; readonly offset: number } | null;
  /** True when V8's backtracking is bounded for it (see the module comment). */
  readonly bounded: boolean;
}

/**
 * What matters of a valid expression's syntax: refused constructs and whether backtracking is
 * bounded. Escapes and classes are skipped as units, so `\(` or `[(]` is no group.
 */
export function regexShape(source: string): RegexShape {
  let bounded = true;
  let choices = 1;
  let afterGroup = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    const wasGroup = afterGroup;
    afterGroup = false;
    if (c === "\\") {
      const next = source[i + 1] ?? "";
      if (/[1-9]/.test(next)) return refuse(`a backreference ('\\${next}')`, i);
      if (next === "k") return refuse("a named backreference ('\\k<...>')", i);
      i++;
      // \p{...}, \u{...}, \x41 are atoms whatever their length: only quantifiers after them matter.
    } else if (c === "[") {
      i = classEnd(source, i);
    } else if (c === "(") {
      const ahead = source.slice(i, i + 4);
      if (ahead.startsWith("(?=") || ahead.startsWith("(?!")) {
        return refuse(`a lookahead ('${ahead.slice(0, 3)}...)')`, i);
      }
      if (ahead.startsWith("(?<=") || ahead.startsWith("(?<!")) {
        return refuse(`a lookbehind ('${ahead}...)')`, i);
      }
    } else if (c === ")") {
      afterGroup = true;
    } else if (c === "*" || c === "+") {
      bounded = false;
    } else if (c === "?" || c === "{") {
      // A `?` right after a quantifier makes it lazy; V8 already refused a bare one.
      const prev = source[i - 1];
      if (c === "?" && (prev === "*" || prev === "+" || prev === "?" || prev === "}")) {
        if (i < 2 || source[i - 2] !== "\\") continue;
      }
      const range = c === "?" ? { max: 1, end: i } : braceRange(source, i);
      if (range === null) continue; // a literal `{`
      if (range.max === Infinity) bounded = false;
      if (wasGroup) bounded = false;
      choices *= range.max + 1;
      if (choices > MAX_NATIVE_CHOICES) bounded = false;
      i = range.end;
    }
  }
  return { refused: null, bounded };
}

function refuse(what: string, offset: number): RegexShape {
  return {
    refused: {
      message:
        `${what} is not supported: regular expressions run in time linear in the text, which rules out backreferences and lookaround`,
      offset,
    },
    bounded: false,
  };
}

/** The offset of the `]` closing the class opened at `start`. */
function classEnd(source: string, start: number): number {
  let i = start + 1;
  if (source[i] === "^") i++;
  for (; i < source.length; i++) {
    if (source[i] === "\\") i++;
    else if (source[i] === "]") return i;
  }
  return source.length;
}

/** `{m}`, `{m,}` or `{m,n}` at `start`: its largest count and last offset; null when literal. */
function braceRange(source: string, start: number): { max: number; end: number } | null {
  const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(start, start + 24));
  if (m === null) return null;
  const max = m[2] === undefined ? Number(m[1]) : m[3] === "" ? Infinity : Number(m[3]);
  return { max, end: start + m[0].length - 1 };
}
