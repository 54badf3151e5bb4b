/**
 * Compiles a PARSE pattern once per query into one sticky regular expression with a capture
 * group per named field, plus a typed converter per field. Conversion is lazy: an extractor
 * made for some fields converts only those.
 *
 * Choices made where LANGUAGE.md section 6 is silent:
 * - A record is matched from its first character; text after the last element is ignored
 *   unless the pattern ends with EOL, which demands the end of the line.
 * - `X?` lets X be absent; an optional INT, LONG, DOUBLE, BOOL, WORD, IPV4, IPV6, IPADDR,
 *   HTTPDATE, ISO8601, TIMESTAMP, JSON or KVP also takes a lone `-` (the log convention for "no
 *   value", the bytes of a combined log) as absent. Either way the field is null. The explicit
 *   form `(INT:bytes | '-')` works too. A lazy LD or DATA right before an optional part is
 *   split into "present, else absent" readings first (optional_parts.ts), so that the part is
 *   absent only when no length of the LD lets it match with the rest of the pattern.
 * - A name may appear in several alternatives of a choice (same type); the field takes the
 *   alternative that matched. Fields inside a choice or optional part are nullable, and so are
 *   fields whose text can fail to convert (INT beyond 32 bits, LONG beyond 2^53, an impossible
 *   date, an IPv4 octet above 255, an invalid IPv6 address, malformed JSON): those give null, the record still matches.
 * - JSON and KVP fields have the static type ANY: their shape is known only from the data. JSON
 *   gives the JSON's own values (objects become tuples), nested up to 7 levels; KVP gives a tuple
 *   of STRING values (`key=value`, `key="quoted value"`, separated by spaces or tabs).
 * - DQS gives the text between the quotes with `\"`, `\\`, `\n`, `\t` unescaped.
 * - REGEX('...') is inserted as written (JavaScript syntax, engine/values/user_regex.ts: no
 *   backreferences or lookaround); its own groups are not fields.
 * - A pattern that could backtrack without bound (backtracking.ts: such a REGEX, or a run that
 *   could end at many places followed by another run, as in `LD 'a' NSPACE ' '`) runs on the
 *   linear-time engine (re2js, on one record's lines at a time) instead of V8's.
 * - Only EOL crosses a line end (and a REGEX that matches `\n` on purpose).
 */

import type { Field, Schema } from "../values/types.ts";
import type { Row } from "../values/values.ts";
import type { PatternElement } from "./pattern_ast.ts";
import { type MakeConverter, type MatcherSpec, matcherSpec } from "./matchers.ts";
import { parsePattern, type SubPatterns } from "./parse_pattern.ts";
import { type ByteScanner, type ColumnSink, makeByteScanner } from "./byte_scanner.ts";
import { forRe2, regexShape } from "../values/user_regex.ts";
import { needsLinearEngine } from "./backtracking.ts";
import { splitOptionalParts } from "./optional_parts.ts";
import { RE2JS } from "re2js";
import type { PushedFilter } from "../plan/plan.ts";
import type { DirectGroups } from "../plan/context.ts";
import {
  type ExtractCounts,
  type ExtractOptions,
  type Extractor,
  type FieldSlot,
  makeExtractor,
  type StickyMatcher,
} from "./extractor.ts";

