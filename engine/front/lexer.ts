/**
 * The lexer: script text to tokens. Lexical mistakes (an unterminated string, a stray character)
 * become diagnostics plus an `error` token, so the parser can skip the statement without
 * reporting the same problem twice.
 */

import type { Quoted } from "./ast.ts";
import type { Diagnostic } from "./diagnostics.ts";
import { unitMillis } from "../values/interval.ts";

/** Escapes of regular expressions (`\d`, `\s`, `\.`), for the hint towards raw strings. */
const REGEX_ESCAPES = "dDwWsSbB.()[]{}+*?|^$/-";

export type TokenKind =
  | "ident" // a plain identifier: field, function, command or type name
  | "quoted" // a backquoted field name; never a keyword
  | "keyword" // one of KEYWORDS, value lower-cased
  | "string"
  | "number"
  | "ip" // 192.168.0.1, value the uint32
  | "net" // 10.0.0.0/8, value the uint32 of the address as written, prefix apart
  | "interval" // 1 h 30 min, value in milliseconds
  | "param" // $name
  | "stream" // @name
  | "position" // @1
  | "stored" // @[path]
  | "punct" // operators and punctuation
  | "error" // a lexical mistake, already reported
  | "eof";

/**
 * Where the character at `offset` of a string literal's value is in the script: the literal
 * starts (its opening quote) at `at`. Escapes (`\n`, `\u0041`) count as one character of the
 * value; a raw string's lines are the script's.
 */
export function placeInString(
  at: { readonly line: number; readonly column: number; readonly offset: number },
  quoted: Quoted,
  offset: number,
): { line: number; column: number; offset: number } {
  const src = quoted.source;
  let i = 0;
  for (let n = 0; n < offset && i < src.length; n++) {
    if (quoted.fence === 3 || src[i] !== "\\") i++;
    else i += src[i + 1] === "u" && /^[0-9A-Fa-f]{4}$/.test(src.slice(i + 2, i + 6)) ? 6 : 2;
  }
  const before = src.slice(0, i);
  const breaks = before.split("\n").length - 1;
  const column = breaks === 0
    ? at.column + quoted.fence + i
    : before.length - before.lastIndexOf("\n");
  return { line: at.line + breaks, column, offset: at.offset + quoted.fence + i };
}

export interface Token {
  readonly kind: TokenKind;
  /** Identifier or keyword (lower-cased), string contents, operator, name after `$`/`@`, path. */
  readonly text: string;
  /** For number, ip, net, interval, position. */
  readonly num: number;
  /** For numbers: `42` INTEGER (fits 32 bits), `42L` or larger LONG, `3.5` or `1e3` DOUBLE. */
  readonly numberKind?: "INTEGER" | "LONG" | "DOUBLE";
  /** For networks: the prefix length. */
  readonly prefix?: number;
  /** For strings: the text between the quotes as written, to place an offset in the value. */
  readonly quoted?: Quoted;
  readonly line: number;
  readonly column: number;
  readonly offset: number;
}

export const KEYWORDS: ReadonlySet<string> = new Set([
  "and",
  "or",
  "not",
  "in",
  "like",
  "is",
  "null",
  "true",
  "false",
  "as",
  "asc",
  "desc",
  "on",
]);

// Longest first, so `<=` wins over `<` and `::` over `:`.
const PUNCT = [
  "::",
  "!=",
  "<>",
  "<=",
  ">=",
  "+",
  "-",
  "*",
  "/",
  "%",
  "=",
  "<",
  ">",
  "~",
  ":",
  ",",
  ";",
  "|",
  "(",
  ")",
  "[",
  "]",
  ".",
];

const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /\d+(\.\d+)?([eE][+-]?\d+)?/y;
const IPV4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,3}))?(?![\d.])/y;
/** Three or more dots between digits that are not a valid address: `1.2.3`, `1.2.3.4.5`. */
const DOTTED = /\d+(?:\.\d+){2,}/y;
const WORD_AFTER_NUMBER = /[ \t]*([A-Za-z_][A-Za-z0-9_]*)/y;
const NUMBER_AND_UNIT = /[ \t]+(\d+(?:\.\d+)?)[ \t]*([A-Za-z_][A-Za-z0-9_]*)/y;

