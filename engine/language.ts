/**
 * What editors ask of the language, without a query: its words (`GET /language`, the console's
 * completion and highlighting) and what a PARSE pattern extracts from sample lines
 * (`POST /patterns/try`, the console's pattern pane). Pure and synchronous; nothing is read.
 */

import { FUNCTION_CATALOG } from "./front/checker_catalog.ts";
import { COMMAND_HELP, FUNCTION_HELP, MATCHER_HELP, SOURCE_HELP } from "./language_help.ts";
import { KEYWORDS } from "./front/lexer.ts";
import { COMMANDS } from "./front/parser.ts";
import { SOURCE_NAMES } from "./front/source_catalog.ts";
import {
  type CompiledPattern,
  compilePattern,
  type PatternSpans,
} from "./pattern/compile_pattern.ts";
import { MATCHER_NAMES, parsePattern } from "./pattern/parse_pattern.ts";
import type { PatternElement } from "./pattern/pattern_ast.ts";
import type { Schema } from "./values/types.ts";
import type { Row } from "./values/values.ts";

/** The words of the language, from the engine's own catalogues. */
export interface LanguageWords {
  readonly commands: readonly string[];
  readonly sources: readonly string[];
  /** `maxArgs` null: variadic. */
  readonly functions: readonly {
    readonly name: string;
    readonly minArgs: number;
    readonly maxArgs: number | null;
    readonly aggregate: boolean;
  }[];
  readonly matchers: readonly string[];
  readonly keywords: readonly string[];
  /** A signature and a one-line description of each command, source, function and matcher. */
  readonly help: readonly WordHelp[];
}

export interface WordHelp {
  readonly kind: "command" | "source" | "function" | "matcher";
  /** As the other lists spell it (functions in lower case). */
  readonly name: string;
  /** How it is written: `substr(s, start [, len])`. */
  readonly signature: string;
  readonly description: string;
}

export function languageWords(): LanguageWords {
  const commands = Object.values(COMMANDS).flatMap((c) => c.names);
  const functions = FUNCTION_CATALOG.map((f) => f.name);
  const help = (
    kind: WordHelp["kind"],
    names: readonly string[],
    table: Readonly<Record<string, readonly [string, string]>>,
  ): WordHelp[] =>
    names.flatMap((name) => {
      const entry = table[name];
      return entry ? [{ kind, name, signature: entry[0], description: entry[1] }] : [];
    });
  return {
    commands,
    sources: SOURCE_NAMES,
    functions: FUNCTION_CATALOG.map((f) => ({
      name: f.name,
      minArgs: f.minArgs,
      maxArgs: Number.isFinite(f.maxArgs) ? f.maxArgs : null,
      aggregate: f.aggregate,
    })),
    matchers: MATCHER_NAMES,
    keywords: [...KEYWORDS],
    help: [
      ...help("command", commands, COMMAND_HELP),
      ...help("source", SOURCE_NAMES, SOURCE_HELP),
      ...help("function", functions, FUNCTION_HELP),
      ...help("matcher", MATCHER_NAMES, MATCHER_HELP),
    ],
  };
}

/** How a pattern read one sample line. */
export interface LineTrial {
  /** Its first record, or null when the pattern did not match. */
  readonly row: Row | null;
  /** Where each field's text lies in the line, `[start, end)` (the matched part's fields). */
  readonly spans: Readonly<Record<string, readonly [number, number]>>;
  /**
   * For a line that does not match: where matching stopped (the offset in the line after the
   * elements that matched), and the pattern element that failed there (its offset in the
   * pattern and its text); null when the line matches or no element can be blamed.
   */
  readonly stop: {
    readonly at: number;
    readonly element: { readonly offset: number; readonly text: string };
  } | null;
}

/** A pattern tried on sample lines: per line, its first record, or null when none matched. */
export type PatternTrial =
  | {
    readonly ok: true;
    readonly fields: Schema;
    readonly rows: readonly (Row | null)[];
    readonly lines: readonly LineTrial[];
  }
  | { readonly ok: false; readonly message: string; readonly offset: number };

/** Compiles `pattern` (timestamps without a zone read in `timeZone`) and runs it on each line. */
export function tryPattern(
  pattern: string,
  lines: readonly string[],
  timeZone: string,
): PatternTrial {
  const compiled = compilePattern(pattern, { timeZone });
  if (!compiled.ok) return { ok: false, message: compiled.message, offset: compiled.offset };
  const parsed = parsePattern(pattern);
  const elements = parsed.ok ? parsed.elements : [];
  // The pattern's first k elements (k < elements.length), compiled when a line first needs them.
  const prefixes = new Map<number, CompiledPattern | null>();
  const prefix = (k: number): CompiledPattern | null => {
    if (!prefixes.has(k)) {
      const text = pattern.slice(0, elements[k]!.offset);
      const c = text.trim() === "" ? null : compilePattern(text, { timeZone });
      prefixes.set(k, c?.ok ? c.pattern : null);
    }
    return prefixes.get(k)!;
  };
  const stopOf = (line: string): LineTrial["stop"] => {
    // The most elements that match from the line's start: the next one is where it failed.
    let k = 0;
    let matched: PatternSpans | null = null;
    for (let n = 1; n < elements.length; n++) {
      const spans = prefix(n)?.spans(line) ?? null;
      if (spans === null) break;
      k = n;
      matched = spans;
    }
    const failed = elements[k];
    if (failed === undefined) return null;
    // A lazy LD or DATA last in the prefix took an arbitrary length: matching stopped before it.
    let j = k;
    while (j > 0 && isLazy(elements[j - 1]!)) j--;
    const at = j === 0 ? 0 : j === k ? matched!.end : prefix(j)?.spans(line)?.end ?? 0;
    const next = elements[k + 1]?.offset ?? pattern.length;
    return {
      at,
      element: { offset: failed.offset, text: pattern.slice(failed.offset, next).trim() },
    };
  };
  const trials = lines.map((line): LineTrial => {
    let row: Row | null = null;
    compiled.pattern.extractAll(line, 0, line.length, (r) => row ??= r);
    const spans = compiled.pattern.spans(line);
    if (row !== null && spans !== null) {
      return { row, spans: Object.fromEntries(spans.fields), stop: null };
    }
    const stop = row === null ? stopOf(line) : null;
    // The fields of the elements that matched before it stopped.
    const partial = stop && stop.element.offset > 0
      ? prefix(elements.findIndex((e) => e.offset === stop.element.offset))?.spans(line)
      : null;
    return { row, spans: Object.fromEntries(partial?.fields ?? []), stop };
  });
  return {
    ok: true,
    fields: compiled.pattern.fields,
    rows: trials.map((t) => t.row),
    lines: trials,
  };
}

function isLazy(el: PatternElement): boolean {
  return el.kind === "matcher" && (el.matcher === "LD" || el.matcher === "DATA");
}
