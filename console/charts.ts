/**
 * Pictures of a result, drawn with uPlot (docs/console.md says why uPlot):
 *
 * - events over time: when the result is events (no aggregate) with a TIMESTAMP column, a
 *   histogram of all matching events computed by the server (console/run_pane.ts runs the script
 *   again with `| select(time_trunc(t, <bucket>) as t, count(*) as n) | group(t)`), bucketed so
 *   that the range makes at most ~120 bars; dragging across it zooms the time picker;
 * - values of an aggregate: its numeric columns as values over its TIMESTAMP column (else its
 *   first text column, as categories), a text column as series; with axes, a legend and the
 *   values under the pointer.
 */

import uPlot from "uplot";
import { h } from "./dom.ts";
import { withEmptyBuckets } from "./buckets.ts";

type Row = Record<string, unknown>;

const NUMERIC = new Set(["INTEGER", "LONG", "DOUBLE"]);
const PALETTE = [
  "#3b82f6",
  "#f59e0b",
  "#10b981",
  "#ef4444",
  "#8b5cf6",
  "#06b6d4",
  "#ec4899",
  "#84cc16",
  "#6b7280",
  "#a16207",
];
/** Series drawn at most; the rest are summed into "other". */
const MAX_SERIES = 8;
const HEIGHT = 220;

export type ChartPlan =
  | { readonly kind: "events"; readonly time: string }
  | {
    readonly kind: "values";
    readonly x: string;
    readonly xIsTime: boolean;
    readonly values: readonly string[];
    readonly series: string | null;
  };

const bare = (t: string) => t.replace(/^\?/, "");

/** A chart's title, the name of its picture for assistive technology. */
export function chartTitle(plan: ChartPlan): string {
  if (plan.kind === "events") return `Events over time by ${plan.time}`;
  const what = plan.series ? `${plan.values[0]} by ${plan.series}` : plan.values.join(", ");
  return `${what} over ${plan.x}`;
}

/** The chart a result's schema (and whether its script aggregates) calls for, if any. */
export function chartPlan(
  schema: Record<string, string>,
  aggregate: boolean,
  total: number,
): ChartPlan | null {
  const cols = Object.entries(schema).map(([name, type]) => ({ name, type: bare(type) }));
  const time = cols.find((c) => c.type === "TIMESTAMP");
  const numbers = cols.filter((c) => NUMERIC.has(c.type)).map((c) => c.name);
  const texts = cols.filter((c) =>
    c.type === "STRING" || c.type === "IPADDR" || c.type === "BOOLEAN"
  )
    .map((c) => c.name);
  if (!aggregate && time) return { kind: "events", time: time.name };
  if (numbers.length === 0) return null;
  // Rows that look like a summary (a stored table of counts, say) are drawn as one.
  if (!aggregate && (total > 60 || texts.length === 0)) return null;
  if (time) {
    return {
      kind: "values",
      x: time.name,
      xIsTime: true,
      values: numbers,
      series: texts[0] ?? null,
    };
  }
  if (texts.length === 0) return null;
  return {
    kind: "values",
    x: texts[0]!,
    xIsTime: false,
    values: numbers,
    series: texts[1] ?? null,
  };
}

/** Bucket widths the histogram picks from, with the interval literal the language reads. */
export const BUCKETS: readonly { readonly ms: number; readonly literal: string }[] = [
  [1_000, "1 s"],
  [5_000, "5 s"],
  [15_000, "15 s"],
  [60_000, "1 min"],
  [300_000, "5 min"],
  [900_000, "15 min"],
  [3_600_000, "1 h"],
  [3 * 3_600_000, "3 h"],
  [6 * 3_600_000, "6 h"],
  [12 * 3_600_000, "12 h"],
  [86_400_000, "1 day"],
  [7 * 86_400_000, "7 days"],
  [30 * 86_400_000, "30 days"],
].map(([ms, literal]) => ({ ms: ms as number, literal: literal as string }));

/** The smallest bucket that cuts `spanMs` into at most `bars` bars. */
export function bucketFor(spanMs: number, bars = 120) {
  return BUCKETS.find((b) => spanMs / b.ms <= bars) ?? BUCKETS.at(-1)!;
}

