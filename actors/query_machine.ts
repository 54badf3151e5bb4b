/**
 * The lifecycle of one query (specification, "States and transitions"; API.md, "Queries"):
 *
 *   NEW -ACCEPT-> QUEUED -SCHEDULE-> SCHEDULED -(engine started)-> RUNNING -(done)-> SUCCEEDED
 *
 * CANCEL leads from every unfinished state to CANCELLED; in RUNNING it first aborts the engine
 * and waits (sub-state `cancelling`) until the engine has stopped. FAILED is reached from QUEUED,
 * SCHEDULED (the supervisor's FAIL, or a plan that cannot start) and RUNNING. Every change is
 * recorded in `stateChanges`. Finished states keep the result for `retentionMs` after entering
 * them or after the last TOUCH, then tell the supervisor to drop the query.
 *
 * The query tells its supervisor through the `supervisor` ref of its input (`sendTo`), absent
 * when a query runs alone (tests, tools): query actors are not children, so there is no parent
 * for `sendParent`.
 */

import {
  type ActorRef,
  assign,
  enqueueActions,
  type NonReducibleUnknown,
  setup,
  type Snapshot,
} from "xstate";
import {
  type Diagnostic,
  formatLocal,
  newQueryStats,
  type Plan,
  type QueryRun,
  type QueryStats,
  type Schema,
  type User,
  type Warning,
} from "../engine/mod.ts";
import type { Logger } from "../home/log.ts";
import type { ResultStore } from "./result_store.ts";
import {
  drainEngine,
  type EngineReport,
  failureOf,
  type FragmentEncoderFactory,
  startEngine,
} from "./engine_work.ts";
import { etaMillis } from "./query_progress.ts";

export type QueryState =
  | "NEW"
  | "QUEUED"
  | "SCHEDULED"
  | "RUNNING"
  | "SUCCEEDED"
  | "FAILED"
  | "CANCELLED";

export type FinishedState = "SUCCEEDED" | "FAILED" | "CANCELLED";

export const FINISHED_STATES: readonly QueryState[] = ["SUCCEEDED", "FAILED", "CANCELLED"];

export interface StateChange {
  readonly millis: number;
  readonly from: QueryState;
  readonly to: QueryState;
}

export interface QueryWarning {
  /** Local date-time in the server's zone, `yyyy-MM-ddTHH:mm:ss.SSS`. */
  readonly time: string;
  readonly level: Warning["level"];
  readonly message: string;
}

export interface QueryInput {
  readonly queryId: string;
  readonly owner: User;
  readonly plan: Plan;
  readonly store: ResultStore;
  /** Set when the format was fixed at POST: rows are stored serialised. */
  readonly encoder?: FragmentEncoderFactory | undefined;
  /** What the fixed format was, for answering fetches (opaque to the machine). */
  readonly fixedFormat?: unknown;
  /**
   * `opt.failOnWarning=true` (synchronous answers): an engine that finishes after a WARN or
   * ERROR warning leaves the query FAILED, the warnings its error, not SUCCEEDED.
   */
  readonly failOnWarning?: boolean;
  readonly retentionMs: number;
  /** The server's zone, for warning times. */
  readonly serverTimeZone: string;
  readonly now: () => number;
  /** Where internal errors of the engine are logged (with their stack; clients see none). */
  readonly log: Logger;
  /** Told when the query finishes and when its retention runs out; none when it runs alone. */
  readonly supervisor?: ActorRef<Snapshot<unknown>, QueryReport>;
}

export interface QueryContext extends QueryInput {
  readonly state: QueryState;
  readonly stateChanges: readonly StateChange[];
  readonly progress: number;
  readonly warnings: readonly QueryWarning[];
  readonly error?: Diagnostic;
  readonly schema?: Schema;
  readonly run?: QueryRun;
  /** Aborts the engine; made when the query is scheduled. */
  readonly abort?: AbortController;
  readonly report?: EngineReport;
  /** Why the engine could not start (SCHEDULED leads to FAILED with it). */
  readonly startError?: Diagnostic;
  /** What the engine has read and produced; updated in place while the query runs. */
  readonly stats: QueryStats;
}

