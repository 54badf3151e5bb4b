/**
 * Trawl's language for CodeMirror: a stream tokenizer (LANGUAGE.md section 1) that tells
 * commands, sources, functions, keywords, PARSE matchers (also inside pattern strings), strings
 * (with '''raw''' ones over several lines), numbers, IP addresses, `$` and `@` names and
 * comments apart. The words come from the server (`GET /language`) into `Vocabulary`.
 */

import { StreamLanguage, type StringStream } from "@codemirror/language";
import type { CompletionSource } from "@codemirror/autocomplete";

export interface Vocabulary {
  commands: Set<string>;
  sources: Set<string>;
  functions: Set<string>;
  matchers: Set<string>;
  keywords: Set<string>;
}

export function emptyVocabulary(): Vocabulary {
  return {
    commands: new Set(),
    sources: new Set(),
    functions: new Set(),
    matchers: new Set(),
    keywords: new Set(),
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