interface Drawn {
  readonly element: HTMLElement;
}

function colours() {
  const css = getComputedStyle(document.documentElement);
  return {
    fg: css.getPropertyValue("--muted").trim() || "#57606a",
    grid: css.getPropertyValue("--line").trim() || "#d0d7de",
  };
}

function axes(xIsTime: boolean, labels?: readonly string[]): uPlot.Axis[] {
  const { fg, grid } = colours();
  const x: uPlot.Axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
  if (!xIsTime && labels) {
    x.values = (_u, splits) => splits.map((i) => labels[i] ?? "");
    x.splits = () => labels.map((_, i) => i);
  }
  return [x, { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, size: 60 }];
}

/**
 * A chart's place while its data is on its way: a figure of the size the chart will have (the
 * canvas box and a caption of two lines, console.css), saying what it waits for. What is below it,
 * the grid, then stays where it is when the picture arrives: a person reaching for a column's edge
 * is not handed the histogram instead (a drag there would zoom the time range).
 */
export function chartPlaceholder(title: string, note: string): HTMLElement {
  return h(
    "figure",
    { className: "chart pending" },
    h(
      "div",
      { className: "chart-canvas", role: "img", "aria-label": title, "aria-busy": "true" },
      h("p", { className: "hint" }, note),
    ),
    h("figcaption", {}, title),
  );
}

/** A uPlot chart in a figure that follows its box's width. */
function figure(
  title: string,
  caption: string,
  build: (width: number) => uPlot.Options,
  data: uPlot.AlignedData,
): Drawn & { plot: () => uPlot | null } {
  const box = h("div", { className: "chart-canvas", role: "img", "aria-label": title });
  const element = h("figure", { className: "chart" }, box, h("figcaption", {}, caption));
  const width = () => Math.max(280, box.clientWidth || 640);
  // Drawn at once (640 px wide until the box is laid out), not at the first resize
  // notification: a figure had no chart until the browser sent one, and a browser test on a
  // busy machine waited 30 s for a figure's canvas.
  const plot = new uPlot(build(width()), data, box);
  new ResizeObserver(() => {
    if (box.isConnected) plot.setSize({ width: width(), height: HEIGHT });
  }).observe(box);
  return { element, plot: () => plot };
}

/**
 * The histogram of events per bucket (`rows` of `{t, n}` from the server); a drag across it
 * calls `onZoom` with the range selected.
 */
export function eventsChart(
  time: string,
  rows: readonly Row[],
  bucket: { readonly ms: number; readonly literal: string },
  total: number,
  onZoom: (from: Date, to: Date) => void,
): HTMLElement | null {
  const given = rows.map((r) => ({ t: Date.parse(String(r.t)), n: Number(r.n) }))
    .filter((p) => !Number.isNaN(p.t));
  if (given.length === 0) return null;
  const points = withEmptyBuckets(given, bucket.ms);
  const xs = points.map((p) => p.t / 1000);
  const ys = points.map((p) => p.n);
  const title = chartTitle({ kind: "events", time });
  return figure(
    title,
    `${title}: ${total} events, ${bucket.literal} per bar, all of them counted by the server. ` +
      "Drag across the chart to narrow the time range.",
    (width) => ({
      width,
      height: HEIGHT,
      scales: {
        x: { time: true, range: (_u, lo, hi) => [lo, hi + bucket.ms / 1000] },
        y: { range: (_u, _lo, hi) => [0, Math.max(1, hi) * 1.05] },
      },
      axes: axes(true),
      cursor: { drag: { x: true, y: false, setScale: false } },
      legend: { live: true },
      series: [
        { label: time },
        {
          label: "events",
          stroke: PALETTE[0]!,
          fill: PALETTE[0] + "99",
          width: 1,
          paths: uPlot.paths.bars!({ size: [0.9, Infinity], align: 1 }),
          points: { show: false },
        },
      ],
      hooks: {
        setSelect: [(u) => {
          if (u.select.width < 2) return;
          const from = u.posToVal(u.select.left, "x");
          const to = u.posToVal(u.select.left + u.select.width, "x");
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          onZoom(new Date(from * 1000), new Date(to * 1000));
        }],
      },
    }),
    [xs, ys],
  ).element;
}