export type QueryEvent =
  | { readonly type: "ACCEPT" }
  | { readonly type: "SCHEDULE" }
  | { readonly type: "CANCEL" }
  | { readonly type: "FAIL"; readonly error: Diagnostic }
  | { readonly type: "TOUCH" }
  | { readonly type: "ENGINE.PROGRESS"; readonly fraction: number }
  | { readonly type: "ENGINE.WARNING"; readonly warning: Warning }
  | { readonly type: "ENGINE.DONE"; readonly schema: Schema }
  | { readonly type: "ENGINE.FAILED"; readonly error: Diagnostic }
  | { readonly type: "ENGINE.STOPPED" };

/**
 * The engine is started and drained by plain entry actions, not invoked actors: a child actor
 * per step (a promise actor to start, a callback actor to drain) was about a third of the
 * actors' cost of a trivial query. The engine starts synchronously in SCHEDULED's entry and the
 * query moves on to RUNNING (or FAILED) by an eventless transition; RUNNING's entry drains it,
 * the end coming back as an ENGINE.* event. Whatever ends RUNNING (a finished state's
 * `stopEngine`, the supervisor stopping the actor) aborts the engine through `context.abort`.
 */
function startAction(start: EngineStarter) {
  return assign<QueryContext, QueryEvent, NonReducibleUnknown, QueryEvent, never>(
    ({ context, self }) => {
      const abort = new AbortController();
      const report = engineReport(self, context.stats, context.encoder?.render);
      try {
        return { abort, report, run: start(context.plan, abort.signal, report) };
      } catch (error) {
        return { abort, report, startError: failureOf(error, context.log) };
      }
    },
  );
}

type QuerySelf = { send(event: QueryEvent): void; getSnapshot(): { status: string } };

/** Drains the started run into the store; its end is sent back as an ENGINE.* event. */
function drain(context: QueryContext, self: QuerySelf): void {
  const abort = context.abort!;
  const { signal } = abort;
  const log = context.log;
  // A stopped actor (the supervisor stopping, a crash) hears nothing more.
  const tell = (event: QueryEvent) => {
    if (self.getSnapshot().status === "active") self.send(event);
  };
  // From the next microtask, as an invoked actor's would: the engine's first reports (a warning
  // on the first batch) then come after the SUBMIT that scheduled it has been handled.
  Promise.resolve().then(() =>
    drainEngine(context.run!, context.store, { signal, encoder: context.encoder })
  ).then(
    (schema) => tell({ type: "ENGINE.DONE", schema }),
    (error) =>
      tell(
        signal.aborted
          ? { type: "ENGINE.STOPPED" }
          : { type: "ENGINE.FAILED", error: failureOf(error, log) },
      ),
  );
}

/** What a query tells its parent, the supervisor. */
export type QueryReport =
  | { readonly type: "QUERY.FINISHED"; readonly queryId: string }
  | { readonly type: "QUERY.EXPIRED"; readonly queryId: string };

/**
 * Starts a query's engine (engine_work.ts's startEngine; tests give a stand-in through
 * `withEngine`). It returns at once: the batches come from the run it returns.
 */
export type EngineStarter = (plan: Plan, signal: AbortSignal, report: EngineReport) => QueryRun;

/**
 * The reason every abort of the engine carries. Made once: `abort()` without a reason builds a
 * DOMException with a stack each time, which was a few percent of a trivial query's cost (the
 * engine is also told to stop when a query has finished).
 */
const STOPPED = new DOMException("the query was stopped", "AbortError");

/** Smallest progress change worth an event. */
const PROGRESS_STEP = 0.01;

/** How long a cancelled engine may take to stop before the query is called CANCELLED anyway. */
export const STOP_GRACE_MS = 5_000;

/** An action that tells the query's supervisor (if any) that it finished or expired. */
function tellSupervisor(type: "QUERY.FINISHED" | "QUERY.EXPIRED") {
  return enqueueActions<
    QueryContext,
    QueryEvent,
    undefined,
    QueryEvent,
    never,
    never,
    never,
    never,
    never
  >(({ context, enqueue }) => {
    if (!context.supervisor) return;
    enqueue.sendTo(context.supervisor, { type, queryId: context.queryId });
  });
}

