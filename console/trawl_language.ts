/**
 * Trawl's language for CodeMirror: a stream tokenizer (LANGUAGE.md section 1) that tells
 * commands, sources, functions, keywords, PARSE matchers (also inside pattern strings), strings
 * (with '''raw''' ones over several lines), numbers, IP addresses, `$` and `@` names and
 * comments apart; a second one for a PARSE pattern on its own (the pattern pane); and `contextAt`,
 * where the cursor is for completion (in a pattern, in another string, after a pipe, in a
 * command's arguments). The words and their help come from the server (`GET /language`).
 */

import { StreamLanguage, type StringStream } from "@codemirror/language";
import type { CompletionSource } from "@codemirror/autocomplete";

export interface Vocabulary {
  commands: Set<string>;
  sources: Set<string>;
  functions: Set<string>;
  matchers: Set<string>;
  keywords: Set<string>;
  /** Signature and description by `helpKey(kind, name)`. */
  help: Map<string, WordHelp>;
}

/** A word's signature and one-line description (`GET /language`'s `help`). */
export interface WordHelp {
  readonly kind: "command" | "source" | "function" | "matcher";
  readonly name: string;
  readonly signature: string;
  readonly description: string;
}

export function helpKey(kind: WordHelp["kind"], name: string): string {
  return `${kind} ${name}`;
}

export function emptyVocabulary(): Vocabulary {
  return {
    commands: new Set(),
    sources: new Set(),
    functions: new Set(),
    matchers: new Set(),
    keywords: new Set(),
    help: new Map(),
  };
}

/** Where in a script the cursor is, for completion: what was written before it says. */
export interface CursorContext {
  /** Inside a string: a pattern (a '''raw''' one, or the value of `pattern:`), or another. */
  readonly string: "pattern" | "other" | null;
  /** Right after `|`: a command comes next. */
  readonly afterPipe: boolean;
  /** Inside parentheses: an expression, where the fields of the stream are wanted. */
  readonly inArguments: boolean;
  /** Offset of the last `|` outside strings, comments and parentheses, or -1. */
  readonly pipe: number;
  /** Inside a raw string: its text up to the cursor (a pattern's literals are quoted in it). */
  readonly raw?: string;
}

/**
 * Whether a matcher may come at the end of `pattern` (a pattern's text up to the cursor): not
 * right after `:` (a field's name), nor inside one of its quoted literals.
 */
export function matcherExpected(pattern: string): boolean {
  if (/:\s*[A-Za-z0-9_]*$/.test(pattern)) return false;
  let quote: string | null = null;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (quote !== null && ch === "\\") i++;
    else if (quote !== null && ch === quote) quote = null;
    else if (quote === null && (ch === "'" || ch === '"')) quote = ch;
  }
  return quote === null;
}

/** The context at the end of `before` (the script up to the cursor). */
export function contextAt(before: string): CursorContext {
  let depth = 0;
  let pipe = -1;
  let i = 0;
  const n = before.length;
  const inside = (string: CursorContext["string"]): CursorContext => ({
    string,
    afterPipe: false,
    inArguments: depth > 0,
    pipe,
  });
  while (i < n) {
    const ch = before[i]!;
    if (before.startsWith("//", i)) {
      const end = before.indexOf("\n", i);
      if (end < 0) return inside("other");
      i = end + 1;
    } else if (before.startsWith("/*", i)) {
      const end = before.indexOf("*/", i + 2);
      if (end < 0) return inside("other");
      i = end + 2;
    } else if (before.startsWith("'''", i) || before.startsWith('"""', i)) {
      const fence = before.slice(i, i + 3);
      const end = before.indexOf(fence, i + 3);
      if (end < 0) return { ...inside("pattern"), raw: before.slice(i + 3) };
      i = end + 3;
    } else if (ch === "'" || ch === '"') {
      let j = i + 1;
      while (j < n && before[j] !== ch && before[j] !== "\n") j += before[j] === "\\" ? 2 : 1;
      if (j >= n) return inside(/\bpattern\s*:\s*$/.test(before.slice(0, i)) ? "pattern" : "other");
      i = j + 1;
    } else {
      if (ch === "(" || ch === "[") depth++;
      else if ((ch === ")" || ch === "]") && depth > 0) depth--;
      else if (ch === ";") depth = 0;
      else if (ch === "|" && depth === 0) pipe = i;
      i++;
    }
  }
  return {
    string: null,
    afterPipe: pipe >= 0 && before.slice(pipe + 1).trim() === "",
    inArguments: depth > 0,
    pipe,
  };
}

interface State {
  /** Inside a block comment or a '''raw''' string that spans lines. */
  inside: "comment" | "raw" | null;
}