export interface CompiledPattern {
  /** The named fields in pattern order, with the types of their matchers. */
  readonly fields: Schema;
  /** True when the pattern has EOL before its end, so that a record spans lines. */
  readonly multiLine: boolean;
  /** The most lines a record can span: 1 plus the EOLs before the pattern's end. */
  readonly maxLines: number;
  /** The regular expression, for `explain` and tests. */
  readonly source: string;
  /** An extractor that converts only `neededFields` (names of `fields`). */
  makeExtractor(neededFields: readonly string[]): Extractor;
  /**
   * A scanner over the bytes of lines giving the rows of `neededFields` (byte_scanner.ts), with
   * `filter` tested on the fields it reads first, or null when the pattern has a shape it does
   * not cover; never for multi-line patterns. With `direct`, it folds the records it can into
   * that grouping instead of giving their rows. With `sink`, every record goes to its columns
   * and no row is made (the column cache's fill; `filter` and `direct` are then left out).
   */
  makeByteScanner(
    neededFields: readonly string[],
    filter?: PushedFilter,
    direct?: DirectGroups,
    sink?: ColumnSink,
  ): ByteScanner | null;
  /**
   * Where each named field's text lies in a match of the pattern at the start of `line`
   * (`[start, end)`, absent for a field that took no text), or null when the line does not
   * match: for the pattern developer (`POST /patterns/try`), on short sample lines.
   */
  spans(line: string): PatternSpans | null;
  /** All fields of the records in `text[start, end)`; see Extractor.extractAll. */
  extractAll(
    text: string,
    start: number,
    end: number,
    onRow: (row: Row) => void,
    options?: ExtractOptions,
  ): ExtractCounts;
}

/** Where a match of a pattern at the start of a line ends, and where its fields lie. */
export interface PatternSpans {
  readonly end: number;
  /** `[start, end)` by field name; absent for a field that took no text. */
  readonly fields: ReadonlyMap<string, readonly [number, number]>;
}

export type CompileResult =
  | { readonly ok: true; readonly pattern: CompiledPattern }
  | { readonly ok: false; readonly message: string; readonly offset: number };

class CompileError extends Error {
  constructor(message: string, readonly offset: number) {
    super(message);
  }
}

interface FieldInfo {
  field: Field;
  groups: { group: number; makeConverter: MakeConverter }[];
}

export interface CompileOptions {
  readonly timeZone: string;
  /**
   * Records are cut by PARSE's `record_start` and may hold several lines: DATA (any text, line
   * breaks included) is allowed. Without it DATA is refused, as it would run across records.
   */
  readonly records?: boolean;
  /** The text of the sub-pattern `$name` (a script constant), for patterns that use them. */
  readonly subPatterns?: SubPatterns;
  /**
   * Run on the linear-time engine whatever the pattern's shape (tests compare both engines);
   * by default only patterns that could backtrack without bound do (backtracking.ts).
   */
  readonly linear?: boolean;
}

/** Compiles `text`; a mistake comes back with its offset in `text`. */
export function compilePattern(text: string, options: CompileOptions): CompileResult {
  const parsed = parsePattern(text, options.subPatterns);
  if (!parsed.ok) return { ok: false, message: parsed.message, offset: parsed.offset };
  try {
    const elements = splitOptionalParts(parsed.elements, (el) => dashIsAbsent(el, options));
    if (elements === null) {
      throw new CompileError(
        "the pattern has too many optional parts after LD or DATA to read each as present or " +
          "absent: name fewer of them optional, or put a literal between an LD and its optional part",
        0,
      );
    }
    // On the pattern as written: each reading of a split backtracks no more than the pattern
    // with its optional part as written, and its second reading's runs come after the first
    // reading's have all failed, not after them in one match.
    const linear = options.linear === true || needsLinearEngine(parsed.elements);
    const all = buildRegex(elements, options, null, linear);
    const regex = newMatcherMaker(all, linear, options.records ?? false);
    const schema = Array.from(all.fields.values(), (f) => f.field);
    const make = (needed: readonly string[]) => {
      // Only the needed fields capture: every capture is a string the match allocates.
      const wanted = new Set(needed);
      const some = needed.length === schema.length ? all : buildRegex(
        elements,
        options,
        (name) => wanted.has(name),
        linear,
      );
      const re = some === all ? regex : newMatcherMaker(some, linear, options.records ?? false);
      return makeExtractor(re, slotsOf(some.fields), needed, all.maxLines);
    };
    let every: Extractor | null = null;
    let spanMatcher: SpanMatcher | null = null;
    const pattern: CompiledPattern = {
      fields: schema,
      multiLine: all.maxLines > 1,
      maxLines: all.maxLines,
      source: all.source,
      makeExtractor: make,
      makeByteScanner: (needed, filter, direct, sink) =>
        all.maxLines > 1
          ? null
          : makeByteScanner(parsed.elements, needed, options.timeZone, filter, direct, sink),
      extractAll(text, start, end, onRow, options) {
        every ??= make(schema.map((f) => f.name));
        return every.extractAll(text, start, end, onRow, options);
      },
      spans: (line) => fieldSpans(all, spanMatcher ??= spanMatcherOf(all, linear), line),
    };
    return { ok: true, pattern };
  } catch (e) {
    if (e instanceof CompileError) return { ok: false, message: e.message, offset: e.offset };
    throw e;
  }
}