export const queryMachine = setup({
  types: {
    context: {} as QueryContext,
    events: {} as QueryEvent,
    input: {} as QueryInput,
  },
  actions: {
    // Each assign copies the context and the snapshot: what a state sets on entry is set by
    // this one action (the abort controller in SCHEDULED, the run in RUNNING, the schema in
    // SUCCEEDED), not by one assign each.
    record: assign(({ context, event }, params: { to: QueryState }) => ({
      state: params.to,
      stateChanges: [...context.stateChanges, {
        millis: context.now(),
        from: context.state,
        to: params.to,
      }],
      ...entered(params.to, event),
    })),
    stopEngine: ({ context }) => context.abort?.abort(STOPPED),
    reportFinished: tellSupervisor("QUERY.FINISHED"),
    reportExpired: tellSupervisor("QUERY.EXPIRED"),
    progress: assign({
      progress: ({ context, event }) =>
        event.type === "ENGINE.PROGRESS"
          ? Math.max(context.progress, Math.min(1, event.fraction))
          : context.progress,
    }),
    warn: assign({
      warnings: ({ context, event }) =>
        event.type === "ENGINE.WARNING"
          ? [...context.warnings, {
            time: formatLocal(context.now(), context.serverTimeZone),
            level: event.warning.level,
            message: event.warning.message,
          }]
          : context.warnings,
    }),
    fail: assign({
      error: ({ event }) =>
        event.type === "FAIL" || event.type === "ENGINE.FAILED" ? event.error : undefined,
    }),
    startEngine: startAction(startEngine),
    drainEngine: ({ context, self }) => drain(context, self),
  },
  guards: {
    startFailed: ({ context }) => context.startError !== undefined,
    started: ({ context }) => context.run !== undefined,
  },
  delays: {
    RETENTION: ({ context }) => context.retentionMs,
    STOP_GRACE: STOP_GRACE_MS,
  },
}).createMachine({
  id: "query",
  context: ({ input }) => ({
    ...input,
    state: "NEW",
    stateChanges: [],
    progress: 0,
    warnings: [],
    stats: newQueryStats(),
  }),
  initial: "NEW",
  states: {
    NEW: {
      on: {
        ACCEPT: "QUEUED",
        CANCEL: "CANCELLED",
      },
    },
    QUEUED: {
      entry: { type: "record", params: { to: "QUEUED" } },
      on: {
        SCHEDULE: "SCHEDULED",
        CANCEL: "CANCELLED",
        FAIL: { target: "FAILED", actions: "fail" },
      },
    },
    SCHEDULED: {
      entry: [{ type: "record", params: { to: "SCHEDULED" as const } }, "startEngine"],
      // Started (or not) by the entry: on at once, in the same step.
      always: [
        {
          guard: "startFailed",
          target: "FAILED",
          actions: assign({ error: ({ context }) => context.startError }),
        },
        { guard: "started", target: "RUNNING" },
      ],
      on: {
        CANCEL: "CANCELLED",
        FAIL: { target: "FAILED", actions: "fail" },
        "ENGINE.PROGRESS": { actions: "progress" },
        "ENGINE.WARNING": { actions: "warn" },
      },
    },
    RUNNING: {
      entry: [{ type: "record", params: { to: "RUNNING" as const } }, "drainEngine"],
      initial: "working",
      on: {
        "ENGINE.PROGRESS": { actions: "progress" },
        "ENGINE.WARNING": { actions: "warn" },
      },
      states: {
        working: {
          on: {
            "ENGINE.DONE": [
              {
                guard: ({ context }) => warnedOf(context) !== undefined,
                target: "#query.FAILED",
                actions: assign({ error: ({ context }) => warnedOf(context) }),
              },
              { target: "#query.SUCCEEDED" },
            ],
            "ENGINE.FAILED": { target: "#query.FAILED", actions: "fail" },
            FAIL: { target: "#query.FAILED", actions: "fail" },
            CANCEL: { target: "cancelling", actions: "stopEngine" },
          },
        },
        // The engine was told to stop; CANCELLED once it has (or after a grace period).
        cancelling: {
          on: {
            "ENGINE.STOPPED": "#query.CANCELLED",
            "ENGINE.DONE": "#query.CANCELLED",
            "ENGINE.FAILED": "#query.CANCELLED",
          },
          after: { STOP_GRACE: "#query.CANCELLED" },
        },
      },
    },
    SUCCEEDED: finishedState("SUCCEEDED"),
    FAILED: finishedState("FAILED"),
    CANCELLED: finishedState("CANCELLED"),
  },
});

/** The query machine (or one `machine` made of it) with another engine starter (tests). */
export function withEngine(start: EngineStarter, machine = queryMachine): typeof queryMachine {
  return machine.provide({ actions: { startEngine: startAction(start) } });
}

/**
 * A finished state: records itself, stops what is left of the engine, tells the supervisor,
 * and keeps the result until the retention runs out (TOUCH restarts it), then tells the
 * supervisor again, which drops the query.
 */
