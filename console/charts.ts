/**
 * Pictures of a result where people would rather look than read, in plain SVG: a histogram over
 * time when there is a TIMESTAMP column, a bar chart when the result is a grouped count (one
 * text column and one number column, a few dozen rows).
 */

import { h, svg } from "./dom.ts";

const W = 640;
const H = 200;
const BARS = 40;

type Rows = readonly Record<string, unknown>[];

/** The chart the rows call for, or null. `sampled` says when only the first rows are in it. */
export function chartFor(
  schema: Record<string, string>,
  rows: Rows,
  total: number,
): HTMLElement | null {
  const columns = Object.entries(schema).map(([name, type]) => ({
    name,
    type: type.replace(/^\?/, ""),
  }));
  const time = columns.find((c) => c.type === "TIMESTAMP");
  const numeric = columns.filter((c) => ["INTEGER", "LONG", "DOUBLE"].includes(c.type));
  const labels = columns.filter((c) => !["INTEGER", "LONG", "DOUBLE"].includes(c.type));
  if (time) return histogram(time.name, rows, total);
  if (numeric.length === 1 && labels.length === 1 && total <= 60 && rows.length > 0) {
    return bars(labels[0].name, numeric[0].name, rows);
  }
  return null;
}

function histogram(column: string, rows: Rows, total: number): HTMLElement | null {
  const times = rows.map((r) => Date.parse(String(r[column]))).filter((t) => !Number.isNaN(t));
  if (times.length === 0) return null;
  const min = Math.min(...times);
  const max = Math.max(...times);
  const width = Math.max(1, (max - min) / BARS);
  const counts = new Array(BARS).fill(0);
  for (const t of times) counts[Math.min(BARS - 1, Math.floor((t - min) / width))]++;
  const top = Math.max(...counts);
  const barW = W / BARS;
  const title = `Rows over time by ${column}` +
    (times.length < total ? ` (first ${times.length} of ${total} rows)` : "");
  return figure(
    title,
    counts.map((n, i) =>
      svg(
        "rect",
        {
          x: i * barW + 1,
          y: H - (n / top) * (H - 20),
          width: barW - 2,
          height: (n / top) * (H - 20),
          class: "bar",
        },
        svg("title", {}, `${new Date(min + i * width).toISOString()}: ${n}`),
      )
    ),
    [new Date(min).toISOString(), new Date(max).toISOString()],
  );
}

function bars(label: string, value: string, rows: Rows): HTMLElement {
  const items = rows.map((r) => ({
    label: String(r[label] ?? "(null)"),
    n: Number(r[value]) || 0,
  }));
  const top = Math.max(1, ...items.map((i) => i.n));
  const barW = W / items.length;
  return figure(
    `${value} by ${label}`,
    items.map((item, i) =>
      svg(
        "rect",
        {
          x: i * barW + 1,
          y: H - (item.n / top) * (H - 20),
          width: Math.max(1, barW - 2),
          height: (item.n / top) * (H - 20),
          class: "bar",
        },
        svg("title", {}, `${item.label}: ${item.n}`),
      )
    ),
    [items[0].label, items.at(-1)!.label],
  );
}

function figure(title: string, marks: Element[], ends: [string, string]): HTMLElement {
  return h(
    "figure",
    { className: "chart" },
    svg(
      "svg",
      { viewBox: `0 0 ${W} ${H + 16}`, role: "img", "aria-label": title },
      ...marks,
      svg("text", { x: 0, y: H + 14, class: "axis" }, ends[0]),
      svg("text", { x: W, y: H + 14, class: "axis", "text-anchor": "end" }, ends[1]),
    ),
    h("figcaption", {}, title),
  );
}
