/**
 * The engine's one entry point. CONTRACT: the signatures below are what actors/ and tests use;
 * the engine work fills in the bodies.
 *
 *   const compiled = await compile({ text }, context);
 *   if (!compiled.ok) return compiled.diagnostics;
 *   const run = execute(compiled.plan, { signal, onProgress, onWarning });
 *   for await (const batch of run.batches) ...;
 *   run.schema(); // final once the batches are exhausted
 */

import type { Diagnostic } from "./diagnostics.ts";
import type { Schema } from "./types.ts";
import type { Row } from "./values.ts";
import type { User } from "./home/users.ts";
import type { ResourceTree } from "./home/resource_tree.ts";
import type { DatastoreRegistry, Warning } from "../connectors/datastore.ts";

export interface QueryContext {
  readonly user: User;
  /** Virtual path relative paths resolve against (the request's scriptPath, or the script's folder). */
  readonly workDir: string;
  /** IANA zone for timestamps without a zone. */
  readonly timeZone: string;
  /** View arguments as given in the query string (strings, parsed by their declared type). */
  readonly args: Readonly<Record<string, string>>;
  readonly datastores: DatastoreRegistry;
  /** Resolution and rights for every path the script names (tables, views, save). */
  readonly tree: ResourceTree;
  /** Bytes the group and sort state of one query may take (query.memoryLimit). */
  readonly memoryLimit: number;
}

/** What to run: a script text, or a stored script (view) by virtual path. */
export type ScriptSource = { readonly text: string } | { readonly path: string };

export type CompileResult =
  | { readonly ok: true; readonly plan: Plan }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

/** An executable plan; opaque outside engine/. */
export interface Plan {
  readonly kind: "plan";
}

export interface ExecuteOptions {
  readonly signal: AbortSignal;
  /** Called with a fraction 0..1 that never decreases; 1 when done. */
  readonly onProgress?: (fraction: number) => void;
  readonly onWarning?: (warning: Warning) => void;
}

export interface QueryRun {
  /** Batches of result rows; ends when the query has completed. Throws QueryError on failure. */
  readonly batches: AsyncIterable<readonly Row[]>;
  /** The result schema; final once `batches` is exhausted (ANY resolved from the data). */
  schema(): Schema;
}
