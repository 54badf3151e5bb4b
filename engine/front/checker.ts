/**
 * Static checks: everything that can be found without reading data. Names used before they are
 * bound, unknown functions and sources, wrong numbers of arguments, `init` placement and types,
 * aggregates outside select, `group` without a select, positions out of range, a script
 * without a result. All problems are collected in one pass.
 */

import { foreignHint } from "./foreign_names.ts";
import {
  assertNever,
  type Command,
  type Expr,
  type Pipeline,
  type Script,
  type Source,
  type Span,
  type Statement,
} from "./ast.ts";
import { type Diagnostic, type DiagnosticCode, didYouMean } from "./diagnostics.ts";
import { FUNCTION_CATALOG, lookupFunction } from "./checker_catalog.ts";
import { expectedCount } from "./parser.ts";
import { lookupSource, SOURCE_NAMES } from "./source_catalog.ts";
import { SCALAR_KINDS, scalarByName } from "../values/types.ts";
import { Interval, IpAddr, IpNet } from "../values/values.ts";

export interface CheckOptions {
  /** `$name`/`@name` bound by statements that did not parse: not reported when used. */
  readonly assumeBound?: ReadonlySet<string>;
  /** The parser dropped statements: skip checks about the script as a whole (NO_RESULT). */
  readonly incomplete?: boolean;
}

/** Where an expression is, which decides what it may contain. */
interface ExprContext {
  /** Named in messages: `filter`, `select`, `the value of $x`. */
  readonly where: string;
  readonly aggregates: boolean;
  /** Window functions are allowed (in window(...)). */
  readonly windows?: boolean;
  /**
   * Positions `@n`: not allowed (undefined), allowed up to a number of columns (Infinity after
   * `select(*)`), or allowed but with no select before (null).
   */
  readonly positions?: number | null;
}

/** Runs the static checks on a parsed script; returns the problems, in no particular order. */
export function checkScript(script: Script, options: CheckOptions = {}): Diagnostic[] {
  const checker = new Checker(script, options.assumeBound ?? new Set());
  checker.run(options.incomplete ?? false);
  return checker.diagnostics;
}

/**
 * Operators in one pipeline, counting those of the streams it reads (`@a = ... ; @a | ...`): the
 * plan nests one node per operator, and planning and running it recurse through the nesting.
 */
export const MAX_PIPELINE_OPERATORS = 1000;

class Checker {
  readonly diagnostics: Diagnostic[] = [];
  readonly bound = new Set<string>();
  /** Operators of each bound stream with those of the streams it reads. */
  readonly streamSizes = new Map<string, number>();
  /** Where each name is first bound, for "bound later, at line N". */
  readonly bindings = new Map<string, Span>();

  constructor(readonly script: Script, readonly assumeBound: ReadonlySet<string>) {
    for (const s of script.statements) {
      const names = s.kind === "let"
        ? ["$" + s.name]
        : s.kind === "bind"
        ? ["@" + s.name]
        : s.kind === "init"
        ? s.params.map((p) => "$" + p.name)
        : [];
      for (const n of names) if (!this.bindings.has(n)) this.bindings.set(n, s.span);
    }
  }

  report(code: DiagnosticCode, message: string, at: Span): void {
    this.diagnostics.push({ code, message, line: at.line, column: at.column });
  }

  run(incomplete: boolean): void {
    let initSeen = false;
    let results = 0;
    this.script.statements.forEach((s, i) => {
      if (s.kind === "init") {
        if (initSeen) {
          this.report(
            "SYNTAX_ERROR",
            "init appears twice; a script declares its arguments once",
            s.span,
          );
        } else if (i !== 0) {
          this.report("SYNTAX_ERROR", "init must be the first statement of the script", s.span);
        }
        initSeen = true;
      }
      if (s.kind === "bind" || s.kind === "pipeline") results++;
      this.checkStatement(s);
    });
    if (!incomplete && results === 0) {
      const at = this.script.statements[0]?.span ?? { line: 1, column: 1, offset: 0 };
      this.report(
        "NO_RESULT",
        "the script has no pipeline, so it has no result; end it with one, such as READ_JSON(src: 'logs/*.json')",
        at,
      );
    }
  }

