/**
 * The actors' front desk. A route hands over what a request asks for and gets back a query
 * actor, or the reasons there is none: the script is compiled here, at once, so that a script
 * with mistakes is refused before any query exists (no id, no state), and a compiled one is
 * submitted to the supervisor with a result store of its own. Routes never call the engine.
 */

import {
  compile,
  type Diagnostic,
  plannedSchema,
  type QueryContext,
  type Schema,
  type ScriptSource,
} from "../engine/mod.ts";
import type { FragmentEncoderFactory } from "./engine_work.ts";
import { ResultStore } from "./result_store.ts";
import { idempotentQuery, type QueryRef, queryRef, type SupervisorRef } from "./supervisor.ts";
import type { ResultQuota } from "./result_quota.ts";
import type { SharedQueries } from "./shared_queries.ts";

export interface SubmissionDeps {
  readonly supervisor: SupervisorRef;
  /** `query.resultMemoryBytes`: past that, results spill to `resultsDir`. */
  readonly resultMemoryBytes: number;
  /** `<home>/engine_data/results` */
  readonly resultsDir: string;
  /** `server.timeZone`, for the local times of warnings. */
  readonly serverTimeZone: string;
  /** Each user's share of the results held; none: no per-user limit. */
  readonly quota?: ResultQuota | undefined;
  /** Servers sharing a KV: admission counted across them, the query's record shared. */
  readonly shared?: SharedQueries;
}

export interface Submission {
  readonly queryId: string;
  readonly source: ScriptSource;
  readonly context: QueryContext;
  /** Serialises rows while the query runs, when the format was fixed at submission. */
  readonly encoder?: FragmentEncoderFactory | undefined;
  /** Whatever the route needs back about a fixed format; kept with the query. */
  readonly fixedFormat?: unknown;
  /** A WARN or ERROR warning fails the query (QueryInput.failOnWarning). */
  readonly failOnWarning?: boolean;
  /** The client's Idempotency-Key: a query already held under it is answered instead. */
  readonly idempotencyKey?: string | undefined;
  /** Servers sharing a KV: whether the result is stored for the others (not for sync queries). */
  readonly shareResult?: boolean | undefined;
  /** Listed by `GET /queries` with this script path and its first line (POST /queries). */
  readonly listedAs?: string;
}

export type SubmissionResult =
  /** `queryId` is the submission's, or that of the query submitted before with the same key. */
  | { readonly ok: true; readonly queryId: string; readonly ref: QueryRef }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] }
  | { readonly ok: false; readonly queueFull: true; readonly maxQueued: number }
  | { readonly ok: false; readonly quotaRefused: string };

/** Compiles the query and, when it has no mistakes, submits it to the supervisor. */
export async function compileAndSubmit(
  deps: SubmissionDeps,
  submission: Submission,
): Promise<SubmissionResult> {
  const compiled = await compile(submission.source, submission.context);
  if (!compiled.ok) return { ok: false, diagnostics: compiled.diagnostics };
  const { queryId } = submission;
  const opened = deps.quota?.open(submission.context.user.name);
  if (opened && !opened.ok) return { ok: false, quotaRefused: opened.message };
  const account = opened?.account;
  const { shared } = deps;
  if (shared) {
    const { source } = submission;
    const admitted = await shared.admit(queryId, submission.context.user, {
      // What GET /queries shows of it on the other servers.
      scriptPath: "path" in source ? source.path : submission.context.workDir,
      excerpt: excerptOf(source),
      fixedFormat: submission.fixedFormat,
      shareResult: submission.shareResult ?? false,
    });
    if (admitted === "full") {
      account?.close();
      return { ok: false, queueFull: true, maxQueued: shared.options.maxQueued };
    }
  }
  deps.supervisor.send({
    type: "SUBMIT",
    input: {
      queryId,
      owner: submission.context.user,
      plan: compiled.plan,
      store: new ResultStore(queryId, {
        memoryBytes: deps.resultMemoryBytes,
        spillDir: deps.resultsDir,
        account,
      }),
      encoder: submission.encoder,
      fixedFormat: submission.fixedFormat,
      ...(submission.failOnWarning ? { failOnWarning: true } : {}),
      serverTimeZone: deps.serverTimeZone,
    },
    ...(submission.idempotencyKey === undefined
      ? {}
      : { idempotencyKey: submission.idempotencyKey }),
    ...(submission.listedAs === undefined ? {} : {
      note: {
        submitted: Date.now(),
        scriptPath: submission.listedAs,
        excerpt: excerptOf(submission.source),
      },
    }),
  });
  const ref = queryRef(deps.supervisor, queryId);
  if (ref) {
    shared?.track(queryId, ref);
    return { ok: true, queryId, ref };
  }
  account?.close();
  await shared?.release(queryId);
  if (submission.idempotencyKey !== undefined) {
    // The same key was submitted while this one compiled: that query is the answer.
    const first = idempotentQuery(
      deps.supervisor,
      submission.context.user,
      submission.idempotencyKey,
    );
    if (first) return { ok: true, ...first };
  }
  const { maxQueued } = deps.supervisor.getSnapshot().context;
  return { ok: false, queueFull: true, maxQueued };
}

/** How much of a script's text `GET /queries` shows. */
const EXCERPT_CHARS = 120;

/** What `GET /queries` shows of a script: its first line, or the stored script's path. */
function excerptOf(source: ScriptSource): string {
  return "text" in source
    ? source.text.trim().split("\n", 1)[0]!.slice(0, EXCERPT_CHARS)
    : "path" in source
    ? source.path
    : source.table;
}

/**
 * The schema a query's result will have, known without running it (for the schema of a stored
 * table: `@[path]` is planned, nothing is read but the table's header).
 */
export async function describeQuery(
  source: ScriptSource,
  context: QueryContext,
): Promise<{ ok: true; schema: Schema } | { ok: false; diagnostics: readonly Diagnostic[] }> {
  const compiled = await compile(source, context);
  if (!compiled.ok) return { ok: false, diagnostics: compiled.diagnostics };
  return { ok: true, schema: plannedSchema(compiled.plan) };
}

/** What an editor is told of a script: every mistake found without running it, and its schema. */
export interface ScriptCheck {
  readonly ok: boolean;
  readonly diagnostics: readonly Diagnostic[];
  /** The result's schema when the script plans; null when it does not. */
  readonly schema: Schema | null;
}

/**
 * Checks and plans a script without running it (`POST /check`). A view's mandatory `init`
 * arguments have no values while it is being written: they take stand-ins of their types, and
 * the rest of the script is checked and planned as a query would be. A view the script calls
 * without its mandatory arguments is a mistake, as when it runs.
 */
export async function checkScript(text: string, context: QueryContext): Promise<ScriptCheck> {
  const compiled = await compile({ text }, { ...context, checking: true });
  if (compiled.ok) return { ok: true, diagnostics: [], schema: plannedSchema(compiled.plan) };
  return { ok: false, diagnostics: compiled.diagnostics, schema: null };
}
