/**
 * Running a query and following it: `POST /queries` (a script in the body, or a stored script
 * with its arguments), then its events stream for the state, progress, warnings and stats live;
 * "Cancel" while it runs; once it has succeeded, its rows in the table, downloads, and a chart.
 * A cut events stream is opened again with `Last-Event-ID` (console/sse.ts), and should that
 * fail the query's status is asked for: a query followed is never shown as not started.
 */

import { api, ApiFailure, apiJson, FINISHED, type QueryStatus } from "./api.ts";
import { resumedEvents, type ServerEvent } from "./sse.ts";
import { download, fill, h } from "./dom.ts";
import { type GridActions, resultTable } from "./result_table.ts";
import { fieldsPane } from "./fields_pane.ts";
import {
  bucketFor,
  chartPlaceholder,
  chartPlan,
  chartTitle,
  eventsChart,
  valuesChart,
} from "./charts.ts";
import { fieldName, isAggregate, withoutTail } from "./refine.ts";
import { storedRunPath } from "./stored_run.ts";
import { type LiveRows, liveRows, type LiveStats, statsText } from "./live_rows.ts";

/** How many rows the chart looks at, at most. */
const CHART_ROWS = 5000;

export interface RunPane {
  readonly element: HTMLElement;
  /** Runs a script text in `workDir`. */
  runText(text: string, workDir: string): Promise<void>;
  /** Runs a stored script with its arguments. */
  runStored(path: string, args: Record<string, string>): Promise<void>;
  /** Follows a query already submitted (from the queries list). */
  follow(queryId: string): Promise<void>;
  cancel(): Promise<void>;
  /** The time field of the last result of events, if it had one (for the time picker). */
  timeField(): string | null;
  /** The query followed, if any. */
  current(): string | null;
}

export type Submitted =
  | { readonly script: string; readonly workDir: string }
  | { readonly stored: { readonly path: string; readonly args: Record<string, string> } };