  checkStatement(s: Statement): void {
    switch (s.kind) {
      case "init":
        this.checkInit(s);
        return;
      case "let":
        this.checkExpr(s.value, { where: `the value of $${s.name}`, aggregates: false });
        this.bound.add("$" + s.name);
        return;
      case "bind":
        this.checkPipeline(s.pipeline);
        this.bound.add("@" + s.name);
        this.streamSizes.set("@" + s.name, this.pipelineSize(s.pipeline).size);
        return;
      case "pipeline":
        this.checkPipeline(s.pipeline);
        return;
      default:
        assertNever(s);
    }
  }

  checkInit(s: Extract<Statement, { kind: "init" }>): void {
    const seen = new Set<string>();
    for (const p of s.params) {
      if (seen.has(p.name)) {
        this.report("BAD_ARGUMENT", `init argument '${p.name}' is declared twice`, p.span);
      }
      seen.add(p.name);
      if (p.kind === "mandatory") {
        if (!scalarByName(p.typeName)) {
          const hint = didYouMean(p.typeName, SCALAR_KINDS) ||
            `; types are ${SCALAR_KINDS.join(", ")}`;
          this.report(
            "UNKNOWN_NAME",
            `unknown type '${p.typeName}' of init argument '${p.name}'${hint}`,
            p.span,
          );
        }
      } else if (!isLiteralValue(p.defaultValue)) {
        this.report(
          "BAD_ARGUMENT",
          `the default of init argument '${p.name}' must be a literal (a number, string, ` +
            `boolean, interval, IP address, network, or T('...'), IP('...'), NET('...')), ` +
            `found ${describeExpr(p.defaultValue)}`,
          p.defaultValue.span,
        );
      }
    }
    for (const p of s.params) this.bound.add("$" + p.name);
  }

  checkPipeline(p: Pipeline): void {
    this.checkSize(p);
    this.checkSource(p.source);
    let selectColumns: number | null = null;
    let previous: Command["kind"] | null = null;
    for (const c of p.commands) {
      this.checkCommand(c, selectColumns, previous);
      if (c.kind === "select") {
        const star = c.items.some((i) => i.expr.kind === "star");
        selectColumns = star ? Infinity : c.items.length;
      }
      previous = c.kind;
    }
  }

  /**
   * The operators `p` plans into (its source, its commands and the streams they read), and the
   * first command that takes the count past MAX_PIPELINE_OPERATORS.
   */
  pipelineSize(p: Pipeline): { size: number; over: Command | null } {
    const sourceSize = (s: Source) =>
      s.kind === "streamRef" ? this.streamSizes.get("@" + s.name) ?? 1 : 1;
    let size = sourceSize(p.source);
    let over: Command | null = null;
    for (const c of p.commands) {
      if (c.kind === "join") size += sourceSize(c.right);
      if (c.kind === "union") { for (const s of c.sources) size += sourceSize(s); }
      size++;
      if (size > MAX_PIPELINE_OPERATORS) over ??= c;
    }
    return { size, over };
  }

  checkSize(p: Pipeline): void {
    const { size, over } = this.pipelineSize(p);
    if (size <= MAX_PIPELINE_OPERATORS) return;
    // A stream read here that is too long already has its diagnostic.
    const sources = [
      p.source,
      ...p.commands.flatMap((c) =>
        c.kind === "join" ? [c.right] : c.kind === "union" ? c.sources : []
      ),
    ];
    const tooLong = (s: Source) =>
      s.kind === "streamRef" && (this.streamSizes.get("@" + s.name) ?? 0) > MAX_PIPELINE_OPERATORS;
    if (sources.some(tooLong)) return;
    this.report(
      "SYNTAX_ERROR",
      `pipeline too long: ${size} operators, counting those of the streams it reads, more than ` +
        `${MAX_PIPELINE_OPERATORS}; save an intermediate result as a table, or combine commands`,
      over?.span ?? p.span,
    );
  }

