/**
 * Binary operators: arithmetic, comparison, `and`/`or` (SQL's three-valued logic), `like`
 * and `~`. Typed operands get direct code; ANY operands dispatch at run time (operators.ts).
 */

import type { BinaryOp, Span } from "../front/ast.ts";
import type { RowFn } from "../plan/plan.ts";
import { isNumeric, NULL_TYPE, scalar, type Type, typeToString } from "../values/types.ts";
import type { Value } from "../values/values.ts";
import { coerceValue, describeValue, type ParamKind } from "./coerce.ts";
import { compatible } from "./common_type.ts";
import { likeMatcher } from "./like.ts";
import { compileUserRegex, regexMistake } from "../values/user_regex.ts";
import {
  type ArithOp,
  arithValues,
  compareAny,
  type CompareOp,
  numericOp,
  testOrder,
} from "./operators.ts";
import { typeError } from "./scope.ts";
import { constant, folded, type Typed } from "./typed.ts";

const BOOLEAN = scalar("BOOLEAN");
const VERB: Readonly<Record<ArithOp, string>> = {
  "+": "add",
  "-": "subtract",
  "*": "multiply",
  "/": "divide",
  "%": "take the remainder of",
};

/** Compiles `left op right` at `span`. */
export function compileBinary(
  op: BinaryOp,
  left: Typed,
  right: Typed,
  span: Span,
  zone: string,
): Typed {
  switch (op) {
    case "+":
    case "-":
    case "*":
    case "/":
    case "%":
      return compileArith(op, left, right, span);
    case "=":
    case "!=":
    case "<":
    case "<=":
    case ">":
    case ">=":
      return compileCompare(op, left, right, span, zone);
    case "and":
    case "or":
      return compileLogic(op, left, right, span);
    case "like":
    case "~":
      return compileMatch(op, left, right, span);
  }
}

function arithType(op: ArithOp, a: Type, b: Type): Type | null {
  if (a.kind === "ANY" || b.kind === "ANY") return { kind: "ANY" };
  if (a.kind === "NULL" || b.kind === "NULL") return NULL_TYPE;
  if (isNumeric(a) && isNumeric(b)) {
    if (op === "/" || a.kind === "DOUBLE" || b.kind === "DOUBLE") return scalar("DOUBLE");
    // A sum or product of two 32-bit values may need 64 bits; a remainder never does.
    if (op === "%" && a.kind === "INTEGER" && b.kind === "INTEGER") return scalar("INTEGER");
    return scalar("LONG");
  }
  const k = `${a.kind} ${op} ${b.kind}`;
  switch (k) {
    case "TIMESTAMP + INTERVAL":
    case "INTERVAL + TIMESTAMP":
    case "TIMESTAMP - INTERVAL":
      return scalar("TIMESTAMP");
    case "TIMESTAMP - TIMESTAMP":
    case "INTERVAL + INTERVAL":
    case "INTERVAL - INTERVAL":
      return scalar("INTERVAL");
    case "INTERVAL / INTERVAL":
      return scalar("DOUBLE");
  }
  if (a.kind === "INTERVAL" && isNumeric(b) && (op === "*" || op === "/")) return a;
  if (isNumeric(a) && b.kind === "INTERVAL" && op === "*") return b;
  return null;
}

function compileArith(op: ArithOp, left: Typed, right: Typed, span: Span): Typed {
  const type = arithType(op, left.type, right.type);
  if (type === null) {
    const hint = op === "+" && left.type.kind === "STRING" && right.type.kind === "STRING"
      ? " (use concat(a, b) to join strings)"
      : "";
    typeError(
      `cannot ${VERB[op]} ${typeToString(left.type)} and ${typeToString(right.type)}${hint}`,
      span,
    );
  }
  if (type.kind === "NULL") return constant(NULL_TYPE, null, span);
  const fa = left.fn, fb = right.fn;
  let fn: RowFn;
  if (isNumeric(left.type) && isNumeric(right.type)) {
    fn = numericFn(op, fa, fb);
  } else {
    fn = (row) => {
      const a = fa(row);
      if (a === null) return null;
      const b = fb(row);
      const v = arithValues(op, a, b);
      if (v === undefined) {
        typeError(`cannot ${VERB[op]} ${describeValue(a)} and ${describeValue(b)}`, span);
      }
      return v;
    };
  }
  return folded(type, fn, [left, right], span);
}

function numericFn(op: ArithOp, fa: RowFn, fb: RowFn): RowFn {
  switch (op) {
    case "+":
      return (row) => {
        const a = fa(row), b = fb(row);
        return a === null || b === null ? null : (a as number) + (b as number);
      };
    case "-":
      return (row) => {
        const a = fa(row), b = fb(row);
        return a === null || b === null ? null : (a as number) - (b as number);
      };
    case "*":
      return (row) => {
        const a = fa(row), b = fb(row);
        return a === null || b === null ? null : (a as number) * (b as number);
      };
    default:
      return (row) => {
        const a = fa(row), b = fb(row);
        return a === null || b === null ? null : numericOp(op, a as number, b as number);
      };
  }
}

const CONVERTIBLE: ReadonlySet<string> = new Set(["TIMESTAMP", "INTERVAL", "IPADDR", "IPNET"]);

/**
 * A string constant meeting a timestamp, interval, address or network is read as one, once:
 * `time >= '2024-05-01'`. Returns the operand unchanged otherwise.
 */
export function alignConstant(operand: Typed, other: Type, zone: string): Typed {
  if (
    operand.type.kind !== "STRING" || !operand.constant || !CONVERTIBLE.has(other.kind) ||
    operand.constant.value === null
  ) return operand;
  const text = operand.constant.value as string;
  const value = coerceValue(other.kind as ParamKind, text, zone);
  if (value === undefined) {
    typeError(`'${text}' is not a valid ${other.kind} to compare with`, operand.span);
  }
  return constant(other, value, operand.span);
}

