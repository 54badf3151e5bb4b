/**
 * The shape of a scalar function: its parameters (checked and converted by the expression
 * compiler), its result type and its implementation as a row function built once per call site.
 */

import type { Span } from "../front/ast.ts";
import type { RowFn } from "../plan/plan.ts";
import type { Type } from "../values/types.ts";
import type { Value } from "../values/values.ts";
import type { ParamKind } from "../expr/coerce.ts";

/** What the compiler knows of one argument. */
export interface ArgInfo {
  readonly type: Type;
  /** The value when the argument is a constant (folded at compile time). */
  readonly constant?: { readonly value: Value };
  readonly span: Span;
}

/** What an implementation may use while it is built. */
export interface FunctionContext {
  readonly timeZone: string;
  readonly now: number;
  readonly span: Span;
  /** Reports a user's mistake (a bad constant argument) at the argument, or the call. */
  fail(message: string, argIndex?: number): never;
}

export interface FunctionDef {
  /** Lower-case name. */
  readonly name: string;
  /** Signature for messages: `substr(s STRING, start INTEGER [, length INTEGER])`. */
  readonly signature: string;
  readonly params: readonly ParamKind[];
  /** How many trailing params may be left out. */
  readonly optional?: number;
  /** Kind of any further arguments (concat, coalesce); none when absent. */
  readonly variadic?: ParamKind;
  /** The result type from the arguments (already checked against `params`). */
  readonly result: (args: readonly ArgInfo[], ctx: FunctionContext) => Type;
  /**
   * The implementation; `fns` give each argument already converted to its param kind (or
   * null). Functions are pure (`now()` is fixed per query), so calls on constants are folded.
   */
  readonly compile: (
    fns: readonly RowFn[],
    args: readonly ArgInfo[],
    ctx: FunctionContext,
  ) => RowFn;
}

/** A function of one argument that is null when its argument is null. */
export function strict1(f: (a: never) => Value): FunctionDef["compile"] {
  return ([fa]) => (row) => {
    const a = fa!(row);
    return a === null ? null : f(a as never);
  };
}

/** A function of two arguments that is null when either is null. */
export function strict2(f: (a: never, b: never) => Value): FunctionDef["compile"] {
  return ([fa, fb]) => (row) => {
    const a = fa!(row);
    if (a === null) return null;
    const b = fb!(row);
    return b === null ? null : f(a as never, b as never);
  };
}

/** A function of three arguments that is null when any is null. */
export function strict3(f: (a: never, b: never, c: never) => Value): FunctionDef["compile"] {
  return ([fa, fb, fc]) => (row) => {
    const a = fa!(row);
    if (a === null) return null;
    const b = fb!(row);
    if (b === null) return null;
    const c = fc!(row);
    return c === null ? null : f(a as never, b as never, c as never);
  };
}

/** The result type is fixed. */
export function returns(t: Type): FunctionDef["result"] {
  return () => t;
}