/** Where the fields of `built` lie in a match at the start of `line`; null when none. */
/** A match at the start of a line: its end and each capture group's range, or null. */
type SpanMatcher = (line: string) => {
  readonly end: number;
  range(group: number): readonly [number, number] | undefined;
} | null;

/** The matcher `spans` uses: V8's with indices, or re2js's for a pattern that needs it. */
function spanMatcherOf(built: BuiltRegex, linear: boolean): SpanMatcher {
  if (linear) {
    const re = RE2JS.compile(`^(?:${forRe2(built.source)})`);
    return (line) => {
      const m = re.matcher(line);
      if (!m.lookingAt()) return null;
      return { end: m.end(0), range: (g) => m.start(g) >= 0 ? [m.start(g), m.end(g)] : undefined };
    };
  }
  const re = new RegExp(built.source, "yd");
  return (line) => {
    re.lastIndex = 0;
    const m = re.exec(line);
    if (m === null) return null;
    return { end: m.index + m[0].length, range: (g) => m.indices?.[g] };
  };
}

/** Where the fields of `built` lie in a match at the start of `line`; null when none. */
function fieldSpans(built: BuiltRegex, match: SpanMatcher, line: string): PatternSpans | null {
  const m = match(line);
  if (m === null) return null;
  const spans = new Map<string, readonly [number, number]>();
  for (const [name, info] of built.fields) {
    // A name in several alternatives: the one that matched.
    const found = info.groups.map((g) => m.range(g.group)).find((r) => r !== undefined);
    if (found) spans.set(name, found);
  }
  return { end: m.end, fields: spans };
}

/** A maker of sticky matchers of `built`: V8's sticky RegExp, or re2js on one record's lines. */
function newMatcherMaker(
  built: BuiltRegex,
  linear: boolean,
  records: boolean,
): () => StickyMatcher {
  if (!linear) {
    const regex = newRegex(built.source, "y");
    return () => new RegExp(regex.source, regex.flags);
  }
  newRegex(built.source, ""); // the JavaScript syntax's own mistakes, as V8 words them
  let re: RE2JS;
  try {
    re = RE2JS.compile(`^(?:${forRe2(built.source)})`);
  } catch (e) {
    throw new CompileError(
      `the pattern is not a valid regular expression: ${(e as Error).message}`,
      0,
    );
  }
  // A record cut by record_start is matched whole, whatever its number of lines.
  return () => new LinearSticky(re, records ? Infinity : built.maxLines);
}

function newRegex(source: string, flags: string): RegExp {
  try {
    return new RegExp(source, flags);
  } catch (e) {
    throw new CompileError(
      `the pattern is not a valid regular expression: ${(e as Error).message}`,
      0,
    );
  }
}

/**
 * A sticky matcher on re2js: it matches the record's lines from `lastIndex` (the pattern's last
 * EOL is `$` there), which keeps each match linear in the record.
 */
class LinearSticky implements StickyMatcher {
  lastIndex = 0;
  constructor(private readonly re: RE2JS, private readonly maxLines: number) {}

