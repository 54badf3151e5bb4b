/**
 * The parser: recursive descent from tokens to the syntax tree of engine/front/ast.ts. A syntax error
 * is reported with what was expected and what was found, and the parser skips to the next `;`,
 * so one pass reports every statement's first error. It never throws.
 */

import type {
  BinaryOp,
  Command,
  Expr,
  NamedExpr,
  Param,
  Pipeline,
  Script,
  SelectItem,
  SortKey,
  Source,
  Span,
  Statement,
} from "./ast.ts";
import { type Diagnostic, type DiagnosticCode, didYouMean } from "./diagnostics.ts";
import { describeToken, lex, type Token } from "./lexer.ts";
import { Interval, IpAddr, IpNet } from "../values/values.ts";
import { SOURCE_NAMES } from "./source_catalog.ts";
import { foreignHint } from "./foreign_names.ts";

type CommandKind = Command["kind"];

/** How one kind of command is written: its names after `|`, and how its arguments parse. */
interface CommandSyntax<K extends CommandKind> {
  /** Its names, lower-case; several names may share a kind (`filter` and `filter_out`). */
  readonly names: readonly string[];
  /** Parses what stands between the parentheses; null after a reported mistake. */
  readonly parse: (
    p: Parser,
    name: string,
    at: Token,
    span: Span,
  ) => Extract<Command, { kind: K }> | null;
}

/**
 * Every command, keyed by its kind in the syntax tree (engine/front/ast.ts), in the language
 * reference's order: a kind added to `Command` without an entry here does not compile.
 */
export const COMMANDS: { readonly [K in CommandKind]: CommandSyntax<K> } = {
  select: {
    names: ["select"],
    parse(p, name, at, span) {
      const items = p.parseList(() => p.parseSelectItem());
      if (!p.arity(name, items.length, 1, Infinity, at)) return null;
      return { kind: "select", items, span };
    },
  },
  group: {
    names: ["group"],
    parse(p, name, at, span) {
      const keys = p.parseList(() => p.parseExpr());
      if (!p.arity(name, keys.length, 1, Infinity, at)) return null;
      return { kind: "group", keys, span };
    },
  },
  filter: {
    names: ["filter", "filter_out"],
    parse(p, name, at, span) {
      const args = p.parseList(() => p.parseExpr());
      if (!p.arity(name, args.length, 1, 1, at)) return null;
      return { kind: "filter", condition: args[0]!, negated: name === "filter_out", span };
    },
  },
  sort: {
    names: ["sort"],
    parse(p, name, at, span) {
      const keys = p.parseList(() => p.parseSortKey());
      if (!p.arity(name, keys.length, 1, Infinity, at)) return null;
      return { kind: "sort", keys, span };
    },
  },
  limit: {
    names: ["limit"],
    parse(p, name, at, span) {
      const args = p.parseList(() => p.parseExpr());
      if (!p.arity(name, args.length, 1, 2, at)) return null;
      return { kind: "limit", count: args[0]!, offset: args[1] ?? null, span };
    },
  },
  join: {
    names: ["join", "leftjoin"],
    parse(p, name, _at, span) {
      const right = p.parseSource(`as the right side of ${name}`);
      if (!p.eatKeyword("on")) p.fail(`expected 'on' after the right side of ${name}`);
      const on = p.parseExpr();
      return { kind: "join", right, on, outer: name === "leftjoin", span };
    },
  },
  union: {
    names: ["union"],
    parse(p, name, at, span) {
      const sources = p.parseList(() => p.parseSource("in union"));
      if (!p.arity(name, sources.length, 1, Infinity, at)) return null;
      return { kind: "union", sources, span };
    },
  },
  unnest: {
    names: ["unnest", "leftunnest"],
    parse(p, name, at, span) {
      if (p.isPunct(")")) {
        p.arity(name, 0, 1, 1, at);
        return null;
      }
      const field = p.parseExpr();
      const alias = p.eatKeyword("as") ? p.parseName("after 'as'") : null;
      return {
        kind: "unnest",
        field,
        alias,
        ...(name === "leftunnest" ? { outer: true } : {}),
        span,
      };
    },
  },
  window: {
    names: ["window"],
    parse(p, name, at, span) {
      const items: SelectItem[] = [], by: Expr[] = [], order: SortKey[] = [];
      let part: "items" | "by" | "order" = "items";
      if (!p.isPunct(")")) {
        do {
          const t = p.peek();
          const word = t.kind === "ident" && p.isPunct(":", 1) ? t.text.toLowerCase() : null;
          if (word === "by" || word === "order") {
            if (word === "by" ? part !== "items" : part === "order") {
              p.fail(`expected '${word}:' once, after the items of window and before 'order:'`);
            }
            part = word;
            p.next();
            p.next();
          }
          if (part === "items") {
            if (p.isPunct("*")) p.fail("expected an expression (window keeps every field: no '*')");
            items.push(p.parseSelectItem());
          } else if (part === "by") by.push(p.parseExpr());
          else order.push(p.parseSortKey());
        } while (p.eatPunct(","));
      }
      if (!p.arity(name, items.length, 1, Infinity, at)) return null;
      return { kind: "window", items, by, order, span };
    },
  },
  save: {
    names: ["save"],
    parse(p, name, at, span) {
      const args = p.parseList(() => p.parseExpr());
      if (!p.arity(name, args.length, 1, 1, at)) return null;
      return { kind: "save", path: args[0]!, span };
    },
  },
};