export function runPane(options: {
  readonly onState: (queryId: string, state: string) => void;
  /** A query is followed from now on (submitted, opened, or re-attached after a reload). */
  readonly onFollow?: (queryId: string) => void;
  /** A query was submitted from here: what ran, for the history. */
  readonly onSubmitted?: (queryId: string, what: Submitted) => void;
  /** A followed query finished (`rows` once its result's size is known). */
  readonly onFinished?: (queryId: string, state: string, rows?: number) => void;
  /** "Run again" on a query whose result expired. */
  readonly onRunAgain?: () => void;
  /** The script in the editor: what a query followed from elsewhere ran, as far as we know. */
  readonly script?: () => { readonly text: string; readonly workDir: string };
  /** A drag across the events histogram. */
  readonly onZoom?: (from: Date, to: Date) => void;
  /** The grid's sort and filters, for the query shown (console/refine.ts). */
  readonly grid?: () => Omit<GridActions, "onExpired">;
}): RunPane {
  const state = h("output", { className: "state", "aria-label": "State" }, "no query yet");
  const progress = h("progress", { max: 1, value: 0, "aria-label": "Progress" });
  const stats = h("output", { className: "stats", "aria-label": "Stats" });
  const cancelButton = h("button", { type: "button", disabled: true }, "Cancel");
  const warnings = h("ul", { className: "warnings", "aria-label": "Warnings" });
  const error = h("div", { role: "alert", className: "error" });
  const downloads = h("div", { className: "downloads", hidden: true });
  const chart = h("div", { className: "chart-box" });
  const count = h("output", { "aria-label": "Row count" });
  const table = h("div", { className: "result" });
  /** While the query runs: its first rows so far (console/live_rows.ts). */
  const live = h("div", { className: "live-box" });
  const fields = h("div", { className: "fields-box" });
  const element = h(
    "section",
    { className: "run", "aria-label": "Query" },
    h(
      "div",
      { className: "run-status", role: "status", "aria-live": "polite" },
      h("span", {}, "State: "),
      state,
      progress,
      stats,
      cancelButton,
    ),
    error,
    warnings,
    h("div", { className: "result-bar" }, count, downloads),
    chart,
    fields,
    live,
    table,
  );
  let current: string | null = null;
  /** What the last query submitted from here ran. */
  let submitted: { queryId: string; text: string; workDir: string } | null = null;
  let timeField: string | null = null;
  let following: AbortController | null = null;
  let liveView: LiveRows | null = null;
  /** The first rows of the query followed, shown while it runs and asked for on each tick. */
  const showLive = (queryId: string) => {
    if (!liveView) {
      liveView = liveRows(queryId);
      fill(live, liveView.element);
    }
    liveView.refresh();
  };
  const hideLive = () => {
    liveView?.stop();
    liveView = null;
    fill(live);
  };

  cancelButton.addEventListener("click", () => pane.cancel());

  const reset = () => {
    following?.abort();
    hideLive();
    fill(state, "submitting");
    progress.value = 0;
    fill(stats);
    fill(warnings);
    fill(error);
    error.classList.remove("gone");
    fill(table);
    fill(fields);
    fill(chart);
    fill(count);
    downloads.hidden = true;
  };
  const showError = (e: unknown) => {
    fill(error, (e as Error).message);
    fill(state, "not started");
  };
  /** The server no longer has the query (410) or never had it for this user (404). */
  const showGone = (queryId: string, e: ApiFailure) => {
    const again = h("button", {
      type: "button",
      className: "primary",
      onclick: () => options.onRunAgain?.(),
    }, "Run again");
    fill(
      error,
      e.status === 410
        ? `The result of query ${queryId.slice(0, 8)} has expired: the server keeps a result ` +
          `only for a while after it was last read (query.retention). `
        : `There is no query ${queryId.slice(0, 8)} for you on this server (${e.message}). `,
      again,
    );
    error.classList.add("gone");
    fill(state, e.status === 410 ? "expired" : "not found");
    state.dataset.state = "EXPIRED";
    cancelButton.disabled = true;
    fill(table);
    fill(fields);
    fill(chart);
    fill(count);
    downloads.hidden = true;
  };
  const submit = async (path: string, init: RequestInit, what: Submitted) => {
    reset();
    try {
      const { queryId } = await apiJson<{ queryId: string }>(path, init);
      options.onSubmitted?.(queryId, what);
      if ("script" in what) submitted = { queryId, text: what.script, workDir: what.workDir };
      else submitted = null;
      await pane.follow(queryId);
    } catch (e) {
      showError(e);
    }
  };

  const setState = (queryId: string, s: string) => {
    fill(state, s);
    state.dataset.state = s;
    cancelButton.disabled = FINISHED.has(s);
    options.onState(queryId, s);
  };

  const showResult = async (queryId: string) => {
    const schema = await apiJson<Record<string, string>>(`/queries/${queryId}/result/schema`);
    const ran = submitted?.queryId === queryId ? submitted : options.script?.();
    const aggregate = isAggregate(ran?.text ?? "");
    // A histogram of events needs no rows to be planned: its place is kept before the grid is
    // drawn, so the grid never moves under the pointer (charts.ts, chartPlaceholder).
    const early = chartPlan(schema, aggregate, 0);
    if (early?.kind === "events" && ran) {
      fill(chart, chartPlaceholder(chartTitle(early), `Counting the events over ${early.time}…`));
    }
    const result = resultTable(
      { rowsPath: `/queries/${queryId}/result`, schema },
      (n) => {
        fill(count, `${n} rows`);
        options.onFinished?.(queryId, "SUCCEEDED", n);
      },
      { ...options.grid?.(), onExpired: (e) => showGone(queryId, e) },
    );
    fill(table, result.element);
    fill(
      downloads,
      ...([
        ["CSV", "application/csv", "csv"],
        ["JSON", "application/json", "json"],
        ["Arrow", "application/vnd.apache.arrow.stream", "arrows"],
      ] as const).map(([label, type, ext]) =>
        h("button", {
          type: "button",
          onclick: async () => {
            const res = await api(`/queries/${queryId}/result`, { headers: { Accept: type } });
            download(await res.blob(), `trawl-${queryId.slice(0, 8)}.${ext}`);
          },
        }, `Download ${label}`)
      ),
    );
    downloads.hidden = false;
    // The chart waits for the first page, which tells the total.
    const first = await result.rows(1);
    if (first.length === 0) {
      if (current === queryId) fill(chart);
      return;
    }
    const onFilter = options.grid?.().onFilter;
    if (ran && onFilter && current === queryId) {
      fill(fields, fieldsPane({ schema, script: ran, onFilter }));
    }
    const plan = chartPlan(schema, aggregate, result.total());
    timeField = plan?.kind === "events" ? plan.time : null;
    if (!plan || !ran) return;
    if (plan.kind === "values") {
      if (current === queryId) {
        fill(chart, chartPlaceholder(chartTitle(plan), "Drawing the values…"));
      }
      const picture = valuesChart(plan, await result.rows(CHART_ROWS), result.total());
      if (current === queryId) fill(chart, picture);
      return;
    }
    // Events: the server counts all of them per bucket, the script run twice more.
    const base = withoutTail(ran.text);
    const f = fieldName(plan.time);
    const sync = async (text: string) =>
      await apiJson<Record<string, unknown>[]>(
        `/?scriptPath=${encodeURIComponent(ran.workDir)}`,
        {
          method: "POST",
          headers: { "Content-Type": "text/plain", Accept: "application/json" },
          body: text,
        },
      );
    // Every write to the chart box checks that this query is still the one shown: a histogram
    // finishing late would empty or overwrite the chart of the query run after it.
    if (current !== queryId) return;
    // The place stays kept whatever comes: a note in it rather than an empty box.
    const note = (text: string) => fill(chart, chartPlaceholder(chartTitle(plan), text));
    try {
      const [span] = await sync(
        `${base}\n| select(min(${f}) as lo, max(${f}) as hi, count(*) as n)`,
      );
      if (current !== queryId) return;
      if (!span || span.lo === null) return note(`No event has a ${plan.time}: nothing to count.`);
      const bucket = bucketFor(Date.parse(String(span.hi)) - Date.parse(String(span.lo)));
      const rows = await sync(
        `${base}\n| select(time_trunc(${f}, ${bucket.literal}) as t, count(*) as n)\n| group(t)\n| sort(t)`,
      );
      if (current !== queryId) return;
      const picture = eventsChart(
        plan.time,
        rows,
        bucket,
        Number(span.n),
        (from, to) => options.onZoom?.(from, to),
      );
      if (picture) fill(chart, picture);
      else note(`No event has a ${plan.time}: nothing to count.`);
    } catch (e) {
      if (current === queryId) note(`No histogram: ${(e as Error).message}`);
    }
  };

  const pane: RunPane = {
    element,
    current: () => current,
    timeField: () => timeField,
    runText(text, workDir) {
      return submit(`/queries?scriptPath=${encodeURIComponent(workDir)}`, {
        method: "POST",
        headers: { "Content-Type": "text/plain" },
        body: text,
      }, { script: text, workDir });
    },
    runStored(path, args) {
      let url;
      try {
        url = storedRunPath(path, args);
      } catch (e) {
        reset();
        showError(e);
        return Promise.resolve();
      }
      return submit(url, { method: "POST" }, { stored: { path, args } });
    },
    async follow(queryId) {
      following?.abort();
      const abort = new AbortController();
      following = abort;
      hideLive();
      current = queryId;
      element.dataset.queryId = queryId;
      options.onFollow?.(queryId);
      let finished: QueryStatus | null = null;
      let running = false;
      const open = async (lastEventId: string | null) =>
        (await api(`/queries/${queryId}/events`, {
          signal: abort.signal,
          headers: lastEventId === null ? {} : { "Last-Event-ID": lastEventId },
        })).body!;
      let lost: unknown = null;
      try {
        const events = resumedEvents(open, {
          finished: endsQuery,
          isFinal: (e) => e instanceof ApiFailure,
          signal: abort.signal,
        });
        for await (const ev of events) {
          const data = JSON.parse(ev.data);
          switch (ev.event) {
            case "status": {
              const st = data as QueryStatus;
              setState(queryId, st.state);
              progress.value = st.progress;
              running = st.state === "RUNNING";
              if (st.stats) fill(stats, statsText(st.stats, running));
              if (running) showLive(queryId);
              fill(warnings, ...st.warnings.map(warningItem));
              if (FINISHED.has(st.state)) finished = st;
              break;
            }
            case "state":
              setState(queryId, data.to);
              running = data.to === "RUNNING";
              if (running) showLive(queryId);
              break;
            case "progress":
              progress.value = data.progress;
              break;
            case "warning":
              warnings.append(warningItem(data));
              break;
            case "stats":
              fill(stats, statsText(data as LiveStats, running));
              // Every second or so while it runs: the first rows so far, until a page is full.
              if (running) showLive(queryId);
              break;
          }
        }
      } catch (e) {
        if (abort.signal.aborted) return;
        if (e instanceof ApiFailure && (e.status === 410 || e.status === 404)) {
          return showGone(queryId, e);
        }
        if (e instanceof ApiFailure) return showError(e);
        lost = e;
      }
      if (current !== queryId) return;
      hideLive();
      let st = finished;
      try {
        st ??= await apiJson<QueryStatus>(`/queries/${queryId}`);
      } catch (e) {
        if (e instanceof ApiFailure && (e.status === 410 || e.status === 404)) {
          return showGone(queryId, e);
        }
        return showError(lost ?? e);
      }
      setState(queryId, st.state);
      progress.value = st.progress;
      // Its last stats (the stream may stop at the finished state, before them): no time left.
      if (st.stats) fill(stats, statsText(st.stats, false));
      options.onFinished?.(queryId, st.state);
      if (st.state === "SUCCEEDED") {
        await showResult(queryId).catch((e) => {
          if (e instanceof ApiFailure && (e.status === 410 || e.status === 404)) {
            showGone(queryId, e);
          } else fill(error, (e as Error).message);
        });
      } else if (st.error) fill(error, st.error.message);
      else if (lost) fill(error, `lost the query's events: ${(lost as Error).message}`);
    },
    async cancel() {
      if (!current) return;
      try {
        await api(`/queries/${current}`, { method: "DELETE" });
      } catch (e) {
        showError(e);
      }
    },
  };
  return pane;
}

/** The event after which a query's stream ends: its finished status or state. */
function endsQuery(ev: ServerEvent): boolean {
  if (ev.event === "status") return FINISHED.has(JSON.parse(ev.data).state);
  return ev.event === "state" && FINISHED.has(JSON.parse(ev.data).to);
}

function warningItem(w: { time: string; level: string; message: string }): HTMLElement {
  return h("li", { className: `warning ${w.level.toLowerCase()}` }, `${w.level} ${w.message}`);
}