  exec(text: string): ArrayLike<string | undefined> | null {
    const start = this.lastIndex;
    let end = start;
    for (let k = 0; k < this.maxLines; k++) {
      const nl = text.indexOf("\n", end);
      if (nl < 0) {
        end = text.length;
        break;
      }
      end = k === this.maxLines - 1 ? nl : nl + 1;
    }
    const m = this.re.exec(text.slice(start, end)) as (string | undefined)[] | null;
    if (m === null) return null;
    // A final EOL takes the line break here (no lookahead): the match ends before it.
    const length = m[0]!.length;
    this.lastIndex = start + (m[0]!.endsWith("\n") ? length - 1 : length);
    return m;
  }
}

function slotsOf(fields: ReadonlyMap<string, FieldInfo>): Map<string, FieldSlot> {
  return new Map(
    Array.from(fields.values(), (f) => [
      f.field.name,
      { name: f.field.name, groups: f.groups },
    ]),
  );
}

interface BuiltRegex {
  readonly source: string;
  readonly fields: ReadonlyMap<string, FieldInfo>;
  readonly maxLines: number;
}

/**
 * The regular expression of `elements`; `capture` says which named fields get a capture group
 * (null: all of them), the others match the same text in a non-capturing group.
 */
function buildRegex(
  elements: readonly PatternElement[],
  options: CompileOptions,
  capture: ((name: string) => boolean) | null,
  linear = false,
): BuiltRegex {
  const fields = new Map<string, FieldInfo>();
  let groupCount = 0;

  /** `atEnd`: nothing follows the sequence in the pattern. */
  function sequence(
    seq: readonly PatternElement[],
    nullable: boolean,
    atEnd: boolean,
  ): [string, Set<string>] {
    let out = "";
    const names = new Set<string>();
    for (let k = 0; k < seq.length; k++) {
      const el = seq[k]!;
      const elAtEnd = atEnd && k === seq.length - 1;
      const [src, elNames] = element(el, nullable, elAtEnd);
      for (const n of elNames) {
        if (names.has(n)) throw new CompileError(`the field '${n}' is named twice`, el.offset);
        names.add(n);
      }
      out += src;
    }
    return [out, names];
  }

  function element(
    el: PatternElement,
    nullable: boolean,
    atEnd: boolean,
  ): [string, Set<string>] {
    const optional = optionalSource;
    switch (el.kind) {
      case "literal":
        return [optional(RegExp.escape(el.text), el.optional, false), new Set()];
      case "choice": {
        const names = new Set<string>();
        const alts = el.alternatives.map((alt) => {
          // The readings of a split (optional_parts.ts) hold the same fields as the pattern.
          const [src, altNames] = sequence(alt, el.split === true ? nullable : true, atEnd);
          for (const n of altNames) names.add(n);
          return src;
        });
        return [optional(`(?:${alts.join("|")})`, el.optional, false), names];
      }
      case "matcher": {
        if (el.matcher === "EOL") {
          // An EOL that nothing follows (the pattern's last, or the last of an optional part
          // at its end) is the end of the line, also the end of the text; another a line break.
          // The linear engine has no lookahead: there it takes the line break, which its
          // matcher gives back (LinearSticky).
          if (atEnd) {
            const end = linear ? "\\r?(?:\\n|$)" : "\\r?(?=\\n|$)";
            return [optional(end, el.optional, false), new Set()];
          }
          return [optional("\\r?\\n", el.optional, false), new Set()];
        }
        if (el.matcher === "DATA" && !options.records) {
          throw new CompileError(
            "DATA matches across lines: use it in a PARSE with record_start, which says where a record begins",
            el.offset,
          );
        }
        let spec: MatcherSpec;
        try {
          spec = matcherSpec(el.matcher, el.argument, options.timeZone, atEnd);
        } catch (e) {
          throw new CompileError((e as Error).message, el.argumentOffset);
        }
        if (el.matcher === "REGEX") {
          const refused = regexShape(spec.body).refused;
          if (refused) {
            // After the opening quote (exact when the argument has no quote escaped in it).
            const at = el.argumentOffset + 1 + refused.offset;
            throw new CompileError(`REGEX: ${refused.message}`, at);
          }
        }
        // A REGEX's own capture groups take numbers too: after the field's group that wraps it.
        const ownGroups = el.matcher === "REGEX" ? userGroups(spec.body, el.argumentOffset) : 0;
        // An LD that runs to the line's end (DATA: the record's end) before absent parts; on
        // the linear engine, which has no lookahead, `(?m:$)` is a line's end in a record.
        const toEnd = el.toEnd !== true
          ? ""
          : el.matcher === "DATA"
          ? (linear ? "$" : "(?![\\s\\S])")
          : (linear ? "\\r?(?m:$)" : "(?=\\r?\\n|$)");
        if (el.name === null || (capture !== null && !capture(el.name))) {
          groupCount += ownGroups;
          const source = `${spec.before}(?:${spec.body})${spec.after}${toEnd}`;
          return [optional(source, el.optional, spec.dashIsAbsent), new Set()];
        }
        const group = ++groupCount;
        groupCount += ownGroups;
        const body = `${spec.before}(${spec.body})${spec.after}${toEnd}`;
        const nowNullable = nullable || el.optional || spec.canFail;
        const known = fields.get(el.name);
        if (known) {
          if (known.field.type.kind !== spec.type.kind) {
            throw new CompileError(
              `the field '${el.name}' is named again with another type (${spec.type.kind}, was ${known.field.type.kind})`,
              el.offset,
            );
          }
          known.groups.push({ group, makeConverter: spec.makeConverter });
          known.field = { ...known.field, nullable: known.field.nullable || nowNullable };
        } else {
          fields.set(el.name, {
            field: { name: el.name, type: spec.type, nullable: nowNullable },
            groups: [{ group, makeConverter: spec.makeConverter }],
          });
        }
        return [optional(body, el.optional, spec.dashIsAbsent), new Set([el.name])];
      }
    }
  }

  const [source] = sequence(elements, false, true);
  return { source, fields, maxLines: lineBreaks(elements, true) + 1 };
}