/** The entry of each command name. */
const COMMAND_BY_NAME: ReadonlyMap<string, Pick<CommandSyntax<CommandKind>, "parse">> = new Map(
  Object.values(COMMANDS).flatMap((c) => c.names.map((n) => [n, c] as const)),
);

/** Commands that may follow `|`, in the language reference's order. */
export const COMMAND_NAMES: readonly string[] = [...COMMAND_BY_NAME.keys()];

const SOURCE_FORMS = `a source (@name, @[path], ${SOURCE_NAMES.slice(0, -1).join(", ")} or ${
  SOURCE_NAMES.at(-1)
})`;
const MAX_DEPTH = 200;
/**
 * Operators chained in one expression (`1 + 1 + ...`, `a or b or ...`): each adds a level to the
 * tree that every later pass walks recursively, so a 10 000-term chain would overflow the stack.
 */
export const MAX_EXPR_OPERATORS = 1000;

export interface ParseResult {
  /** The statements that parsed; those with a syntax error are left out. */
  readonly script: Script;
  readonly diagnostics: readonly Diagnostic[];
  /**
   * `$name` and `@name` that a statement with a syntax error was binding: the checker treats
   * them as bound, so one typo does not also report every later use.
   */
  readonly unparsedBindings: ReadonlySet<string>;
}

/** Parses a whole script. Never throws: every mistake is a diagnostic. */
export function parse(text: string): ParseResult {
  const lexed = lex(text);
  const parser = new Parser(lexed.tokens, [...lexed.diagnostics]);
  const statements = parser.parseScript();
  return {
    script: { statements },
    diagnostics: parser.diagnostics,
    unparsedBindings: parser.unparsedBindings,
  };
}

/** Thrown inside the parser to abandon a statement after its syntax error was recorded. */
class StopStatement {}

function spanOf(t: Token): Span {
  return { line: t.line, column: t.column, offset: t.offset };
}

class Parser {
  pos = 0;
  depth = 0;
  /** Chained operators in the current top-level expression (MAX_EXPR_OPERATORS). */
  operators = 0;
  readonly unparsedBindings = new Set<string>();

  constructor(readonly tokens: readonly Token[], readonly diagnostics: Diagnostic[]) {}

  // -- token helpers ---------------------------------------------------------------------------

  peek(ahead = 0): Token {
    return this.tokens[Math.min(this.pos + ahead, this.tokens.length - 1)]!;
  }

  next(): Token {
    const t = this.peek();
    if (t.kind !== "eof") this.pos++;
    return t;
  }

  isPunct(text: string, ahead = 0): boolean {
    const t = this.peek(ahead);
    return t.kind === "punct" && t.text === text;
  }

  isKeyword(text: string, ahead = 0): boolean {
    const t = this.peek(ahead);
    return t.kind === "keyword" && t.text === text;
  }

  eatPunct(text: string): boolean {
    if (!this.isPunct(text)) return false;
    this.pos++;
    return true;
  }

  eatKeyword(text: string): boolean {
    if (!this.isKeyword(text)) return false;
    this.pos++;
    return true;
  }

  expectPunct(text: string, context: string): Token {
    if (!this.isPunct(text)) this.fail(`expected '${text}' ${context}`);
    return this.next();
  }

