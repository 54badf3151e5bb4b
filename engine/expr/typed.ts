/** A compiled expression with its static type, and its value when it is a constant. */

import type { Span } from "../front/ast.ts";
import type { RowFn } from "../plan/plan.ts";
import type { Type } from "../values/types.ts";
import type { Row, Value } from "../values/values.ts";

export interface Typed {
  readonly type: Type;
  readonly fn: RowFn;
  /** Present when the expression reads no field: its value, computed once. */
  readonly constant?: { readonly value: Value };
  readonly span: Span;
}

const EMPTY_ROW: Row = Object.freeze({}) as Row;

/** A constant expression. */
export function constant(type: Type, value: Value, span: Span): Typed {
  return { type, fn: () => value, constant: { value }, span };
}

/** `fn` folded to a constant when all of `children` are constants. */
export function folded(type: Type, fn: RowFn, children: readonly Typed[], span: Span): Typed {
  if (children.every((c) => c.constant !== undefined)) return constant(type, fn(EMPTY_ROW), span);
  return { type, fn, span };
}
