/**
 * What planning one script carries along: the query context, the names bound so far, the chain
 * of stored scripts being planned (for recursion) and the diagnostics collected.
 */

import type { QueryContext } from "../contracts/query_context.ts";
import type { Diagnostic, DiagnosticCode } from "../front/diagnostics.ts";
import type { Quoted, Span } from "../front/ast.ts";
import type { PlanNode } from "../plan/plan.ts";
import type { Schema, Type } from "../values/types.ts";
import type { Value } from "../values/values.ts";

export interface ParamBinding {
  readonly value: Value;
  readonly type: Type;
  /** A constant bound to a string literal: where it is, and as written (lexer.ts Quoted). */
  readonly written?: { readonly span: Span; readonly quoted: Quoted };
}

export interface PlanEnv {
  readonly query: QueryContext;
  /** Virtual folder relative paths resolve against. */
  readonly workDir: string;
  readonly now: number;
  readonly params: Map<string, ParamBinding>;
  /** Streams bound by `@x = ...`; null when planning that pipeline failed (no cascades). */
  readonly streams: Map<string, PlanNode | null>;
  /** Canonical paths of the stored scripts being planned, outermost first. */
  readonly chain: readonly string[];
  /** The stored script positions refer to, when it is not the submitted text. */
  readonly script?: string;
  readonly diagnostics: Diagnostic[];
  /**
   * Tables the statements planned so far save (canonical path to schema and real path), shared
   * with the views they call: a later `@[t.sxt]` reads what they will have written.
   */
  readonly saved?: Map<string, { readonly schema: Schema; readonly real: string }>;
  /** Bytes of script text compiled so far for this query, shared with the views it calls. */
  readonly scriptBytes: { used: number };
}

/** Records a user mistake at `span` (in the script being planned). */
export function report(
  env: PlanEnv,
  code: DiagnosticCode,
  message: string,
  span?: Span,
): void {
  env.diagnostics.push({
    code,
    message,
    ...(span ? { line: span.line, column: span.column } : {}),
    ...(env.script ? { script: env.script } : {}),
  });
}