function compileCompare(
  op: CompareOp,
  leftIn: Typed,
  rightIn: Typed,
  span: Span,
  zone: string,
): Typed {
  const left = alignConstant(leftIn, rightIn.type, zone);
  const right = alignConstant(rightIn, left.type, zone);
  const a = left.type, b = right.type;
  if (!compatible(a, b)) {
    typeError(`cannot compare ${typeToString(a)} and ${typeToString(b)}`, span);
  }
  if (a.kind === "NULL" || b.kind === "NULL") return constant(BOOLEAN, null, span);
  const fa = left.fn, fb = right.fn;
  let fn: RowFn;
  if ((isNumeric(a) && isNumeric(b)) || (a.kind === "STRING" && b.kind === "STRING")) {
    fn = primitiveCompare(op, fa, fb);
  } else if (a.kind === "ANY" || b.kind === "ANY") {
    fn = (row) => {
      const x = fa(row);
      if (x === null) return null;
      const y = fb(row);
      if (y === null) return null;
      const c = compareAny(x, y, zone);
      if (c === undefined) {
        // Mixed data (a JSON field that is sometimes a number): unequal, but not ordered.
        if (op === "=") return false;
        if (op === "!=") return true;
        typeError(`cannot compare ${describeValue(x)} and ${describeValue(y)}`, span);
      }
      return testOrder(op, c);
    };
  } else {
    fn = (row) => {
      const x = fa(row);
      if (x === null) return null;
      const y = fb(row);
      return y === null ? null : testOrder(op, compareAny(x, y, zone) ?? NaN);
    };
  }
  return folded(BOOLEAN, fn, [left, right], span);
}

function primitiveCompare(op: CompareOp, fa: RowFn, fb: RowFn): RowFn {
  type P = number | string;
  switch (op) {
    case "=":
      return (row) => {
        const x = fa(row), y = fb(row);
        return x === null || y === null ? null : x === y;
      };
    case "!=":
      return (row) => {
        const x = fa(row), y = fb(row);
        return x === null || y === null ? null : x !== y;
      };
    case "<":
      return (row) => {
        const x = fa(row), y = fb(row);
        return x === null || y === null ? null : (x as P) < (y as P);
      };
    case "<=":
      return (row) => {
        const x = fa(row), y = fb(row);
        return x === null || y === null ? null : (x as P) <= (y as P);
      };
    case ">":
      return (row) => {
        const x = fa(row), y = fb(row);
        return x === null || y === null ? null : (x as P) > (y as P);
      };
    case ">=":
      return (row) => {
        const x = fa(row), y = fb(row);
        return x === null || y === null ? null : (x as P) >= (y as P);
      };
  }
}

/** A BOOLEAN operand's value, checked at run time when its type is ANY. */
function booleanOperand(t: Typed, what: string): RowFn {
  const k = t.type.kind;
  if (k === "BOOLEAN" || k === "NULL") return t.fn;
  if (k !== "ANY") {
    typeError(`${what} needs BOOLEAN operands, found ${typeToString(t.type)}`, t.span);
  }
  const f = t.fn;
  return (row) => {
    const v = f(row);
    if (v !== null && typeof v !== "boolean") {
      typeError(`${what} needs BOOLEAN operands, found ${describeValue(v)}`, t.span);
    }
    return v;
  };
}

function compileLogic(op: "and" | "or", left: Typed, right: Typed, span: Span): Typed {
  const fa = booleanOperand(left, op), fb = booleanOperand(right, op);
  const fn: RowFn = op === "and"
    ? (row) => {
      const a = fa(row);
      if (a === false) return false;
      const b = fb(row);
      if (b === false) return false;
      return a === null || b === null ? null : true;
    }
    : (row) => {
      const a = fa(row);
      if (a === true) return true;
      const b = fb(row);
      if (b === true) return true;
      return a === null || b === null ? null : false;
    };
  return folded(BOOLEAN, fn, [left, right], span);
}

/** A STRING operand, checked at run time when its type is ANY. */
export function stringOperand(t: Typed, what: string): RowFn {
  const k = t.type.kind;
  if (k === "STRING" || k === "NULL") return t.fn;
  if (k !== "ANY") typeError(`${what} needs a STRING, found ${typeToString(t.type)}`, t.span);
  const f = t.fn;
  return (row) => {
    const v = f(row);
    if (v !== null && typeof v !== "string") {
      typeError(`${what} needs a STRING, found ${describeValue(v)}`, t.span);
    }
    return v;
  };
}

function compileMatch(op: "like" | "~", left: Typed, right: Typed, span: Span): Typed {
  const what = op === "like" ? "like" : "~";
  const fs = stringOperand(left, what);
  const fp = stringOperand(right, what);
  const build = (text: string): (s: string) => boolean => {
    if (op === "like") return likeMatcher(text);
    const compiled = compileUserRegex(text);
    if (compiled.ok) return compiled.regex.test;
    return typeError(regexMistake(text, compiled), right.span);
  };
  const fixedText = right.constant?.value;
  let fn: RowFn;
  if (typeof fixedText === "string") {
    const test = build(fixedText);
    fn = (row) => {
      const s = fs(row);
      return s === null ? null : test(s as string);
    };
  } else {
    let lastText: Value = null;
    let last: ((s: string) => boolean) | null = null;
    fn = (row) => {
      const s = fs(row);
      if (s === null) return null;
      const p = fp(row);
      if (p === null) return null;
      if (p !== lastText || !last) {
        last = build(p as string);
        lastText = p;
      }
      return last(s as string);
    };
  }
  return folded(BOOLEAN, fn, [left, right], span);
}