  checkCommand(c: Command, selectColumns: number | null, previous: Command["kind"] | null): void {
    const plain = (where: string): ExprContext => ({ where, aggregates: false });
    switch (c.kind) {
      case "select":
        for (const item of c.items) {
          if (item.expr.kind !== "star") {
            this.checkExpr(item.expr, { where: "select", aggregates: true });
          }
        }
        return;
      case "group":
        if (previous !== "select") {
          this.report(
            "SYNTAX_ERROR",
            "group must come right after a select: it groups the aggregates of that select",
            c.span,
          );
        }
        for (const k of c.keys) {
          this.checkExpr(k, {
            where: "group",
            aggregates: false,
            positions: previous === "select" ? selectColumns : null,
          });
        }
        return;
      case "filter":
        this.checkExpr(c.condition, plain(c.negated ? "filter_out" : "filter"));
        return;
      case "sort":
        for (const k of c.keys) {
          this.checkExpr(k.expr, { where: "sort", aggregates: false, positions: selectColumns });
        }
        return;
      case "limit":
        for (const e of [c.count, c.offset]) {
          if (!e) continue;
          this.checkExpr(e, plain("limit"));
          if (e.kind === "literal" && !(Number.isInteger(e.value) && (e.value as number) >= 0)) {
            this.report(
              "BAD_ARGUMENT",
              `limit takes whole numbers of rows (0 or more), found ${describeExpr(e)}`,
              e.span,
            );
          }
        }
        return;
      case "join":
        this.checkSource(c.right);
        this.checkExpr(c.on, plain(c.outer ? "leftjoin" : "join"));
        return;
      case "union":
        for (const s of c.sources) this.checkSource(s);
        return;
      case "unnest":
        this.checkExpr(c.field, plain("unnest"));
        return;
      case "window":
        for (const item of c.items) {
          this.checkExpr(item.expr, { where: "window", aggregates: true, windows: true });
        }
        for (const k of c.by) this.checkExpr(k, plain("the by: keys of window"));
        for (const k of c.order) this.checkExpr(k.expr, plain("the order: keys of window"));
        return;
      case "save":
        this.checkExpr(c.path, plain("save"));
        if (c.path.kind === "literal" && typeof c.path.value !== "string") {
          this.report(
            "BAD_ARGUMENT",
            `save takes the path of a table as a string, such as save('/user/t.sxt'), found ${
              describeExpr(c.path)
            }`,
            c.path.span,
          );
        }
        return;
      default:
        assertNever(c);
    }
  }

  checkSource(s: Source): void {
    switch (s.kind) {
      case "streamRef":
        this.checkBound("@" + s.name, s.span);
        return;
      case "stored":
        if (s.args) this.checkNamedArgs(s.args, `@[${s.path}]`);
        for (const a of s.args ?? []) {
          if (!isLiteralValue(a.value) && a.value.kind !== "param") {
            this.report(
              "BAD_ARGUMENT",
              `argument '${a.name}' of @[${s.path}] must be a literal or a $name, found ${
                describeExpr(a.value)
              }`,
              a.value.span,
            );
          }
        }
        return;
      case "sourceCall": {
        const sig = lookupSource(s.name);
        this.checkNamedArgs(s.args, sig?.name ?? s.name);
        if (!sig) {
          this.report(
            "UNKNOWN_NAME",
            `unknown source '${s.name}'${
              didYouMean(s.name, SOURCE_NAMES) || `; sources are ${SOURCE_NAMES.join(", ")}`
            }`,
            s.span,
          );
          return;
        }
        const allowed = [...sig.required, ...sig.optional];
        for (const a of s.args) {
          if (!allowed.includes(a.name)) {
            const hint = didYouMean(a.name, allowed) || `; it takes ${allowed.join(", ")}`;
            this.report(
              "BAD_ARGUMENT",
              `unknown argument '${a.name}' of ${sig.name}${hint}`,
              a.span,
            );
          }
        }
        for (const r of sig.required) {
          if (!s.args.some((a) => a.name === r || a.name === sig.instead?.[r])) {
            this.report("BAD_ARGUMENT", `${sig.name} needs the argument '${r}: ...'`, s.span);
          }
        }
        return;
      }
      case "values":
        if (s.rows.length === 0) {
          this.report("ARITY", "VALUES takes at least 1 row, found 0", s.span);
        }
        for (const row of s.rows) {
          if (row.kind !== "tuple") {
            this.report(
              "SYNTAX_ERROR",
              `each row of VALUES is a tuple such as (a: 1, b: 'x'), found ${describeExpr(row)}`,
              row.span,
            );
          }
          this.checkExpr(row, { where: "VALUES", aggregates: false });
        }
        return;
      default:
        assertNever(s);
    }
  }

