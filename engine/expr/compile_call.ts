/**
 * Calls of scalar functions: name and arity checks, argument types against the function's
 * parameters (string constants read as timestamps, intervals, addresses where asked for),
 * run-time checks for ANY arguments, then the function's own compile step.
 */

import type { Span } from "../front/ast.ts";
import { didYouMean } from "../front/diagnostics.ts";
import type { FunctionContext } from "../functions/function_def.ts";
import { functionArity, FUNCTIONS, lookupFunction } from "../functions/function_registry.ts";
import { AGGREGATES } from "../functions/aggregates.ts";
import type { RowFn } from "../plan/plan.ts";
import { isNumeric, scalar, type ScalarKind, type Type, typeToString } from "../values/types.ts";
import { coerceValue, describeKind, describeValue, type ParamKind } from "./coerce.ts";
import { fail, typeError } from "./scope.ts";
import { constant, folded, type Typed } from "./typed.ts";

function accepts(kind: ParamKind, t: Type): boolean {
  switch (kind) {
    case "ANY":
      return true;
    case "NUMBER":
      return isNumeric(t);
    case "WHOLE":
      return t.kind === "INTEGER" || t.kind === "LONG";
    default:
      return t.kind === kind;
  }
}

const ORDINALS = ["first", "second", "third", "fourth", "fifth"];

function ordinal(i: number): string {
  return ORDINALS[i] ?? `${i + 1}th`;
}

/** The argument fitted to its parameter: converted constants, checked ANY values. */
function fitArgument(
  fname: string,
  i: number,
  kind: ParamKind,
  arg: Typed,
  zone: string,
): Typed {
  const t = arg.type;
  if (accepts(kind, t) || t.kind === "NULL") return arg;
  const what = `the ${ordinal(i)} argument of ${fname}`;
  if (t.kind === "STRING" && arg.constant && arg.constant.value !== null) {
    const converted = coerceValue(kind, arg.constant.value, zone);
    if (converted !== undefined && converted !== null) {
      return constant(scalar(kind as ScalarKind), converted, arg.span);
    }
    if (kind === "TIMESTAMP" || kind === "INTERVAL" || kind === "IPADDR" || kind === "IPNET") {
      typeError(
        `${what} must be ${describeKind(kind)}; '${arg.constant.value}' is not one`,
        arg.span,
      );
    }
  }
  if (t.kind !== "ANY") {
    typeError(`${what} must be ${describeKind(kind)}, found ${typeToString(t)}`, arg.span);
  }
  const f = arg.fn;
  const fn: RowFn = (row) => {
    const v = f(row);
    const c = coerceValue(kind, v, zone);
    if (c === undefined) {
      typeError(`${what} must be ${describeKind(kind)}, found ${describeValue(v)}`, arg.span);
    }
    return c;
  };
  return { type: t, fn, span: arg.span };
}

/** All function names, scalar and aggregate, for "did you mean". */
export function allFunctionNames(): string[] {
  return [...FUNCTIONS.keys(), ...AGGREGATES.keys()];
}

/** Compiles a call of a scalar function. */
export function compileCall(
  name: string,
  args: readonly Typed[],
  span: Span,
  env: { timeZone: string; now: number },
): Typed {
  const def = lookupFunction(name);
  if (!def) {
    return fail(
      "UNKNOWN_NAME",
      `unknown function '${name}'${didYouMean(name, allFunctionNames())}`,
      span,
    );
  }
  const { min, max } = functionArity(def);
  if (args.length < min || args.length > max) {
    const wanted = min === max
      ? `${min} argument${min === 1 ? "" : "s"}`
      : max === Infinity
      ? `at least ${min} argument${min === 1 ? "" : "s"}`
      : `${min} to ${max} arguments`;
    fail("ARITY", `${def.signature} takes ${wanted}, found ${args.length}`, span);
  }
  const fitted = args.map((a, i) =>
    fitArgument(name, i, def.params[i] ?? def.variadic ?? "ANY", a, env.timeZone)
  );
  const ctx: FunctionContext = {
    timeZone: env.timeZone,
    now: env.now,
    span,
    fail: (message, argIndex) =>
      typeError(message, argIndex !== undefined ? fitted[argIndex]?.span ?? span : span),
  };
  const type = def.result(fitted, ctx);
  const fn = def.compile(fitted.map((a) => a.fn), fitted, ctx);
  return folded(type, fn, fitted, span);
}