  /** Records "expected X, found Y" at the current token and abandons the statement. */
  fail(expected: string): never {
    const t = this.peek();
    // A lexical error was reported by the lexer already.
    if (t.kind !== "error") {
      this.report("SYNTAX_ERROR", `${expected}, found ${describeToken(t)}`, t);
    }
    throw new StopStatement();
  }

  report(code: DiagnosticCode, message: string, at: { line: number; column: number }): void {
    this.diagnostics.push({ code, message, line: at.line, column: at.column });
  }

  // -- statements ------------------------------------------------------------------------------

  parseScript(): Statement[] {
    const statements: Statement[] = [];
    while (this.peek().kind !== "eof") {
      if (this.eatPunct(";")) continue;
      const start = this.pos;
      try {
        statements.push(this.parseStatement());
      } catch (e) {
        if (!(e instanceof StopStatement)) throw e;
        this.depth = 0;
        this.recover(start);
      }
    }
    return statements;
  }

  recover(start: number): void {
    const first = this.tokens[start]!;
    const second = this.tokens[start + 1];
    if (
      (first.kind === "param" || first.kind === "stream") &&
      second?.kind === "punct" && second.text === "="
    ) {
      this.unparsedBindings.add((first.kind === "param" ? "$" : "@") + first.text);
    }
    while (this.peek().kind !== "eof" && !this.isPunct(";")) this.pos++;
    this.eatPunct(";");
  }

  parseStatement(): Statement {
    const t = this.peek();
    let statement: Statement;
    let after: string;
    if (t.kind === "ident" && t.text.toLowerCase() === "init" && this.isPunct("(", 1)) {
      statement = this.parseInit();
      after = "after init(...)";
    } else if (t.kind === "param" && this.isPunct("=", 1)) {
      this.pos += 2;
      const value = this.parseExpr();
      statement = { kind: "let", name: t.text, value, span: spanOf(t) };
      after = `after the value of $${t.text}`;
    } else if (t.kind === "stream" && this.isPunct("=", 1)) {
      this.pos += 2;
      const pipeline = this.parsePipeline();
      statement = { kind: "bind", name: t.text, pipeline, span: spanOf(t) };
      after = "or '|' after the pipeline";
    } else {
      const pipeline = this.parsePipeline();
      statement = { kind: "pipeline", pipeline, span: spanOf(t) };
      after = "or '|' after the pipeline";
    }
    if (!this.isPunct(";") && this.peek().kind !== "eof") this.fail(`expected ';' ${after}`);
    this.eatPunct(";");
    return statement;
  }

  parseInit(): Statement {
    const start = this.next();
    this.next(); // (
    const params: Param[] = [];
    if (!this.isPunct(")")) {
      do params.push(this.parseParam()); while (this.eatPunct(","));
    }
    this.expectPunct(")", "after the arguments of init");
    return { kind: "init", params, span: spanOf(start) };
  }

  parseParam(): Param {
    const t = this.peek();
    if (t.kind !== "ident" && t.kind !== "quoted") {
      this.fail("expected an argument name in init, as in init(ip::IPADDR)");
    }
    this.next();
    if (this.eatPunct("::")) {
      const type = this.peek();
      if (type.kind !== "ident") this.fail(`expected a type name after '${t.text}::'`);
      this.next();
      return { kind: "mandatory", name: t.text, typeName: type.text, span: spanOf(t) };
    }
    if (this.eatPunct(":")) {
      const defaultValue = this.parseExpr();
      return { kind: "optional", name: t.text, defaultValue, span: spanOf(t) };
    }
    this.fail(`expected '::TYPE' or ': default' after init argument '${t.text}'`);
  }

  // -- pipelines and sources -------------------------------------------------------------------

  parsePipeline(): Pipeline {
    const start = this.peek();
    const source = this.parseSource("at the start of a pipeline");
    const commands: Command[] = [];
    while (this.eatPunct("|")) {
      const command = this.parseCommand();
      if (command) commands.push(command);
    }
    return { source, commands, span: spanOf(start) };
  }

