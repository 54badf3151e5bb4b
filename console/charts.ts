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

export type ChartKind =
  | { readonly kind: "histogram"; readonly time: string }
  | { readonly kind: "bars"; readonly label: string; readonly value: string };

/** The chart a result's schema and size call for, if any (before any row is fetched). */
export function chartKind(schema: Record<string, string>, total: number): ChartKind | null {
  const columns = Object.entries(schema).map(([name, type]) => ({
    name,
    type: type.replace(/^\?/, ""),
  }));
  const time = columns.find((c) => c.type === "TIMESTAMP");
  const numeric = columns.filter((c) => ["INTEGER", "LONG", "DOUBLE"].includes(c.type));
  const labels = columns.filter((c) => !["INTEGER", "LONG", "DOUBLE"].includes(c.type));
  if (time) return { kind: "histogram", time: time.name };
  if (numeric.length === 1 && labels.length === 1 && total > 0 && total <= 60) {
    return { kind: "bars", label: labels[0]!.name, value: numeric[0]!.name };
  }
  return null;
}

/** The chart of `kind` over `rows` (the first rows of `total`). */
export function chartFor(kind: ChartKind, rows: Rows, total: number): HTMLElement | null {
  if (rows.length === 0) return null;
  return kind.kind === "histogram"
    ? histogram(kind.time, rows, total)
    : bars(kind.label, kind.value, rows);
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
    [items[0]!.label, items.at(-1)!.label],
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
