/**
 * A compact, deterministic S-expression form of the syntax tree, one line per statement, for
 * tests and for `explain`:
 *
 *   (pipeline (read_json src:"/x") (filter (= status 200)))
 *
 * It is for reading, not for parsing back.
 */

import {
  assertNever,
  type Command,
  type Expr,
  type NamedExpr,
  type Param,
  type Pipeline,
  type Script,
  type Source,
  type Statement,
} from "./ast.ts";
import { Interval, IpAddr, IpNet, isTuple, Timestamp, type Value } from "../values/values.ts";

/** One line per statement. */
export function printScript(script: Script): string {
  return script.statements.map(printStatement).join("\n");
}

export function printStatement(s: Statement): string {
  switch (s.kind) {
    case "init":
      return `(init${s.params.map((p) => " " + printParam(p)).join("")})`;
    case "let":
      return `(let $${s.name} ${printExpr(s.value)})`;
    case "bind":
      return `(bind @${s.name} ${printPipeline(s.pipeline)})`;
    case "pipeline":
      return printPipeline(s.pipeline);
    default:
      return assertNever(s);
  }
}

function printParam(p: Param): string {
  return p.kind === "mandatory"
    ? `${printName(p.name)}::${p.typeName.toUpperCase()}`
    : `${printName(p.name)}:${printExpr(p.defaultValue)}`;
}

export function printPipeline(p: Pipeline): string {
  return `(pipeline ${[printSource(p.source), ...p.commands.map(printCommand)].join(" ")})`;
}

export function printSource(s: Source): string {
  switch (s.kind) {
    case "streamRef":
      return `@${s.name}`;
    case "stored":
      return s.args === null
        ? `(stored ${JSON.stringify(s.path)})`
        : `(stored ${JSON.stringify(s.path)}${printNamed(s.args)})`;
    case "sourceCall":
      return `(${s.name.toLowerCase()}${printNamed(s.args)})`;
    case "values":
      return `(values${s.rows.map((r) => " " + printExpr(r)).join("")})`;
    default:
      return assertNever(s);
  }
}

function printNamed(args: readonly NamedExpr[]): string {
  return args.map((a) => ` ${printName(a.name)}:${printExpr(a.value)}`).join("");
}

export function printCommand(c: Command): string {
  switch (c.kind) {
    case "select":
      return `(select${
        c.items.map((i) =>
          i.spread
            ? ` (spread ${printExpr(i.expr)})`
            : i.alias === null
            ? " " + printExpr(i.expr)
            : ` (as ${printExpr(i.expr)} ${printName(i.alias)})`
        ).join("")
      })`;
    case "group":
      return `(group${c.keys.map((k) => " " + printExpr(k)).join("")})`;
    case "filter":
      return `(${c.negated ? "filter_out" : "filter"} ${printExpr(c.condition)})`;
    case "sort":
      return `(sort${
        c.keys.map((k) => k.descending ? ` (desc ${printExpr(k.expr)})` : " " + printExpr(k.expr))
          .join("")
      })`;
    case "limit":
      return `(limit ${printExpr(c.count)}${c.offset ? " " + printExpr(c.offset) : ""})`;
    case "join":
      return `(${c.outer ? "leftjoin" : "join"} ${printSource(c.right)} ${printExpr(c.on)})`;
    case "union":
      return `(union${c.sources.map((s) => " " + printSource(s)).join("")})`;
    case "unnest":
      return `(${c.outer ? "leftunnest" : "unnest"} ${printExpr(c.field)}${
        c.alias === null ? "" : " " + printName(c.alias)
      })`;
    case "save":
      return `(save ${printExpr(c.path)})`;
    case "window":
      return `(window${
        c.items.map((i) =>
          i.alias === null
            ? " " + printExpr(i.expr)
            : ` (as ${printExpr(i.expr)} ${printName(i.alias)})`
        ).join("")
      } (by${c.by.map((k) => " " + printExpr(k)).join("")}) (order${
        c.order.map((k) => k.descending ? ` (desc ${printExpr(k.expr)})` : " " + printExpr(k.expr))
          .join("")
      }))`;
    default:
      return assertNever(c);
  }
}

/** An expression in prefix form: `(and (= a 1) (in b (list 2 3)))`. */
export function printExpr(e: Expr): string {
  switch (e.kind) {
    case "literal":
      return printLiteral(e.value, e.numberKind);
    case "field":
      return printName(e.name);
    case "position":
      return `@${e.index}`;
    case "param":
      return `$${e.name}`;
    case "star":
      return "*";
    case "call":
      return `(${e.name.toLowerCase()}${e.args.map((a) => " " + printExpr(a)).join("")})`;
    case "unary":
      return `(${e.op} ${printExpr(e.operand)})`;
    case "binary":
      return `(${e.op} ${printExpr(e.left)} ${printExpr(e.right)})`;
    case "in": {
      const op = e.negated ? "not-in" : "in";
      const rhs = e.isList
        ? `(list${e.list.map((x) => " " + printExpr(x)).join("")})`
        : printExpr(e.list[0]!);
      return `(${op} ${printExpr(e.operand)} ${rhs})`;
    }
    case "isNull":
      return `(${e.negated ? "is-not-null" : "is-null"} ${printExpr(e.operand)})`;
    case "member":
      return `(. ${printExpr(e.object)} ${printName(e.name)})`;
    case "index":
      return `([] ${printExpr(e.object)} ${printExpr(e.index)})`;
    case "tuple":
      return `(tuple${printNamed(e.fields)})`;
    default:
      return assertNever(e);
  }
}

/** `42`, `42L`, `3.5`, `1000.0`, `"text"`, `10.0.0.1`, `10.0.0.0/8`, `(interval 90000)`. */
export function printLiteral(v: Value, numberKind?: "INTEGER" | "LONG" | "DOUBLE"): string {
  if (v === null) return "null";
  if (typeof v === "boolean") return String(v);
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number") {
    if (numberKind === "LONG") return `${v}L`;
    if (numberKind === "DOUBLE" && Number.isInteger(v)) return `${v}.0`;
    return String(v);
  }
  if (v instanceof Interval) return `(interval ${v.ms})`;
  if (v instanceof Timestamp) return `(timestamp ${v.ms})`;
  if (v instanceof IpAddr) return printIp(v);
  if (v instanceof IpNet) return `${printIp(v.address)}/${v.prefix}`;
  if (Array.isArray(v)) return `[${v.map((x) => printLiteral(x)).join(" ")}]`;
  if (isTuple(v)) {
    return `{${Object.entries(v).map(([k, x]) => `${printName(k)}:${printLiteral(x)}`).join(" ")}}`;
  }
  return String(v);
}

function printIp(a: IpAddr): string {
  if (a.version === 4) {
    const n = a.bits as number;
    return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
  }
  return `(ipv6 ${(a.bits as bigint).toString(16)})`;
}

/** Plain names as they are, others in backquotes. */
function printName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : "`" + name + "`";
}