export interface LexResult {
  readonly tokens: readonly Token[];
  readonly diagnostics: readonly Diagnostic[];
}

/** Splits a script into tokens; the last token is always `eof`. Never throws. */
export function lex(text: string): LexResult {
  const tokens: Token[] = [];
  const diagnostics: Diagnostic[] = [];
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lineStarts.push(i + 1);

  function lineOf(offset: number): number {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  function push(kind: TokenKind, start: number, text: string, extra?: Partial<Token>): void {
    const l = lineOf(start);
    tokens.push({
      kind,
      text,
      num: 0,
      ...extra,
      line: l + 1,
      column: start - lineStarts[l]! + 1,
      offset: start,
    });
  }

  function fail(start: number, message: string): void {
    const l = lineOf(start);
    diagnostics.push({
      code: "SYNTAX_ERROR",
      message,
      line: l + 1,
      column: start - lineStarts[l]! + 1,
    });
    push("error", start, message);
  }

  let pos = 0;
  while (pos < text.length) {
    const c = text[pos]!;
    if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v") {
      pos++;
      continue;
    }
    if (c === "/" && text[pos + 1] === "/") {
      const nl = text.indexOf("\n", pos);
      pos = nl < 0 ? text.length : nl + 1;
      continue;
    }
    if (c === "/" && text[pos + 1] === "*") {
      const end = text.indexOf("*/", pos + 2);
      if (end < 0) {
        fail(pos, "unterminated comment: '/*' has no closing '*/'");
        pos = text.length;
      } else pos = end + 2;
      continue;
    }
    const start = pos;
    if (isDigit(c)) {
      pos = lexNumeric(start);
      continue;
    }
    if (isIdentStart(c)) {
      IDENT.lastIndex = pos;
      const word = IDENT.exec(text)![0];
      pos += word.length;
      const lower = word.toLowerCase();
      if (KEYWORDS.has(lower)) push("keyword", start, lower);
      else push("ident", start, word);
      continue;
    }
    if (c === "'" || c === '"') {
      pos = text.startsWith(c + c + c, pos) ? lexRawString(start, c) : lexString(start, c);
      continue;
    }
    if (c === "`") {
      const end = findOnLine(pos + 1, "`");
      if (end < 0) {
        fail(start, "unterminated field name: '`' has no closing '`' on the same line");
        pos = lineEnd(pos);
      } else if (end === pos + 1) {
        fail(start, "empty field name ``");
        pos = end + 1;
      } else {
        push("quoted", start, text.slice(pos + 1, end));
        pos = end + 1;
      }
      continue;
    }
    if (c === "$") {
      IDENT.lastIndex = pos + 1;
      const m = IDENT.exec(text);
      if (!m) fail(start, "expected a name after '$', as in $since");
      else push("param", start, m[0]);
      pos = m ? pos + 1 + m[0].length : pos + 1;
      continue;
    }
    if (c === "@") {
      pos = lexAt(start);
      continue;
    }
    const op = PUNCT.find((p) => text.startsWith(p, pos));
    if (op) {
      push("punct", start, op);
      pos += op.length;
      continue;
    }
    const cp = text.codePointAt(pos)!;
    const ch = String.fromCodePoint(cp);
    fail(start, `unexpected character '${ch}'${c === "!" ? " (did you mean '!='?)" : ""}`);
    pos += ch.length;
  }
  push("eof", text.length, "");
  return { tokens, diagnostics };

  function lineEnd(from: number): number {
    const nl = text.indexOf("\n", from);
    return nl < 0 ? text.length : nl;
  }

  function findOnLine(from: number, ch: string): number {
    const end = text.indexOf(ch, from);
    return end >= 0 && end < lineEnd(from) ? end : -1;
  }

  function lexAt(start: number): number {
    const next = text[start + 1];
    if (next === "[") {
      const end = findOnLine(start + 2, "]");
      const path = end < 0 ? "" : text.slice(start + 2, end).trim();
      if (end < 0) {
        fail(start, "unterminated stored path: '@[' has no closing ']' on the same line");
        return lineEnd(start);
      }
      if (path === "") fail(start, "empty stored path '@[]'; expected a path as in @[/user/t.sxt]");
      else push("stored", start, path);
      return end + 1;
    }
    if (next !== undefined && isDigit(next)) {
      let end = start + 1;
      while (end < text.length && isDigit(text[end])) end++;
      push("position", start, text.slice(start + 1, end), {
        num: Number(text.slice(start + 1, end)),
      });
      return end;
    }
    IDENT.lastIndex = start + 1;
    const m = IDENT.exec(text);
    if (!m) {
      fail(start, "expected a name, a position or a path after '@', as in @hits, @1 or @[/t.sxt]");
      return start + 1;
    }
    push("stream", start, m[0]);
    return start + 1 + m[0].length;
  }

  function lexString(start: number, quote: string): number {
    let out = "";
    let i = start + 1;
    while (i < text.length) {
      const ch = text[i];
      if (ch === quote) {
        push("string", start, out, { quoted: { fence: 1, source: text.slice(start + 1, i) } });
        return i + 1;
      }
      if (ch === "\n") break;
      if (ch !== "\\") {
        out += ch;
        i++;
        continue;
      }
      const e = text[i + 1];
      if (e === "n") out += "\n";
      else if (e === "r") out += "\r";
      else if (e === "t") out += "\t";
      else if (e === "\\" || e === "'" || e === '"') out += e;
      else if (e === "u" && /^[0-9A-Fa-f]{4}$/.test(text.slice(i + 2, i + 6))) {
        out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
        i += 6;
        continue;
      } else {
        const shown = e === undefined || e === "\n" ? "\\" : "\\" + e;
        // `\d`, `\w`, `\.`, ...: most likely a regular expression, which a raw string keeps.
        const hint = e !== undefined && REGEX_ESCAPES.includes(e)
          ? `; for a regular expression write a raw string, '''${shown}''', where backslashes stay as written`
          : "";
        fail(
          i,
          `invalid escape '${shown}' in a string; escapes are \\n \\r \\t \\\\ \\' \\" \\uXXXX${hint}`,
        );
        return skipString(i + 1, quote);
      }
      i += 2;
    }
    fail(start, `unterminated string: ${quote} has no closing ${quote} on the same line`);
    return lineEnd(start);
  }

  function skipString(from: number, quote: string): number {
    for (let i = from; i < text.length; i++) {
      if (text[i] === "\\") i++;
      else if (text[i] === quote) return i + 1;
      else if (text[i] === "\n") return i;
    }
    return text.length;
  }

  function lexRawString(start: number, quote: string): number {
    const fence = quote + quote + quote;
    const end = text.indexOf(fence, start + 3);
    if (end < 0) {
      fail(start, `unterminated string: ${fence} has no closing ${fence}`);
      return text.length;
    }
    push("string", start, text.slice(start + 3, end), {
      quoted: { fence: 3, source: text.slice(start + 3, end) },
    });
    return end + 3;
  }

  /** A number, an IPv4 address or network, or an interval (`1 h 30 min`). */
  function lexNumeric(start: number): number {
    IPV4.lastIndex = start;
    const ip = IPV4.exec(text);
    if (ip) return lexIp(start, ip);
    DOTTED.lastIndex = start;
    const dotted = DOTTED.exec(text);
    if (dotted) {
      fail(
        start,
        `invalid IPv4 address '${dotted[0]}': it has four parts 0 to 255, as in 10.0.0.1`,
      );
      return start + dotted[0].length;
    }
    NUMBER.lastIndex = start;
    const m = NUMBER.exec(text)!;
    let end = start + m[0].length;
    const isDouble = m[1] !== undefined || m[2] !== undefined;
    if (!isDouble && (text[end] === "L" || text[end] === "l") && !isIdentChar(text[end + 1])) {
      return pushInteger(start, m[0], end + 1, true);
    }
    // A unit word right after the number makes an interval; further `number unit` pairs join.
    WORD_AFTER_NUMBER.lastIndex = end;
    const w = WORD_AFTER_NUMBER.exec(text);
    if (w && unitMillis(w[1]!) !== undefined) {
      let ms = Number(m[0]) * unitMillis(w[1]!)!;
      end = WORD_AFTER_NUMBER.lastIndex;
      for (;;) {
        NUMBER_AND_UNIT.lastIndex = end;
        const more = NUMBER_AND_UNIT.exec(text);
        if (!more || unitMillis(more[2]!) === undefined) break;
        ms += Number(more[1]) * unitMillis(more[2]!)!;
        end = NUMBER_AND_UNIT.lastIndex;
      }
      if (ms > Number.MAX_SAFE_INTEGER) {
        fail(start, `interval '${text.slice(start, end)}' is too large`);
      } else push("interval", start, text.slice(start, end), { num: Math.round(ms) });
      return end;
    }
    if (isIdentChar(text[end])) {
      IDENT.lastIndex = end;
      const word = IDENT.exec(text)?.[0] ?? text[end]!;
      fail(
        start,
        `invalid number '${
          m[0]
        }${word}': '${word}' is not a time unit (units are ms, s, min, h, day, week, ...)`,
      );
      return end + word.length;
    }
    if (isDouble) {
      if (!Number.isFinite(Number(m[0]))) {
        fail(start, `number ${m[0]} is too large for a DOUBLE`);
        return end;
      }
      push("number", start, m[0], { num: Number(m[0]), numberKind: "DOUBLE" });
      return end;
    }
    return pushInteger(start, m[0], end, false);
  }

  function pushInteger(start: number, digits: string, end: number, long: boolean): number {
    const n = Number(digits);
    if (n > Number.MAX_SAFE_INTEGER) {
      fail(start, `integer ${digits} is too large: integers are exact only up to 9007199254740991`);
      return end;
    }
    const kind = long || n > 2147483647 ? "LONG" : "INTEGER";
    push("number", start, text.slice(start, end), { num: n, numberKind: kind });
    return end;
  }

  function lexIp(start: number, ip: RegExpExecArray): number {
    const end = start + ip[0].length;
    const octets = [ip[1], ip[2], ip[3], ip[4]].map(Number);
    if (octets.some((o) => o > 255)) {
      fail(start, `invalid IPv4 address '${ip[0]}': each part must be 0 to 255`);
      return end;
    }
    const bits = ((octets[0]! << 24) >>> 0) + (octets[1]! << 16) + (octets[2]! << 8) + octets[3]!;
    if (ip[5] === undefined) {
      push("ip", start, ip[0], { num: bits });
      return end;
    }
    const prefix = Number(ip[5]);
    if (prefix > 32) {
      fail(start, `invalid IPv4 network '${ip[0]}': the prefix length must be 0 to 32`);
      return end;
    }
    push("net", start, ip[0], { num: bits, prefix });
    return end;
  }
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= "0" && c <= "9";
}

function isIdentStart(c: string): boolean {
  return (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c === "_";
}

function isIdentChar(c: string | undefined): boolean {
  return c !== undefined && (isIdentStart(c) || isDigit(c));
}

/** How a token is named in "expected X, found Y" messages. */
export function describeToken(t: Token): string {
  switch (t.kind) {
    case "eof":
      return "the end of the script";
    case "punct":
      return `'${t.text}'`;
    case "keyword":
      return `keyword '${t.text}'`;
    case "ident":
      return `'${t.text}'`;
    case "quoted":
      return `field \`${t.text}\``;
    case "string": {
      const shown = t.text.length > 20 ? t.text.slice(0, 20) + "..." : t.text;
      return `string '${shown.replace(/\n/g, "\\n")}'`;
    }
    case "number":
      return `number ${t.text}`;
    case "ip":
      return `IP address ${t.text}`;
    case "net":
      return `network ${t.text}`;
    case "interval":
      return `interval '${t.text}'`;
    case "param":
      return `'$${t.text}'`;
    case "stream":
      return `'@${t.text}'`;
    case "position":
      return `position '@${t.text}'`;
    case "stored":
      return `'@[${t.text}]'`;
    case "error":
      return "an invalid token";
  }
}