  parseSource(where: string): Source {
    const t = this.peek();
    switch (t.kind) {
      case "stream":
        this.next();
        return { kind: "streamRef", name: t.text, span: spanOf(t) };
      case "stored": {
        this.next();
        const args = this.isPunct("(") ? this.parseNamedArgs(`@[${t.text}]`) : null;
        return { kind: "stored", path: t.text, args, span: spanOf(t) };
      }
      case "ident": {
        if (!this.isPunct("(", 1)) {
          const hint = ` (a stream bound earlier is written @${t.text})`;
          this.fail(`expected ${SOURCE_FORMS} ${where}${hint}`);
        }
        const lower = t.text.toLowerCase();
        if (COMMAND_NAMES.includes(lower)) {
          this.fail(`expected ${SOURCE_FORMS} ${where}; commands come after '|'`);
        }
        this.next();
        if (lower === "values") return this.parseValues(t);
        const args = this.parseNamedArgs(t.text);
        return { kind: "sourceCall", name: t.text, args, span: spanOf(t) };
      }
      default:
        this.fail(`expected ${SOURCE_FORMS} ${where}`);
    }
  }

  parseValues(start: Token): Source {
    this.next(); // (
    const rows = this.isPunct(")") ? [] : this.parseExprList();
    this.expectPunct(")", "after the rows of VALUES");
    return { kind: "values", rows, span: spanOf(start) };
  }

  /** `(name: expr, ...)` after a source name or a stored script path. */
  parseNamedArgs(owner: string): NamedExpr[] {
    this.expectPunct("(", `after ${owner}`);
    const args: NamedExpr[] = [];
    if (!this.isPunct(")")) {
      do {
        const name = this.peek();
        if (name.kind !== "ident" && name.kind !== "quoted") {
          this.fail(`expected a named argument 'name: value' in ${owner}`);
        }
        this.next();
        this.expectPunct(":", `after argument name '${name.text}' of ${owner}`);
        args.push({ name: name.text, value: this.parseExpr(), span: spanOf(name) });
      } while (this.eatPunct(","));
    }
    this.expectPunct(")", `after the arguments of ${owner}`);
    return args;
  }

  // -- commands --------------------------------------------------------------------------------

  parseCommand(): Command | null {
    const t = this.peek();
    if (t.kind !== "ident") this.fail("expected a command after '|'");
    this.next();
    const name = t.text.toLowerCase();
    const span = spanOf(t);
    const syntax = COMMAND_BY_NAME.get(name);
    if (!syntax) {
      const foreign = foreignHint("command", t.text);
      this.report(
        "UNKNOWN_NAME",
        `unknown command '${t.text}'${foreign ?? didYouMean(t.text, COMMAND_NAMES)}`,
        t,
      );
      // Another language's command (`where x > 1`, `order by x`) need not have brackets: the
      // hint says it all, the rest of the command is skipped.
      if (foreign !== null && !this.isPunct("(")) this.skipCommand();
      else this.skipParenthesized(t.text);
      return null;
    }
    this.expectPunct("(", `after ${name}`);
    const command = syntax.parse(this, name, t, span);
    this.expectPunct(")", `after the arguments of ${name}`);
    return command;
  }

  /** Reports a wrong number of arguments (not a syntax error: parsing goes on). */
  arity(name: string, found: number, min: number, max: number, at: Token): boolean {
    if (found >= min && found <= max) return true;
    this.report("ARITY", `${name} ${expectedCount(min, max)}, found ${found}`, at);
    return false;
  }

  /** Skips the rest of a command, up to the next `|` or `;` outside brackets. */
  skipCommand(): void {
    let depth = 0;
    for (;;) {
      const t = this.peek();
      if (t.kind === "eof") return;
      if (t.kind === "punct") {
        if (depth === 0 && (t.text === "|" || t.text === ";")) return;
        if (t.text === "(" || t.text === "[") depth++;
        if ((t.text === ")" || t.text === "]") && depth > 0) depth--;
      }
      this.next();
    }
  }

  /** Skips `( ... )` with balanced brackets after an unknown command. */
  skipParenthesized(owner: string): void {
    this.expectPunct("(", `after ${owner}`);
    let depth = 1;
    while (depth > 0) {
      const t = this.peek();
      if (t.kind === "eof" || (t.kind === "punct" && t.text === ";")) {
        this.fail(`expected ')' after the arguments of ${owner}`);
      }
      if (t.kind === "punct" && (t.text === "(" || t.text === "[")) depth++;
      if (t.kind === "punct" && (t.text === ")" || t.text === "]")) depth--;
      this.next();
    }
  }

