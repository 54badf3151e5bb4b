/** Static types of expressions: the same walk as compilation (compile_expr.ts), type only. */

import type { Expr } from "../ast.ts";
import type { Type } from "../types.ts";
import { typeExpr } from "./compile_expr.ts";
import type { Scope } from "./scope.ts";

/**
 * The static type of `expr`; throws QueryError (TYPE_ERROR, UNKNOWN_NAME, ARITY) for a
 * mistake in it, at its line and column.
 */
export function inferType(expr: Expr, scope: Scope): Type {
  return typeExpr(expr, scope).type;
}