/**
 * `source`, optional when `isOptional` (a lone `-` counting as absent when `dashIsAbsent`).
 * Written `(?:X|)`, not `(?:X)?`: V8 refuses an empty match of a `?` group and makes X longer
 * instead (`(LD:x)?` took a character), where re2js takes it; both read `(?:X|)` alike.
 */
function optionalSource(source: string, isOptional: boolean, dashIsAbsent: boolean): string {
  if (!isOptional) return source;
  return `(?:${dashIsAbsent ? `${source}|-` : source}|)`;
}

/** Whether an optional `el` takes a lone `-` as absent (a matcher whose spec says so). */
function dashIsAbsent(el: PatternElement, options: CompileOptions): boolean {
  if (el.kind !== "matcher") return false;
  try {
    return matcherSpec(el.matcher, el.argument, options.timeZone).dashIsAbsent;
  } catch {
    return false; // compiling the element reports the mistake
  }
}

/**
 * The line breaks a match of `seq` can take at most: an EOL with something after it (the one
 * at the end is the line's end), a choice its longest alternative.
 */
function lineBreaks(seq: readonly PatternElement[], atEnd: boolean): number {
  let count = 0;
  seq.forEach((el, k) => {
    const elAtEnd = atEnd && k === seq.length - 1;
    if (el.kind === "matcher" && el.matcher === "EOL" && !elAtEnd) count++;
    if (el.kind === "choice") {
      count += Math.max(0, ...el.alternatives.map((alt) => lineBreaks(alt, elAtEnd)));
    }
  });
  return count;
}

/** The number of capture groups of a REGEX argument; a bad one is the user's mistake. */
function userGroups(source: string, offset: number): number {
  let re: RegExp;
  try {
    re = new RegExp(`${source}|`);
  } catch (e) {
    throw new CompileError(`invalid REGEX: ${(e as Error).message}`, offset);
  }
  return re.exec("")!.length - 1;
}