/**
 * An aggregate's values: over time or over categories, one line (or bar group) per numeric
 * column, or per value of the series column for the first numeric column.
 */
export function valuesChart(
  plan: Extract<ChartPlan, { kind: "values" }>,
  rows: readonly Row[],
  total: number,
): HTMLElement | null {
  if (rows.length === 0) return null;
  const xKey = (r: Row) =>
    plan.xIsTime ? Date.parse(String(r[plan.x])) / 1000 : String(r[plan.x] ?? "(null)");
  const xsRaw = [...new Set(rows.map(xKey))].filter((x) =>
    typeof x === "string" || !Number.isNaN(x)
  );
  if (plan.xIsTime) (xsRaw as number[]).sort((a, b) => a - b);
  const at = new Map(xsRaw.map((x, i) => [x, i]));
  const value = plan.values[0]!;
  let names: string[];
  let columns: (number | null)[][];
  if (plan.series) {
    const sums = new Map<string, number>();
    for (const r of rows) {
      const s = String(r[plan.series] ?? "(null)");
      sums.set(s, (sums.get(s) ?? 0) + (Number(r[value]) || 0));
    }
    const ranked = [...sums.entries()].sort((a, b) => b[1] - a[1]).map(([s]) => s);
    names = ranked.slice(0, MAX_SERIES);
    const other = ranked.length > MAX_SERIES;
    if (other) names.push("other");
    columns = names.map(() => xsRaw.map(() => null));
    for (const r of rows) {
      const s = String(r[plan.series] ?? "(null)");
      let k = names.indexOf(s);
      if (k < 0) k = names.length - 1;
      const i = at.get(xKey(r));
      if (i === undefined) continue;
      const col = columns[k]!;
      col[i] = (col[i] ?? 0) + (Number(r[value]) || 0);
    }
  } else {
    names = plan.values.slice(0, MAX_SERIES);
    columns = names.map((v) => {
      const col: (number | null)[] = xsRaw.map(() => null);
      for (const r of rows) {
        const i = at.get(xKey(r));
        if (i !== undefined && r[v] !== null && r[v] !== undefined) col[i] = Number(r[v]);
      }
      return col;
    });
  }
  const xs = plan.xIsTime ? xsRaw as number[] : xsRaw.map((_, i) => i);
  const labels = plan.xIsTime ? undefined : xsRaw as string[];
  const title = chartTitle(plan);
  // Categories with one series are bars; several series, or time, are lines with points.
  const bars = !plan.xIsTime && names.length === 1;
  const series: uPlot.Series[] = names.map((name, k) => {
    const colour = PALETTE[k % PALETTE.length]!;
    return bars
      ? {
        label: name,
        stroke: colour,
        fill: colour + "cc",
        width: 1,
        paths: uPlot.paths.bars!({ size: [0.7, 80] }),
        points: { show: false },
      }
      : { label: name, stroke: colour, width: 2, points: { show: true, size: 5 } };
  });
  return figure(
    title,
    `${title}` + (rows.length < total ? ` (the first ${rows.length} of ${total} rows)` : "") +
      ". Point at the chart to read the values.",
    (width) => ({
      width,
      height: HEIGHT,
      scales: {
        x: plan.xIsTime ? { time: true } : { time: false, range: [-0.5, xs.length - 0.5] },
        // From zero (or below, for negative values): bars and counts read true.
        y: { range: (_u, lo, hi) => [Math.min(0, lo), hi > 0 ? hi * 1.05 : 1] },
      },
      axes: axes(plan.xIsTime, labels),
      legend: { live: true },
      series: [
        plan.xIsTime
          ? { label: plan.x }
          : { label: plan.x, value: (_u: uPlot, i: number) => labels?.[Math.round(i)] ?? "" },
        ...series,
      ],
    }),
    [xs, ...columns] as uPlot.AlignedData,
  ).element;
}