  checkNamedArgs(args: readonly { name: string; value: Expr; span: Span }[], owner: string): void {
    const seen = new Set<string>();
    for (const a of args) {
      if (seen.has(a.name)) {
        this.report("BAD_ARGUMENT", `argument '${a.name}' of ${owner} is given twice`, a.span);
      }
      seen.add(a.name);
      this.checkExpr(a.value, { where: owner, aggregates: false });
    }
  }

  checkBound(name: string, at: Span): void {
    if (this.bound.has(name) || this.assumeBound.has(name)) return;
    const later = this.bindings.get(name);
    if (later) {
      this.report(
        "UNKNOWN_NAME",
        `'${name}' is used before it is bound (it is bound at line ${later.line})`,
        at,
      );
      return;
    }
    const sigil = name[0];
    const candidates = [...this.bound].filter((n) => n[0] === sigil);
    const how = sigil === "$"
      ? `declare it in init(...) or bind it with '${name} = ...' first`
      : `bind it with '${name} = ...' first`;
    this.report(
      "UNKNOWN_NAME",
      `'${name}' is not bound${didYouMean(name, candidates)}; ${how}`,
      at,
    );
  }

  checkExpr(e: Expr, ctx: ExprContext, inAggregate: string | null = null): void {
    switch (e.kind) {
      case "literal":
      case "field":
        return;
      case "param":
        this.checkBound("$" + e.name, e.span);
        return;
      case "star":
        this.report("SYNTAX_ERROR", "'*' is allowed only as select(*) and count(*)", e.span);
        return;
      case "position":
        this.checkPosition(e.index, ctx, e.span);
        return;
      case "call":
        this.checkCall(e, ctx, inAggregate);
        return;
      case "unary":
        this.checkExpr(e.operand, ctx, inAggregate);
        return;
      case "binary":
        this.checkExpr(e.left, ctx, inAggregate);
        this.checkExpr(e.right, ctx, inAggregate);
        return;
      case "in":
        this.checkExpr(e.operand, ctx, inAggregate);
        for (const x of e.list) this.checkExpr(x, ctx, inAggregate);
        return;
      case "isNull":
        this.checkExpr(e.operand, ctx, inAggregate);
        return;
      case "member":
        this.checkExpr(e.object, ctx, inAggregate);
        return;
      case "index":
        this.checkExpr(e.object, ctx, inAggregate);
        this.checkExpr(e.index, ctx, inAggregate);
        return;
      case "tuple":
        for (const f of e.fields) this.checkExpr(f.value, ctx, inAggregate);
        return;
      default:
        assertNever(e);
    }
  }

