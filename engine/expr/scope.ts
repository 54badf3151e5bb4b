/**
 * What an expression is typed and compiled against: the fields of the input (or an open
 * schema), the `$name` constants, the query's zone and clock. Also the one way expression code
 * reports a user's mistake: a QueryError carrying the expression's position.
 */

import type { Span } from "../front/ast.ts";
import { type DiagnosticCode, QueryError } from "../front/diagnostics.ts";
import type { Field, Type } from "../values/types.ts";
import type { Value } from "../values/values.ts";

export interface Scope {
  /** Fields of the input rows by name; null for an open schema (every field is ANY). */
  readonly fields: ReadonlyMap<string, Field> | null;
  readonly params: ReadonlyMap<string, { value: Value; type: Type }>;
  /** IANA zone for timestamps without a zone, hour() and day(). */
  readonly timeZone: string;
  /** Query start, epoch ms: `now()`. */
  readonly now: number;
}

/** Throws the QueryError of a user's mistake at `span`. */
export function fail(code: DiagnosticCode, message: string, span: Span | undefined): never {
  throw new QueryError({
    code,
    message,
    ...(span ? { line: span.line, column: span.column } : {}),
  });
}

/** A type clash at `span`. */
export function typeError(message: string, span: Span | undefined): never {
  return fail("TYPE_ERROR", message, span);
}
