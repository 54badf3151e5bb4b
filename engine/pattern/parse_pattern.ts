/**
 * Reads pattern text into elements: `'literal'`, `MATCHER`, `MATCHER('argument')`, `( a | b )`,
 * `$name` (a named sub-pattern: the pattern text a script constant holds), each optionally
 * followed by `?` and `:name`. White space only separates elements.
 */

import { editDistance } from "../front/diagnostics.ts";
import type { MatcherName, PatternElement, PatternError } from "./pattern_ast.ts";

export const MATCHER_NAMES: readonly MatcherName[] = [
  "INT",
  "LONG",
  "DOUBLE",
  "BOOL",
  "WORD",
  "NSPACE",
  "LD",
  "JAVANAME",
  "HOSTPORT",
  "IPLIST",
  "EPOCH",
  "EPOCHMS",
  "DATA",
  "DQS",
  "IPV4",
  "IPV6",
  "IPADDR",
  "HTTPDATE",
  "SYSLOGTIME",
  "SYSLOG5424",
  "ISO8601",
  "TIMESTAMP",
  "JSON",
  "KVP",
  "SPACE",
  "EOL",
  "REGEX",
];

const WITH_ARGUMENT = new Set<MatcherName>(["TIMESTAMP", "REGEX"]);
const UNNAMEABLE = new Set<MatcherName>(["EOL"]);

class PatternSyntaxError extends Error {
  constructor(message: string, readonly offset: number) {
    super(message);
  }
}

/** The text of the sub-pattern `$name`, or undefined when there is none. */
export type SubPatterns = (name: string) => string | undefined;

/** Sub-patterns may use sub-patterns, this deep at most (a loop is refused sooner). */
const MAX_SUB_DEPTH = 16;

/**
 * The elements of a pattern, or the first mistake in it. `$name` takes the elements of the
 * pattern `subPatterns(name)` gives, as one group (so that `$name?` makes it optional); the
 * fields it names are fields of the pattern.
 */