  checkPosition(index: number, ctx: ExprContext, at: Span): void {
    if (ctx.positions === undefined) {
      this.report(
        "SYNTAX_ERROR",
        `position @${index} is allowed only in group and sort, found in ${ctx.where}`,
        at,
      );
    } else if (ctx.positions === null) {
      this.report(
        "SYNTAX_ERROR",
        `position @${index} in ${ctx.where} refers to the columns of a select, but there is none before it`,
        at,
      );
    } else if (index < 1 || index > ctx.positions) {
      const n = ctx.positions;
      this.report(
        "SYNTAX_ERROR",
        `position @${index} is out of range: the select before ${ctx.where} has ${n} column${
          n === 1 ? "" : "s"
        }`,
        at,
      );
    }
  }

  checkCall(
    e: Extract<Expr, { kind: "call" }>,
    ctx: ExprContext,
    inAggregate: string | null,
  ): void {
    const sig = lookupFunction(e.name);
    const lower = e.name.toLowerCase();
    if (!sig) {
      const hint = foreignHint("function", e.name) ?? didYouMean(e.name, FUNCTION_NAMES);
      this.report("UNKNOWN_NAME", `unknown function '${e.name}'${hint}`, e.span);
    } else {
      if (e.args.length < sig.minArgs || e.args.length > sig.maxArgs) {
        this.report(
          "ARITY",
          `function ${lower} ${expectedCount(sig.minArgs, sig.maxArgs)}, found ${e.args.length}`,
          e.span,
        );
      }
      if (sig.window && inAggregate) {
        this.report(
          "SYNTAX_ERROR",
          `window function '${lower}' cannot be nested inside aggregate '${inAggregate}'`,
          e.span,
        );
      } else if (sig.window && !ctx.windows) {
        this.report(
          "SYNTAX_ERROR",
          `window function '${lower}' is allowed only in window(...), found in ${ctx.where}` +
            (ctx.where === "select"
              ? `; window(${lower}(...) as name, by: key, order: key) adds it to each row`
              : ""),
          e.span,
        );
      } else if (sig.aggregate && inAggregate) {
        this.report(
          "SYNTAX_ERROR",
          `aggregate function '${lower}' cannot be nested inside aggregate '${inAggregate}'`,
          e.span,
        );
      } else if (sig.aggregate && !ctx.aggregates) {
        this.report(
          "SYNTAX_ERROR",
          `aggregate function '${lower}' is allowed only in select, found in ${ctx.where}`,
          e.span,
        );
      }
    }
    const inner = sig?.aggregate || sig?.window ? lower : inAggregate;
    for (const a of e.args) {
      if (a.kind === "star" && sig?.star) continue;
      if (a.kind === "star" && sig) {
        this.report(
          "SYNTAX_ERROR",
          `'*' is allowed only as select(*) and count(*), found in ${lower}(*)`,
          a.span,
        );
        continue;
      }
      if (a.kind === "star") continue;
      this.checkExpr(a, ctx, inner);
    }
  }
}

const FUNCTION_NAMES = FUNCTION_CATALOG.map((f) => f.name);

/** A literal, a negative number (folded by the parser), or T/IP/NET of a string literal. */
export function isLiteralValue(e: Expr): boolean {
  if (e.kind === "literal") return true;
  if (e.kind !== "call" || e.args.length !== 1) return false;
  const name = e.name.toLowerCase();
  const arg = e.args[0]!;
  return (name === "t" || name === "ip" || name === "net") && arg.kind === "literal" &&
    typeof arg.value === "string";
}

/** How an expression is named in messages. */
function describeExpr(e: Expr): string {
  switch (e.kind) {
    case "literal": {
      const v = e.value;
      if (typeof v === "string") return `string '${v.length > 20 ? v.slice(0, 20) + "..." : v}'`;
      if (typeof v === "number") return `number ${v}`;
      if (v instanceof Interval) return "an interval";
      if (v instanceof IpAddr) return "an IP address";
      if (v instanceof IpNet) return "a network";
      return String(v);
    }
    case "field":
      return `field '${e.name}'`;
    case "param":
      return `'$${e.name}'`;
    case "call":
      return `a call to ${e.name}(...)`;
    case "tuple":
      return "a tuple";
    default:
      return "an expression";
  }
}
