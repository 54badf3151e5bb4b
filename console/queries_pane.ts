/**
 * The queries one may see (`GET /queries`: mine; everyone's for admins), refreshed live, each
 * with Open, Cancel while it runs, and Run again when this browser kept its script; below, the
 * person's own history (console/history.ts), which outlives the server's retention.
 */

import { api, apiJson, FINISHED } from "./api.ts";
import { fill, h } from "./dom.ts";
import type { HistoryEntry, QueryHistory } from "./history.ts";

interface Item {
  readonly queryId: string;
  readonly user: string;
  readonly state: string;
  readonly progress: number;
  readonly submitted: string;
  readonly scriptPath: string;
  readonly excerpt: string;
}

const REFRESH_MS = 1000;

export function queriesPane(options: {
  readonly onOpen: (queryId: string) => void;
  readonly onRunAgain: (entry: HistoryEntry) => void;
  readonly history: QueryHistory;
}) {
  const { history } = options;
  const body = h("tbody");
  const historyBody = h("tbody");
  const error = h("p", { role: "alert", className: "error" });
  const head = (...names: string[]) =>
    h("thead", {}, h("tr", {}, ...names.map((t) => h("th", { scope: "col" }, t))));
  const element = h(
    "section",
    { "aria-label": "Queries" },
    h("h2", { id: "queries-retained" }, "Queries on the server"),
    h(
      "div",
      { className: "table-scroll" },
      h(
        "table",
        { className: "queries", "aria-labelledby": "queries-retained" },
        head("Submitted", "User", "State", "Progress", "Script", "Actions"),
        body,
      ),
    ),
    error,
    h("h2", { id: "queries-history" }, "Your history (kept in this browser)"),
    h(
      "div",
      { className: "table-scroll" },
      h(
        "table",
        { className: "queries-history", "aria-labelledby": "queries-history" },
        head("Submitted", "State", "Duration", "Rows", "Script", "Actions"),
        historyBody,
      ),
    ),
  );
  const short = (id: string) => id.slice(0, 8);
  const runAgain = (entry: HistoryEntry | undefined, id: string) =>
    entry
      ? h("button", {
        type: "button",
        "aria-label": `Run again: query ${short(id)}`,
        onclick: () => options.onRunAgain(entry),
      }, "Run again")
      : null;
  const open = (id: string) =>
    h("button", {
      type: "button",
      onclick: () => options.onOpen(id),
      "aria-label": `Open query ${id}`,
    }, "Open");
  const cancel = (id: string) =>
    h("button", {
      type: "button",
      "aria-label": `Cancel query ${short(id)}`,
      onclick: async () => {
        try {
          await api(`/queries/${id}`, { method: "DELETE" });
          await load();
        } catch (e) {
          fill(error, (e as Error).message);
        }
      },
    }, "Cancel");
  const drawHistory = () => {
    fill(
      historyBody,
      ...history.list().map((e) =>
        h(
          "tr",
          { "data-query-id": e.queryId },
          h("td", {}, when(e.submitted)),
          h("td", { className: `state-${e.state ?? ""}` }, e.state ?? "submitted"),
          h("td", {}, e.finished ? duration(e.finished - e.submitted) : ""),
          h("td", {}, e.rows === undefined ? "" : String(e.rows)),
          h(
            "td",
            { className: "script-cell" },
            e.stored ? h("code", {}, e.stored.path) : excerptOf(e.script ?? ""),
          ),
          h("td", { className: "actions" }, open(e.queryId), runAgain(e, e.queryId)),
        )
      ),
    );
  };
  history.onChange(drawHistory);
  let timer: ReturnType<typeof setInterval> | undefined;
  const rows = new Map<
    string,
    { key: string; tr: HTMLElement; actions: HTMLElement; finished: boolean }
  >();
  const load = async () => {
    try {
      const items = await apiJson<Item[]>("/queries");
      fill(error);
      // Rows are kept by query and changed in place: a button stays put while one clicks it.
      const next = items.map((q) => {
        const key = JSON.stringify([q.state, q.progress, history.get(q.queryId) !== undefined]);
        const had = rows.get(q.queryId);
        if (had && had.key === key) return had.tr;
        const tr = h(
          "tr",
          { "data-query-id": q.queryId },
          h("td", {}, new Date(q.submitted).toLocaleTimeString()),
          h("td", {}, q.user),
          h("td", { className: `state-${q.state}` }, q.state),
          h("td", {}, `${Math.round(q.progress * 100)} %`),
          h("td", { className: "script-cell" }, h("code", {}, q.scriptPath), " ", q.excerpt),
          had && FINISHED.has(q.state) === had.finished ? had.actions : h(
            "td",
            { className: "actions" },
            open(q.queryId),
            FINISHED.has(q.state) ? null : cancel(q.queryId),
            runAgain(history.get(q.queryId), q.queryId),
          ),
        );
        const actions = tr.lastElementChild as HTMLElement;
        rows.set(q.queryId, { key, tr, actions, finished: FINISHED.has(q.state) });
        if (had) had.tr.replaceWith(tr);
        return tr;
      });
      for (const id of rows.keys()) if (!items.some((q) => q.queryId === id)) rows.delete(id);
      const same = next.length === body.children.length &&
        next.every((tr, i) => body.children[i] === tr);
      if (!same) fill(body, ...next);
    } catch (e) {
      fill(error, (e as Error).message);
    }
  };
  return {
    element,
    /** Refreshes while shown, stops when hidden. */
    setVisible(visible: boolean) {
      clearInterval(timer);
      if (!visible) return;
      drawHistory();
      load();
      timer = setInterval(load, REFRESH_MS);
    },
  };
}

function excerptOf(script: string): string {
  const one = script.replace(/\s+/g, " ").trim();
  return one.length > 80 ? one.slice(0, 79) + "…" : one;
}

function when(millis: number): string {
  return new Date(millis).toLocaleString(undefined, {
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
}

function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