export function parsePattern(
  text: string,
  subPatterns?: SubPatterns,
  using: readonly string[] = [],
): { ok: true; elements: readonly PatternElement[] } | ({ ok: false } & PatternError) {
  let i = 0;
  const spliced = new WeakSet<PatternElement>();

  function fail(message: string, offset = i): never {
    throw new PatternSyntaxError(message, offset);
  }

  function skipSpace(): void {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  }

  function describe(at: number): string {
    return at >= text.length ? "the end of the pattern" : `'${text[at]}'`;
  }

  /**
   * A quoted string. In a literal the escapes `\n \t \r \uXXXX`, the quotes and the backslash
   * are read, and any other escape is an error. The argument of REGEX is a regular expression:
   * it is kept as written (`\d` stays `\d`), only an escaped quote becomes the quote.
   */
  function readString(regex = false): string {
    const quote = text[i];
    const start = i++;
    let out = "";
    while (i < text.length && text[i] !== quote) {
      const c = text[i++];
      if (c !== "\\") {
        out += c;
        continue;
      }
      const e = text[i++];
      if (regex && e !== undefined) {
        out += e === quote ? e : "\\" + e;
        continue;
      }
      switch (e) {
        case "n":
          out += "\n";
          break;
        case "t":
          out += "\t";
          break;
        case "r":
          out += "\r";
          break;
        case "u": {
          const hex = text.slice(i, i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("expected four hex digits after \\u", i - 2);
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
          break;
        }
        case undefined:
          fail("unterminated string", start);
          break;
        case "\\":
        case "'":
        case '"':
          out += e;
          break;
        default:
          fail(`unknown escape '\\${e}' in a string (write '\\\\${e}' for a backslash)`, i - 2);
      }
    }
    if (i >= text.length) fail("unterminated string", start);
    i++;
    return out;
  }

  function readName(): string {
    if (text[i] === "`") {
      const end = text.indexOf("`", i + 1);
      if (end < 0) fail("unterminated `name`");
      const name = text.slice(i + 1, end);
      if (name === "") fail("empty field name");
      i = end + 1;
      return name;
    }
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
    if (!m) fail(`expected a field name after ':', found ${describe(i)}`);
    i += m[0].length;
    return m[0];
  }

  function readSequence(inChoice: boolean): PatternElement[] {
    const out: PatternElement[] = [];
    for (;;) {
      skipSpace();
      if (i >= text.length) {
        if (inChoice) fail("expected ')' to close the choice");
        return out;
      }
      const c = text[i];
      if (c === "|" || c === ")") {
        if (!inChoice) fail(`unexpected '${c}' outside a choice`);
        return out;
      }
      const el = readElement();
      // A sub-pattern that is not optional is its elements, in line (the byte scanner then
      // still covers the pattern).
      if (spliced.has(el) && el.kind === "choice") out.push(...el.alternatives[0]!);
      else out.push(el);
    }
  }

  function readElement(): PatternElement {
    const offset = i;
    const c = text[i];
    if (c === "'" || c === '"') {
      const literal = readString();
      if (literal === "") fail("an empty literal matches nothing", offset);
      const { optional, name } = readSuffixes();
      if (name !== null) fail("a literal cannot be named; name a matcher instead", offset);
      return { kind: "literal", text: literal, optional, offset };
    }
    if (c === "(") {
      i++;
      const alternatives: PatternElement[][] = [];
      for (;;) {
        const alt = readSequence(true);
        if (alt.length === 0) fail("an alternative of a choice is empty");
        alternatives.push(alt);
        if (text[i] === ")") break;
        i++; // '|'
      }
      i++;
      const { optional, name } = readSuffixes();
      if (name !== null) fail("a choice cannot be named; name the matchers inside it", offset);
      return { kind: "choice", alternatives, optional, offset };
    }
    if (c === "$") return readSubPattern();
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
    if (!word) fail(`expected a literal, a matcher or '(', found ${describe(i)}`);
    const upper = word[0].toUpperCase();
    const matcher = MATCHER_NAMES.find((m) => m === upper);
    if (!matcher) {
      const best = MATCHER_NAMES.map((m) => [m, editDistance(upper, m)] as const)
        .sort((a, b) => a[1] - b[1])[0]!;
      const hint = best[1] <= 2 ? ` (did you mean '${best[0]}'?)` : "";
      fail(`unknown matcher '${word[0]}'${hint}`, offset);
    }
    i += word[0].length;
    let argument: string | null = null;
    let argumentOffset = -1;
    // KVP takes its separator between pairs, written right after it: `KVP(',')`, `KVP(';')`
    // (`KVP ('a' | 'b')`, with a space, is KVP then a choice).
    const kvpSeparator = matcher === "KVP" && text[i] === "(" &&
      /^\(\s*['"]/.test(text.slice(i));
    if (WITH_ARGUMENT.has(matcher) || kvpSeparator) {
      skipSpace();
      if (text[i] !== "(") fail(`expected '(' and a quoted argument after ${matcher}`);
      i++;
      skipSpace();
      if (text[i] !== "'" && text[i] !== '"') {
        fail(`expected a quoted argument for ${matcher}, found ${describe(i)}`);
      }
      argumentOffset = i;
      argument = readString(matcher === "REGEX");
      if (matcher === "KVP" && !/^[^\s\w"'=]$/.test(argument)) {
        fail(
          `KVP takes one separator character between its pairs, such as ',' or ';', found ${
            JSON.stringify(argument)
          }`,
          argumentOffset,
        );
      }
      skipSpace();
      if (text[i] !== ")") fail(`expected ')' after the argument of ${matcher}`);
      i++;
    }
    const { optional, name } = readSuffixes();
    if (name !== null && UNNAMEABLE.has(matcher)) fail(`${matcher} cannot be named`, offset);
    return { kind: "matcher", matcher, argument, argumentOffset, name, optional, offset };
  }

  function readSubPattern(): PatternElement {
    const offset = i;
    const m = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(i));
    if (!m) fail("expected a sub-pattern name after '$' ($ip_port)");
    const name = m[1]!;
    i += m[0].length;
    const sub = subPatterns?.(name);
    if (sub === undefined) {
      fail(`unknown sub-pattern '$${name}': bind it first, $${name} = '''...''';`, offset);
    }
    if (using.includes(name) || using.length >= MAX_SUB_DEPTH) {
      fail(
        `the sub-pattern '$${name}' uses itself (${
          [...using, name].map((n) => "$" + n).join(" → ")
        })`,
        offset,
      );
    }
    const inner = parsePattern(sub, subPatterns, [...using, name]);
    if (!inner.ok) {
      fail(`in the sub-pattern '$${name}' at offset ${inner.offset}: ${inner.message}`, offset);
    }
    const { optional, name: fieldName } = readSuffixes();
    if (fieldName !== null) {
      fail("a sub-pattern cannot be named; name the matchers inside it", offset);
    }
    const group: PatternElement = {
      kind: "choice",
      alternatives: [inner.elements],
      optional,
      offset,
    };
    if (!optional) spliced.add(group);
    return group;
  }

  function readSuffixes(): { optional: boolean; name: string | null } {
    let optional = false;
    let name: string | null = null;
    for (;;) {
      if (text[i] === "?" && !optional) {
        optional = true;
        i++;
      } else if (text[i] === ":" && name === null) {
        i++;
        name = readName();
      } else return { optional, name };
    }
  }

  try {
    const elements = readSequence(false);
    if (elements.length === 0) return { ok: false, message: "the pattern is empty", offset: 0 };
    return { ok: true, elements };
  } catch (e) {
    if (e instanceof PatternSyntaxError) return { ok: false, message: e.message, offset: e.offset };
    throw e;
  }
}
