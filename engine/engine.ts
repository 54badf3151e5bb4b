/**
 * The engine's one entry point: compile a script for a context, execute the plan, explain it.
 *
 *   const compiled = await compile({ text }, context);
 *   if (!compiled.ok) return compiled.diagnostics;
 *   const run = execute(compiled.plan, { signal, onProgress, onWarning });
 *   for await (const batch of run.batches) ...;
 *   run.schema(); // final once the batches are exhausted
 */

import type { Script } from "./front/ast.ts";
import type { Diagnostic } from "./front/diagnostics.ts";
import type { Schema } from "./values/types.ts";
import { check } from "./front/front.ts";
import type { QueryContext } from "./contracts/query_context.ts";
import type { ScriptSource } from "./contracts/script_source.ts";
import type { ExecuteOptions, QueryRun } from "./exec/query_run.ts";
import { type CompiledPlan, type PlanNode, printPlan } from "./plan/plan.ts";
import { zoneFields } from "./exec/zone_maps.ts";
import { planScript } from "./planning/planner.ts";
import { optimizePlan } from "./planning/passes/optimize_plan.ts";
import { splitWorkers } from "./planning/passes/split_workers.ts";
import type { PlanEnv } from "./planning/env.ts";
import { existingFile } from "./planning/paths.ts";
import { loadView, SCRIPT_RIGHTS, viewEnv } from "./planning/views.ts";
import { runPlan } from "./exec/run.ts";

export type CompileResult =
  | { readonly ok: true; readonly plan: Plan }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

/** An executable plan; opaque outside engine/. */
export interface Plan {
  readonly kind: "plan";
}

/**
 * Checks and plans a script (text, or a stored script the user may `execute` and `read`, planned
 * in its own folder). Every mistake found before reading data comes back as a diagnostic. `now`
 * is given by scan workers, which plan the query again and must see its time.
 */
export async function compile(
  source: ScriptSource,
  context: QueryContext,
  options: { readonly now?: number } = {},
): Promise<CompileResult> {
  const now = options.now ?? Date.now();
  const diagnostics: Diagnostic[] = [];
  const top: PlanEnv = {
    query: context,
    workDir: context.workDir,
    now,
    params: new Map(),
    streams: new Map(),
    chain: [],
    diagnostics,
    saved: new Map(),
    scriptBytes: { used: "text" in source ? new TextEncoder().encode(source.text).length : 0 },
  };
  let env = top;
  let script;
  if ("text" in source) {
    const checked = checkedText(source.text);
    if (!checked.script) return { ok: false, diagnostics: checked.diagnostics };
    script = checked.script;
  } else if ("table" in source) {
    script = tableScript(source.table);
  } else {
    const file = await existingFile(top, source.path, {
      right: SCRIPT_RIGHTS,
      what: "stored script",
    });
    script = file && await loadView(top, file);
    if (!file || !script) return { ok: false, diagnostics };
    env = viewEnv(top, file.canonical, true);
  }
  const root = await planScript(env, script, {
    args: { kind: "text", values: context.args, ...(context.checking ? { standIns: true } : {}) },
  });
  if (!root || diagnostics.length > 0) return { ok: false, diagnostics };
  const optimized = optimizePlan(root);
  const split = context.scanWorkers ? splitWorkers(optimized) : undefined;
  const plan: CompiledPlan = {
    kind: "plan",
    root: optimized,
    timeZone: context.timeZone,
    now,
    limits: context.limits,
    // Even one worker: a large scan then runs apart from the thread that answers requests.
    ...(context.scanWorkers
      ? {
        parallel: {
          workers: context.scanWorkers,
          query: {
            user: context.user,
            workDir: context.workDir,
            timeZone: context.timeZone,
          },
        },
      }
      : {}),
    ...(split ? { split } : {}),
    ...(context.columnCache ? { cache: context.columnCache } : {}),
  };
  return { ok: true, plan };
}

/**
 * Scripts checked lately, by their text: the syntax tree of a text that checked without a
 * mistake is the same every time (check() is pure), so the same query sent again (a dashboard, a
 * client polling) is lexed, parsed and checked once. Only the tree is shared: planning, with its
 * rights, files, views, arguments and time, is done for every query. The trees are frozen, so
 * that a planner that changed one would fail at once rather than change the next query's.
 */
const CHECKED_TEXTS = 256;
/** Longer texts are checked every time (a long script's run dwarfs its check). */
const CHECKED_TEXT_CHARS = 4096;
const checkedTexts = new Map<string, Script>();

function checkedText(
  text: string,
): { readonly script?: Script; readonly diagnostics: Diagnostic[] } {
  const known = checkedTexts.get(text);
  if (known) {
    // Most recently used last: the oldest goes first when the cache is full.
    checkedTexts.delete(text);
    checkedTexts.set(text, known);
    return { script: known, diagnostics: [] };
  }
  const checked = check(text);
  if (checked.script && text.length <= CHECKED_TEXT_CHARS) {
    if (checkedTexts.size >= CHECKED_TEXTS) checkedTexts.delete(checkedTexts.keys().next().value!);
    checkedTexts.set(text, deepFreeze(checked.script));
  }
  return checked;
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  // A typed array with elements cannot be frozen (a literal's bytes): left as it is.
  if (ArrayBuffer.isView(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}

/** The script `@[path]`, built as a tree so that no character of the path can end it. */
function tableScript(path: string): Script {
  const span = { line: 1, column: 1, offset: 0 };
  const pipeline = {
    source: { kind: "stored", path, args: null, span },
    commands: [],
    span,
  } as const;
  return { statements: [{ kind: "pipeline", pipeline, span }] };
}

/** Starts a compiled plan; rows are read as the returned batches are iterated. */
export function execute(plan: Plan, options: ExecuteOptions): QueryRun {
  return runPlan(plan as CompiledPlan, options);
}

/**
 * The result schema known before any data is read: exact for tables, views and typed sources;
 * fields whose type only the data tells (READ_JSON) are ANY.
 */
export function plannedSchema(plan: Plan): Schema {
  return (plan as CompiledPlan).root.schema;
}

/**
 * The plan as indented text, one operator a line with its output schema, the parts that run in
 * scan workers numbered (for `explain`).
 */
export function explain(plan: Plan): string {
  const compiled = plan as CompiledPlan;
  // A source read through the column cache says so, with the fields whose zone maps its
  // filter skips blocks by (the blocks skipped are counted in the query's stats).
  const cache = compiled.cache;
  const note = (n: PlanNode) => {
    if (!cache || n.kind !== "source" || !(n.scan || n.cached)) return "";
    const zones = zoneFields(n.filter, { timeZone: compiled.timeZone, now: compiled.now });
    return ` via column cache${zones.length > 0 ? ` zone maps(${zones.join(", ")})` : ""}`;
  };
  return printPlan(compiled.root, { ...(compiled.split ? { split: compiled.split } : {}), note });
}
