/**
 * What editors ask of the language, without a query: its words (`GET /language`, the console's
 * completion and highlighting) and what a PARSE pattern extracts from sample lines
 * (`POST /patterns/try`, the console's pattern pane). Pure and synchronous; nothing is read.
 */

import { FUNCTION_CATALOG } from "./front/checker_catalog.ts";
import { KEYWORDS } from "./front/lexer.ts";
import { COMMANDS } from "./front/parser.ts";
import { SOURCE_NAMES } from "./front/source_catalog.ts";
import { compilePattern } from "./pattern/compile_pattern.ts";
import { MATCHER_NAMES } from "./pattern/parse_pattern.ts";
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
}

export function languageWords(): LanguageWords {
  return {
    commands: Object.values(COMMANDS).flatMap((c) => c.names),
    sources: SOURCE_NAMES,
    functions: FUNCTION_CATALOG.map((f) => ({
      name: f.name,
      minArgs: f.minArgs,
      maxArgs: Number.isFinite(f.maxArgs) ? f.maxArgs : null,
      aggregate: f.aggregate,
    })),
    matchers: MATCHER_NAMES,
    keywords: [...KEYWORDS],
  };
}

/** A pattern tried on sample lines: per line, its first record, or null when none matched. */
export type PatternTrial =
  | { readonly ok: true; readonly fields: Schema; readonly rows: readonly (Row | null)[] }
  | { readonly ok: false; readonly message: string; readonly offset: number };

/** Compiles `pattern` (timestamps without a zone read in `timeZone`) and runs it on each line. */
export function tryPattern(
  pattern: string,
  lines: readonly string[],
  timeZone: string,
): PatternTrial {
  const compiled = compilePattern(pattern, { timeZone });
  if (!compiled.ok) return { ok: false, message: compiled.message, offset: compiled.offset };
  const rows = lines.map((line) => {
    let found: Row | null = null;
    compiled.pattern.extractAll(line, 0, line.length, (row) => found ??= row);
    return found;
  });
  return { ok: true, fields: compiled.pattern.fields, rows };
}
