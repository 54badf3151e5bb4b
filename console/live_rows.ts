/**
 * A running query, as it goes: its stats as a line people read (rows, bytes and records read, the
 * time it has run, the time left when the server can tell), and the first rows of its result while
 * it still runs (a page read with `Range`: the server answers a RUNNING query's rows so far,
 * docs/api.md "Rows while it runs"). Values are shown as text, never as HTML.
 */

import { api } from "./api.ts";
import { fill, h } from "./dom.ts";
import { bytesText } from "./tree_pane.ts";

/** How many rows the preview shows. */
export const LIVE_ROWS = 100;

/** The `stats` of an event or a status. */
export interface LiveStats {
  readonly rowsOut?: number;
  readonly elapsedMillis?: number;
  readonly bytesRead?: number;
  readonly recordsRead?: number;
  readonly etaMillis?: number;
}

const count = new Intl.NumberFormat("en-US");

/** A duration as people read it: 850 ms, 4.2 s, 3 min 5 s, 1 h 2 min. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - 60 * m)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** "1,234 rows · 38.4 MB read · 700,000 records · 4.2 s · about 12 s left" */
export function statsText(stats: LiveStats, running: boolean): string {
  const parts = [`${count.format(stats.rowsOut ?? 0)} rows`];
  if (stats.bytesRead) parts.push(`${bytesText(stats.bytesRead)} read`);
  if (stats.recordsRead) parts.push(`${count.format(stats.recordsRead)} records`);
  parts.push(durationText(stats.elapsedMillis ?? 0));
  if (running && stats.etaMillis !== undefined) {
    parts.push(`about ${durationText(stats.etaMillis)} left`);
  }
  return parts.join(" · ");
}

/** The preview of a running query's first rows: `refresh` asks the server for them again. */
export interface LiveRows {
  readonly element: HTMLElement;
  /** Reads the first page again, unless a read is under way or the page is full. */
  refresh(): void;
  /** Forgets it: no more reads. */
  stop(): void;
}

export function liveRows(queryId: string): LiveRows {
  const caption = h("p", { className: "hint live-caption" }, "Waiting for the first rows…");
  // Scrolls: focusable, so that a keyboard reaches every row.
  const table = h("div", { className: "live-table", tabIndex: 0 });
  const element = h(
    "section",
    { className: "live-rows", "aria-label": "Rows so far" },
    caption,
    table,
  );
  let busy = false;
  let full = false;
  let stopped = false;
  let shown = 0;

  const read = async () => {
    const res = await api(`/queries/${queryId}/result`, {
      headers: { Range: `items=0-${LIVE_ROWS - 1}`, Accept: "application/json" },
    });
    const rows = await res.json() as Record<string, unknown>[];
    const soFar = res.headers.get("Trawl-Rows-So-Far");
    if (stopped) return;
    // A finished query's page (it ended meanwhile) is the grid's to show.
    if (res.headers.get("Trawl-Query-State") !== "RUNNING") return;
    if (rows.length === LIVE_ROWS) full = true;
    if (rows.length === shown) return;
    shown = rows.length;
    fill(
      caption,
      `The first ${count.format(rows.length)} rows, while the query runs` +
        (soFar ? ` (${count.format(Number(soFar))} placed so far)` : "") +
        ". The whole result shows once it has finished.",
    );
    fill(table, rowsTable(rows));
  };

  return {
    element,
    refresh() {
      if (busy || full || stopped) return;
      busy = true;
      // A refused read (QUEUED, or it ended meanwhile) just waits for the next refresh.
      read().catch(() => {}).finally(() => busy = false);
    },
    stop() {
      stopped = true;
    },
  };
}

/** Rows as a plain table; every value a text node. */
function rowsTable(rows: readonly Record<string, unknown>[]): HTMLElement {
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    for (const k of Object.keys(row)) {
      if (!seen.has(k)) {
        seen.add(k);
        columns.push(k);
      }
    }
  }
  return h(
    "table",
    { className: "live", "aria-label": "First rows so far" },
    h("thead", {}, h("tr", {}, ...columns.map((c) => h("th", { scope: "col" }, c)))),
    h(
      "tbody",
      {},
      ...rows.map((row) => h("tr", {}, ...columns.map((c) => h("td", {}, valueText(row[c]))))),
    ),
  );
}

function valueText(v: unknown): string {
  if (v === null || v === undefined) return "";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}