function finishedState(state: FinishedState) {
  return {
    entry: [{ type: "record", params: { to: state } }, "stopEngine", "reportFinished"],
    initial: "retained",
    states: {
      retained: {
        after: { RETENTION: { actions: "reportExpired" } },
        on: { TOUCH: { target: "retained", reenter: true } },
      },
    },
  } as const;
}

/**
 * What entering `state` sets besides the state change: in SUCCEEDED the schema (from
 * ENGINE.DONE) and a progress of 1 (SCHEDULED's abort controller, report and run are set by
 * `startEngine`).
 */
function entered(state: QueryState, event: { readonly type: string }): Partial<QueryContext> {
  switch (state) {
    case "SUCCEEDED":
      return event.type === "ENGINE.DONE"
        ? { schema: (event as Extract<QueryEvent, { type: "ENGINE.DONE" }>).schema, progress: 1 }
        : { progress: 1 };
    case "NEW":
    case "QUEUED":
    case "SCHEDULED":
    case "RUNNING":
    case "FAILED":
    case "CANCELLED":
      return {};
  }
}

/**
 * The error of a query that must fail on its warnings (`failOnWarning`) and gave a WARN or ERROR
 * one: it names them all; undefined when the query may succeed.
 */
function warnedOf(context: QueryContext): Diagnostic | undefined {
  if (!context.failOnWarning) return undefined;
  const serious = context.warnings.filter((w) => w.level === "WARN" || w.level === "ERROR");
  if (serious.length === 0) return undefined;
  const n = serious.length;
  return {
    code: "WARNING",
    message: `the query gave ${n} warning${n === 1 ? "" : "s"} (opt.failOnWarning=true): ${
      serious.map((w) => `${w.level} ${w.message}`).join("; ")
    }`,
  };
}

/** The engine reports progress and warnings to this query for as long as it runs. */
function engineReport(
  self: { send(event: QueryEvent): void },
  stats: QueryStats,
  render: EngineReport["render"],
): EngineReport {
  // Each event is a macrostep of this machine: send progress in steps of a percent, and
  // leave 1 to ENGINE.DONE (a trivial query would otherwise pay for an event of its own).
  let sent = 0;
  const onProgress = (fraction: number) => {
    if (fraction >= 1 || fraction - sent < PROGRESS_STEP) return;
    sent = fraction;
    self.send({ type: "ENGINE.PROGRESS", fraction });
  };
  return {
    onProgress,
    onWarning: (warning: Warning) => self.send({ type: "ENGINE.WARNING", warning }),
    stats,
    ...(render ? { render } : {}),
  };
}

/** The top-level state of a snapshot value (`{RUNNING: "working"}` is RUNNING). */
export function topState(value: unknown): QueryState {
  return (typeof value === "string" ? value : Object.keys(value as object)[0]) as QueryState;
}

export function isFinished(state: QueryState): boolean {
  return FINISHED_STATES.includes(state);
}

/**
 * The query's stats as the status shows them: the engine's counters and the milliseconds it has
 * run (from SCHEDULED to the finished state, or to now while it runs; 0 before).
 */
export function statsOf(
  context: QueryContext,
  now: number,
): QueryStats & { elapsedMillis: number; etaMillis?: number } {
  const changes = context.stateChanges;
  const started = changes.find((c) => c.to === "SCHEDULED")?.millis;
  const ended = changes.find((c) => FINISHED_STATES.includes(c.to))?.millis;
  const elapsedMillis = started === undefined ? 0 : Math.max(0, (ended ?? now) - started);
  // While it runs, the time left when its input's size is known (actors/query_progress.ts).
  const eta = ended === undefined ? etaMillis(context.progress, elapsedMillis) : undefined;
  return { ...context.stats, elapsedMillis, ...(eta === undefined ? {} : { etaMillis: eta }) };
}

/** The status object of a query as the API shows it (`state` inside), from its snapshot. */
export function queryStatus(
  snapshot: { readonly context: QueryContext; readonly value: unknown },
): Record<string, unknown> & { state: QueryState } {
  const { context, value } = snapshot;
  return {
    queryId: context.queryId,
    state: topState(value),
    progress: context.progress,
    warnings: context.warnings,
    stateChanges: context.stateChanges,
    stats: statsOf(context, context.now()),
    ...(context.error ? { error: context.error } : {}),
  };
}