const IP = /^\d{1,3}(?:\.\d{1,3}){3}(?:\/\d{1,3})?(?![\d.])/;
const NUMBER = /^\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/;
const WORD = /^[A-Za-z_][A-Za-z0-9_]*/;

export function trawlLanguage(words: Vocabulary, autocomplete: CompletionSource) {
  /** Inside a pattern string: matcher names stand out, the rest is string. */
  const patternText = (stream: StringStream, end: string): string => {
    if (stream.match(/^[A-Z][A-Z0-9]*/, false)) {
      const word = stream.match(/^[A-Z][A-Z0-9]*/) as RegExpMatchArray;
      if (words.matchers.has(word[0])) return "macroName";
      return "string";
    }
    while (!stream.eol()) {
      if (stream.match(end, false)) return "string";
      if (stream.match(/^[A-Z]/, false)) return "string";
      stream.next();
    }
    return "string";
  };
  return StreamLanguage.define<State>({
    name: "trawl",
    startState: () => ({ inside: null }),
    copyState: (s) => ({ ...s }),
    token(stream, state) {
      if (state.inside === "comment") {
        if (stream.skipTo("*/")) {
          stream.match("*/");
          state.inside = null;
        } else stream.skipToEnd();
        return "comment";
      }
      if (state.inside === "raw") {
        if (stream.match("'''")) {
          state.inside = null;
          return "string";
        }
        return patternText(stream, "'''");
      }
      if (stream.eatSpace()) return null;
      if (stream.match("//")) {
        stream.skipToEnd();
        return "comment";
      }
      if (stream.match("/*")) {
        state.inside = "comment";
        return "comment";
      }
      if (stream.match("'''")) {
        state.inside = "raw";
        return "string";
      }
      if (stream.match(/^'(?:[^'\\]|\\.)*'?/) || stream.match(/^"(?:[^"\\]|\\.)*"?/)) {
        return "string";
      }
      if (stream.match(IP)) return "atom";
      if (stream.match(NUMBER)) return "number";
      if (stream.match(/^[$@][A-Za-z_][A-Za-z0-9_]*/)) return "variableName.special";
      const word = stream.match(WORD) as RegExpMatchArray | null;
      if (word) {
        const text = word[0];
        const lower = text.toLowerCase();
        if (lower === "true" || lower === "false") return "bool";
        if (lower === "null") return "null";
        if (words.keywords.has(lower)) return "operatorKeyword";
        if (words.sources.has(text.toUpperCase()) && stream.match(/^\s*\(/, false)) {
          return "typeName";
        }
        if (words.commands.has(lower) && stream.match(/^\s*\(/, false)) return "keyword";
        if (words.functions.has(lower) && stream.match(/^\s*\(/, false)) {
          return "variableName.function";
        }
        if (words.matchers.has(text)) return "macroName";
        return "variableName";
      }
      if (stream.match(/^[|;]/)) return "separator";
      if (stream.match(/^(?:::|!=|<>|<=|>=|[-+*/%=<>~])/)) return "operator";
      if (stream.match(/^[()[\]]/)) return "bracket";
      stream.next();
      return null;
    },
    languageData: {
      commentTokens: { line: "//", block: { open: "/*", close: "*/" } },
      closeBrackets: { brackets: ["(", "[", "'", '"'] },
      autocomplete,
    },
  });
}

/**
 * A PARSE pattern on its own (LANGUAGE.md section 6), for the pattern pane: matchers, quoted
 * literals, `:name` fields, `$name` sub-patterns, `?`, `|` and parentheses; a word that is no
 * matcher is marked.
 */
export function patternLanguage(words: Vocabulary, autocomplete: CompletionSource) {
  return StreamLanguage.define<{ afterColon: boolean }>({
    name: "trawl-pattern",
    startState: () => ({ afterColon: false }),
    copyState: (s) => ({ ...s }),
    token(stream, state) {
      if (stream.eatSpace()) return null;
      const afterColon = state.afterColon;
      state.afterColon = false;
      if (stream.match(/^'(?:[^'\\]|\\.)*'?/) || stream.match(/^"(?:[^"\\]|\\.)*"?/)) {
        return "string";
      }
      if (stream.match(":")) {
        state.afterColon = true;
        return "punctuation";
      }
      if (stream.match(/^\$[A-Za-z_][A-Za-z0-9_]*/)) return "variableName.special";
      const word = stream.match(WORD) as RegExpMatchArray | null;
      if (word) {
        if (afterColon) return "propertyName";
        return words.matchers.has(word[0].toUpperCase()) ? "macroName" : "invalid";
      }
      if (stream.match(/^[?|]/)) return "operator";
      if (stream.match(/^[()]/)) return "bracket";
      stream.next();
      return null;
    },
    languageData: { closeBrackets: { brackets: ["(", "'", '"'] }, autocomplete },
  });
}