  parseList<T>(item: () => T): T[] {
    const out: T[] = [];
    if (this.isPunct(")")) return out;
    do out.push(item()); while (this.eatPunct(","));
    return out;
  }

  parseSelectItem(): SelectItem {
    const t = this.peek();
    if (t.kind === "punct" && t.text === "*" && (this.isPunct(",", 1) || this.isPunct(")", 1))) {
      this.next();
      return { expr: { kind: "star", span: spanOf(t) }, alias: null, span: spanOf(t) };
    }
    if (
      (t.kind === "ident" || t.kind === "quoted") && this.isPunct(".", 1) &&
      this.isPunct("*", 2) && (this.isPunct(",", 3) || this.isPunct(")", 3))
    ) {
      // `e.*`: every field of the tuple `e` (after `unnest(Records as e)`).
      this.next();
      this.next();
      this.next();
      return {
        expr: { kind: "field", name: t.text, span: spanOf(t) },
        alias: null,
        span: spanOf(t),
        spread: true,
      };
    }
    const expr = this.parseExpr();
    const alias = this.eatKeyword("as") ? this.parseName("after 'as'") : null;
    return { expr, alias, span: spanOf(t) };
  }

  parseSortKey(): SortKey {
    const expr = this.parseExpr();
    if (this.eatKeyword("desc")) return { expr, descending: true };
    this.eatKeyword("asc");
    return { expr, descending: false };
  }

  parseName(where: string): string {
    const t = this.peek();
    if (t.kind !== "ident" && t.kind !== "quoted") this.fail(`expected a name ${where}`);
    this.next();
    return t.text;
  }

  // -- expressions -----------------------------------------------------------------------------

  parseExprList(): Expr[] {
    const out: Expr[] = [];
    do out.push(this.parseExpr()); while (this.eatPunct(","));
    return out;
  }

  parseExpr(): Expr {
    if (this.depth === 0) this.operators = 0;
    if (++this.depth > MAX_DEPTH) {
      this.fail(`expression nested too deeply (more than ${MAX_DEPTH} levels) before this point`);
    }
    const e = this.parseOr();
    this.depth--;
    return e;
  }

  parseOr(): Expr {
    let left = this.parseAnd();
    while (this.eatKeyword("or")) {
      this.chained("or");
      left = { kind: "binary", op: "or", left, right: this.parseAnd(), span: left.span };
    }
    return left;
  }

  parseAnd(): Expr {
    let left = this.parseNot();
    while (this.eatKeyword("and")) {
      this.chained("and");
      left = { kind: "binary", op: "and", left, right: this.parseNot(), span: left.span };
    }
    return left;
  }

  parseNot(): Expr {
    const t = this.peek();
    if (this.eatKeyword("not")) {
      this.enter();
      const operand = this.parseNot();
      this.depth--;
      return { kind: "unary", op: "not", operand, span: spanOf(t) };
    }
    return this.parseComparison();
  }

  /** Counts an operator just read toward MAX_EXPR_OPERATORS. */
  chained(op: string): void {
    if (++this.operators > MAX_EXPR_OPERATORS) {
      this.report(
        "SYNTAX_ERROR",
        `expression too long: more than ${MAX_EXPR_OPERATORS} operators in one expression (this ` +
          `'${op}' is one too many); use 'in (...)' for a list of values, or split it over commands`,
        this.tokens[this.pos - 1]!,
      );
      throw new StopStatement();
    }
  }

  /** Guards recursion that does not pass through parseExpr (`not not ...`, `- - ...`). */
  enter(): void {
    if (++this.depth > MAX_DEPTH) {
      this.fail(`expression nested too deeply (more than ${MAX_DEPTH} levels) before this point`);
    }
  }

