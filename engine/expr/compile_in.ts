/**
 * `x in (a, b, c)`, `ip in 10.0.0.0/8`, `ip in (net1, net2)`, `x in $array`, and `not in`.
 * A list of constants becomes one Set of hash keys; like SQL, a miss against a list holding
 * null is null, not false.
 */

import type { Span } from "../front/ast.ts";
import { netContains } from "../values/ip.ts";
import type { RowFn } from "../plan/plan.ts";
import { scalar, typeToString } from "../values/types.ts";
import { IpAddr, IpNet, type Value } from "../values/values.ts";
import { valueKey } from "../values/value_ops.ts";
import { coerceValue, describeValue, type ParamKind } from "./coerce.ts";
import { compatible } from "./common_type.ts";
import { alignConstant } from "./compile_binary.ts";
import { compareAny } from "./operators.ts";
import { typeError } from "./scope.ts";
import { folded, type Typed } from "./typed.ts";

const BOOLEAN = scalar("BOOLEAN");

/** Three-valued `not`. */
function negate(fn: RowFn): RowFn {
  return (row) => {
    const v = fn(row);
    return v === null ? null : !v;
  };
}

/** Compiles the membership test; `isList` false means the right side is one expression. */
export function compileIn(
  operand: Typed,
  list: readonly Typed[],
  options: { isList: boolean; negated: boolean; span: Span; zone: string },
): Typed {
  const { span, zone } = options;
  let fn: RowFn;
  if (!options.isList && list.length === 1) {
    fn = containerTest(operand, list[0]!, span, zone);
  } else {
    const elements = list.map((e) => alignConstant(e, operand.type, zone));
    const nets = elements.length > 0 && elements.every((e) => e.type.kind === "IPNET");
    if (nets) fn = anyNetTest(operand, elements, span, zone);
    else {
      for (const e of elements) {
        if (!compatible(operand.type, e.type)) {
          typeError(
            `cannot look for ${typeToString(operand.type)} among ${typeToString(e.type)} values`,
            e.span,
          );
        }
      }
      fn = elements.every((e) => e.constant)
        ? setTest(operand, elements.map((e) => e.constant!.value), zone)
        : scanTest(operand, elements, zone);
    }
  }
  return folded(BOOLEAN, options.negated ? negate(fn) : fn, [operand, ...list], span);
}

/** The operand read as an address (a string from JSON data is parsed). */
function addressOf(operand: Typed, span: Span, zone: string): RowFn {
  const k = operand.type.kind;
  if (k !== "IPADDR" && k !== "ANY" && k !== "NULL" && k !== "STRING") {
    typeError(`'in' a network needs an IPADDR, found ${typeToString(operand.type)}`, span);
  }
  const f = operand.fn;
  if (k === "IPADDR") return f;
  return (row) => {
    const v = f(row);
    if (v === null || v instanceof IpAddr) return v;
    const ip = coerceValue("IPADDR", v, zone);
    if (ip === undefined) {
      typeError(`'in' a network needs an IPADDR, found ${describeValue(v)}`, operand.span);
    }
    return ip;
  };
}

function anyNetTest(operand: Typed, nets: readonly Typed[], span: Span, zone: string): RowFn {
  const fa = addressOf(operand, span, zone);
  const fns = nets.map((n) => n.fn);
  return (row) => {
    const ip = fa(row) as IpAddr | null;
    if (ip === null) return null;
    let sawNull = false;
    for (const f of fns) {
      const net = f(row) as IpNet | null;
      if (net === null) sawNull = true;
      else if (netContains(net, ip)) return true;
    }
    return sawNull ? null : false;
  };
}

/** `x in <network>` or `x in <array>`, the right side one expression. */
function containerTest(operand: Typed, containerIn: Typed, span: Span, zone: string): RowFn {
  let container = containerIn;
  if (container.type.kind === "STRING" && container.constant) {
    container = alignConstant(container, scalar("IPNET"), zone);
  }
  const k = container.type.kind;
  if (k === "IPNET") return anyNetTest(operand, [container], span, zone);
  if (k === "ARRAY" || k === "ANY" || k === "NULL") {
    const fo = operand.fn, fc = container.fn;
    return (row) => {
      const v = fo(row);
      if (v === null) return null;
      const c = fc(row);
      if (c === null) return null;
      if (c instanceof IpNet) {
        const ip = v instanceof IpAddr ? v : coerceValue("IPADDR", v, zone);
        if (!(ip instanceof IpAddr)) {
          typeError(`'in' a network needs an IPADDR, found ${describeValue(v)}`, operand.span);
        }
        return netContains(c, ip);
      }
      if (!Array.isArray(c)) {
        typeError(`'in' needs a network or an array on its right, found ${describeValue(c)}`, span);
      }
      return member(v, c, zone);
    };
  }
  return typeError(
    `'in' needs a list in parentheses, a network or an array on its right, found ${
      typeToString(container.type)
    }`,
    container.span,
  );
}

function member(v: Value, items: readonly Value[], zone: string): boolean | null {
  let sawNull = false;
  for (const item of items) {
    if (item === null) sawNull = true;
    else if (compareAny(v, item, zone) === 0) return true;
  }
  return sawNull ? null : false;
}

const CONVERTIBLE_KINDS: ReadonlySet<string> = new Set([
  "TIMESTAMP",
  "INTERVAL",
  "IPADDR",
  "IPNET",
]);

function setTest(operand: Typed, values: readonly Value[], zone: string): RowFn {
  const keys = new Set(values.filter((v) => v !== null).map(valueKey));
  const hasNull = values.some((v) => v === null);
  const miss = hasNull ? null : false;
  const f = operand.fn;
  // Strings of JSON data against typed constants: read them as the constants' kind.
  const first = values.find((v) => v !== null);
  const kind = operand.type.kind === "ANY" && first !== undefined ? describeValue(first) : "";
  if (CONVERTIBLE_KINDS.has(kind)) {
    return (row) => {
      const v = f(row);
      if (v === null) return null;
      const c = typeof v === "string" ? coerceValue(kind as ParamKind, v, zone) : v;
      return c !== undefined && keys.has(valueKey(c)) ? true : miss;
    };
  }
  return (row) => {
    const v = f(row);
    if (v === null) return null;
    return keys.has(valueKey(v)) ? true : miss;
  };
}

function scanTest(operand: Typed, elements: readonly Typed[], zone: string): RowFn {
  const fo = operand.fn;
  const fns = elements.map((e) => e.fn);
  return (row) => {
    const v = fo(row);
    if (v === null) return null;
    return member(v, fns.map((f) => f(row)), zone);
  };
}