  parseComparison(): Expr {
    const left = this.parseAdditive();
    const t = this.peek();
    const span = left.span;
    if (t.kind === "punct" && COMPARISON_OPS.has(t.text)) {
      this.next();
      const op = (t.text === "<>" ? "!=" : t.text) as BinaryOp;
      const right = this.parseAdditive();
      const again = this.peek();
      if (again.kind === "punct" && COMPARISON_OPS.has(again.text)) {
        this.fail("expected 'and' between two comparisons: they do not chain (a < b and b < c)");
      }
      return { kind: "binary", op, left, right, span };
    }
    if (t.kind !== "keyword") return left;
    if (this.eatKeyword("like")) {
      return { kind: "binary", op: "like", left, right: this.parseAdditive(), span };
    }
    if (this.eatKeyword("in")) return this.parseInTail(left, false);
    if (this.isKeyword("not") && (this.isKeyword("in", 1) || this.isKeyword("like", 1))) {
      this.next();
      if (this.eatKeyword("in")) return this.parseInTail(left, true);
      this.next();
      const like: Expr = { kind: "binary", op: "like", left, right: this.parseAdditive(), span };
      return { kind: "unary", op: "not", operand: like, span };
    }
    if (this.eatKeyword("is")) {
      const negated = this.eatKeyword("not");
      if (!this.eatKeyword("null")) {
        this.fail(
          negated ? "expected 'null' after 'is not'" : "expected 'null' or 'not null' after 'is'",
        );
      }
      return { kind: "isNull", operand: left, negated, span };
    }
    return left;
  }

  parseInTail(operand: Expr, negated: boolean): Expr {
    if (this.isPunct("(") && !this.looksLikeTuple()) {
      const open = this.next();
      const list = this.isPunct(")") ? [] : this.parseExprList();
      this.expectPunct(
        ")",
        `to close the list of 'in' opened at line ${open.line}, column ${open.column}`,
      );
      return { kind: "in", operand, list, isList: true, negated, span: operand.span };
    }
    const one = this.parseAdditive();
    return { kind: "in", operand, list: [one], isList: false, negated, span: operand.span };
  }

  parseAdditive(): Expr {
    let left = this.parseMultiplicative();
    for (;;) {
      const t = this.peek();
      if (t.kind !== "punct" || (t.text !== "+" && t.text !== "-")) return left;
      this.next();
      this.chained(t.text);
      const right = this.parseMultiplicative();
      left = { kind: "binary", op: t.text, left, right, span: left.span };
    }
  }

  parseMultiplicative(): Expr {
    let left = this.parseUnary();
    for (;;) {
      const t = this.peek();
      if (t.kind !== "punct" || (t.text !== "*" && t.text !== "/" && t.text !== "%")) return left;
      this.next();
      this.chained(t.text);
      const right = this.parseUnary();
      left = { kind: "binary", op: t.text, left, right, span: left.span };
    }
  }

  parseUnary(): Expr {
    const t = this.peek();
    if (!this.eatPunct("-")) return this.parsePostfix();
    this.enter();
    const operand = this.parseUnary();
    this.depth--;
    // Fold `-5` and `-1 day` into literals, so they count as literals (init defaults, limits).
    if (operand.kind === "literal" && typeof operand.value === "number") {
      const value = operand.value === 0 ? 0 : -operand.value;
      return { kind: "literal", value, numberKind: operand.numberKind, span: spanOf(t) };
    }
    if (operand.kind === "literal" && operand.value instanceof Interval) {
      return { kind: "literal", value: new Interval(-operand.value.ms || 0), span: spanOf(t) };
    }
    return { kind: "unary", op: "-", operand, span: spanOf(t) };
  }

  parsePostfix(): Expr {
    let e = this.parsePrimary();
    for (;;) {
      if (this.eatPunct(".")) {
        const t = this.peek();
        if (t.kind !== "ident" && t.kind !== "quoted" && t.kind !== "keyword") {
          this.fail("expected a field name after '.'");
        }
        this.next();
        e = { kind: "member", object: e, name: t.text, span: e.span };
      } else if (this.isPunct("[")) {
        const open = this.next();
        const index = this.parseExpr();
        this.expectPunct(
          "]",
          `to close the index opened at line ${open.line}, column ${open.column}`,
        );
        e = { kind: "index", object: e, index, span: e.span };
      } else return e;
    }
  }

  parsePrimary(): Expr {
    const t = this.peek();
    const span = spanOf(t);
    switch (t.kind) {
      case "number":
        this.next();
        return { kind: "literal", value: t.num, numberKind: t.numberKind, span };
      case "string":
        this.next();
        return { kind: "literal", value: t.text, span, quoted: t.quoted };
      case "ip":
        this.next();
        return { kind: "literal", value: new IpAddr(4, t.num), span };
      case "net": {
        this.next();
        const prefix = t.prefix ?? 32;
        const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
        const address = new IpAddr(4, (t.num & mask) >>> 0);
        return { kind: "literal", value: new IpNet(address, prefix), span };
      }
      case "interval":
        this.next();
        return { kind: "literal", value: new Interval(t.num), span };
      case "param":
        this.next();
        return { kind: "param", name: t.text, span };
      case "position":
        this.next();
        return { kind: "position", index: t.num, span };
      case "quoted":
        this.next();
        return { kind: "field", name: t.text, span };
      case "keyword":
        if (t.text === "true" || t.text === "false" || t.text === "null") {
          this.next();
          const value = t.text === "null" ? null : t.text === "true";
          return { kind: "literal", value, span };
        }
        break;
      case "ident":
        this.next();
        if (this.isPunct("(")) return this.parseCall(t);
        return { kind: "field", name: t.text, span };
      case "punct":
        if (t.text === "(") return this.parseParenthesized();
        break;
    }
    if (t.kind === "stream" || t.kind === "stored") {
      this.fail("expected an expression (a stream cannot be used as a value)");
    }
    if (t.kind === "keyword" && (t.text === "asc" || t.text === "desc" || t.text === "on")) {
      this.fail(`expected an expression (a field named ${t.text} is written \`${t.text}\`)`);
    }
    this.fail("expected an expression");
  }

  parseCall(name: Token): Expr {
    this.next(); // (
    const distinct = this.countDistinct(name);
    if (distinct) return distinct;
    const args: Expr[] = [];
    if (!this.isPunct(")")) {
      do {
        const t = this.peek();
        if (
          t.kind === "punct" && t.text === "*" && (this.isPunct(")", 1) || this.isPunct(",", 1))
        ) {
          this.next();
          args.push({ kind: "star", span: spanOf(t) });
        } else args.push(this.parseExpr());
      } while (this.eatPunct(","));
    }
    this.expectPunct(")", `after the arguments of ${name.text}`);
    return { kind: "call", name: name.text, args, span: spanOf(name) };
  }

  /**
   * `count(distinct x)`, the SQL spelling of `count_distinct(x)`; `count(distinct)` still counts
   * a field named distinct. Called after the `(`.
   */
  countDistinct(name: Token): Expr | null {
    const t = this.peek();
    if (name.text.toLowerCase() !== "count" || t.kind !== "ident") return null;
    if (t.text.toLowerCase() !== "distinct" || this.isPunct(")", 1) || this.isPunct(",", 1)) {
      return null;
    }
    this.next();
    const arg = this.parseExpr();
    this.expectPunct(")", `after the argument of count(distinct ...)`);
    return { kind: "call", name: "count_distinct", args: [arg], span: spanOf(name) };
  }

  looksLikeTuple(): boolean {
    const name = this.peek(1);
    return (name.kind === "ident" || name.kind === "quoted") && this.isPunct(":", 2);
  }

  /** `(expr)` or a tuple `(a: 1, b: 'x')`. */
  parseParenthesized(): Expr {
    const open = this.peek();
    const where = `at line ${open.line}, column ${open.column}`;
    if (this.looksLikeTuple()) {
      this.next();
      const fields: NamedExpr[] = [];
      do {
        const name = this.peek();
        if (name.kind !== "ident" && name.kind !== "quoted") {
          this.fail("expected a field name in the tuple");
        }
        this.next();
        this.expectPunct(":", `after tuple field '${name.text}'`);
        fields.push({ name: name.text, value: this.parseExpr(), span: spanOf(name) });
      } while (this.eatPunct(","));
      this.expectPunct(")", `to close the tuple opened ${where}`);
      return { kind: "tuple", fields, span: spanOf(open) };
    }
    this.next();
    const inner = this.parseExpr();
    this.expectPunct(")", `to close '(' opened ${where}`);
    return inner;
  }
}

const COMPARISON_OPS: ReadonlySet<string> = new Set(["=", "!=", "<>", "<", "<=", ">", ">=", "~"]);

/** `takes 1 argument`, `takes 1 or 2 arguments`, `takes at least 1 argument`. */
export function expectedCount(min: number, max: number): string {
  const plural = (n: number) => (n === 1 ? "argument" : "arguments");
  if (max === Infinity) return `takes at least ${min} ${plural(min)}`;
  if (min === max) return `takes ${min} ${plural(min)}`;
  if (max === min + 1) return `takes ${min} or ${max} arguments`;
  return `takes ${min} to ${max} arguments`;
}
