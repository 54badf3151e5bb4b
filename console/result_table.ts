/**
 * A result as a table that scrolls through any number of rows: only the rows in view (and a
 * page around them) are in the page, fetched by `Range: items=<first>-<last>` as the person
 * scrolls; the headers show the schema's types.
 */

import { api } from "./api.ts";
import { h } from "./dom.ts";

const ROW_PX = 28;
/**
 * Browsers cap an element's height (Chromium near 33.5 million px, some 1.2 million rows): past
 * this the scroll bar maps onto the rows proportionally instead of a row per 28 px.
 */
const MAX_SCROLL_PX = 8_000_000;
const PAGE = 200;
/** How long the view must rest before pages it lacks are fetched. */
const SETTLE_MS = 60;

export interface RowSource {
  /** The path under /API/v1.0 answering rows as JSON with Range by items. */
  readonly rowsPath: string;
  readonly schema: Record<string, string>;
}

export interface ResultTable {
  readonly element: HTMLElement;
  /** How many rows there are (known after the first page). */
  total(): number;
  /** Loaded rows so far, for the charts. */
  rows(limit: number): Promise<Record<string, unknown>[]>;
}

export function resultTable(source: RowSource, onTotal: (total: number) => void): ResultTable {
  const columns = Object.keys(source.schema);
  const pages = new Map<number, Promise<Record<string, unknown>[]>>();
  let total = -1;
  const template = `repeat(${columns.length}, minmax(8rem, 1fr))`;
  const header = h(
    "div",
    { role: "row", className: "grid-row grid-head" },
    ...columns.map((c) =>
      h(
        "span",
        { role: "columnheader", className: "cell" },
        h("span", { className: "col-name" }, c),
        " ",
        h("span", { className: "col-type" }, source.schema[c]),
      )
    ),
  );
  header.style.gridTemplateColumns = template;
  const spacer = h("div", { className: "grid-spacer" });
  const body = h("div", { role: "rowgroup", className: "grid-body" });
  const viewport = h("div", { className: "grid-viewport", tabIndex: 0 }, spacer, body);
  const element = h(
    "div",
    { role: "grid", "aria-label": "Result", className: "grid", "aria-rowcount": "0" },
    h("div", { role: "rowgroup" }, header),
    viewport,
  );

  const page = (n: number) => {
    let p = pages.get(n);
    if (!p) {
      const first = n * PAGE;
      p = api(source.rowsPath, {
        headers: { Accept: "application/json", Range: `items=${first}-${first + PAGE - 1}` },
      }).then(async (res) => {
        const range = res.headers.get("Content-Range");
        const m = range && /\/(\d+)$/.exec(range);
        const rows = await res.json() as Record<string, unknown>[];
        if (m) setTotal(Number(m[1]));
        else if (res.status === 200) setTotal(rows.length);
        return rows;
      }).catch((e) => {
        pages.delete(n);
        // 416: no rows at all
        if ((e as { status?: number }).status === 416) setTotal(0);
        return [];
      });
      pages.set(n, p);
      // Keeps memory bounded however far one scrolls.
      if (pages.size > 20) pages.delete(pages.keys().next().value!);
    }
    return p;
  };
  const setTotal = (n: number) => {
    if (n === total) return;
    total = n;
    spacer.style.height = `${Math.min(n * ROW_PX, MAX_SCROLL_PX)}px`;
    element.setAttribute("aria-rowcount", String(n + 1));
    onTotal(n);
  };
  let drawn = "";
  let drawing = 0;
  const draw = async () => {
    const generation = ++drawing;
    const top = viewport.scrollTop;
    const count = Math.ceil(viewport.clientHeight / ROW_PX) + 2;
    const scaled = total * ROW_PX > MAX_SCROLL_PX;
    const room = Math.max(1, MAX_SCROLL_PX - viewport.clientHeight);
    const first = scaled
      ? Math.min(total - 1, Math.floor((top / room) * Math.max(0, total - count + 2)))
      : Math.floor(top / ROW_PX);
    // Where the first row drawn goes: in view, just above the top when scrolled part-way.
    const firstTop = scaled ? top : first * ROW_PX;
    const last = total >= 0 ? Math.min(total - 1, first + count) : first + count;
    const key = `${first}-${last}-${total}`;
    if (key === drawn) return;
    const needed = new Set<number>();
    for (let i = Math.floor(first / PAGE); i <= Math.floor(Math.max(first, last) / PAGE); i++) {
      needed.add(i);
    }
    // While the scroll bar is being dragged, only the pages where it stops are fetched.
    if ([...needed].some((n) => !pages.has(n))) {
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      if (generation !== drawing) return;
    }
    const loaded = new Map<number, Record<string, unknown>[]>();
    for (const n of needed) loaded.set(n, await page(n));
    // A later scroll has drawn (or is drawing) meanwhile.
    if (generation !== drawing) return;
    const lastNow = total >= 0 ? Math.min(total - 1, first + count) : first + count;
    const rows: HTMLElement[] = [];
    for (let i = first; i <= lastNow; i++) {
      const row = loaded.get(Math.floor(i / PAGE))?.[i % PAGE];
      if (!row) break;
      const el = h(
        "div",
        { role: "row", className: "grid-row", "aria-rowindex": String(i + 2) },
        ...columns.map((c) => h("span", { role: "gridcell", className: "cell" }, show(row[c]))),
      );
      el.style.gridTemplateColumns = template;
      el.style.top = `${firstTop + (i - first) * ROW_PX}px`;
      rows.push(el);
    }
    body.replaceChildren(...rows);
    drawn = `${first}-${lastNow}-${total}`;
  };
  let pending = false;
  viewport.addEventListener("scroll", () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      draw();
    });
  });
  new ResizeObserver(() => draw()).observe(viewport);
  draw();
  return {
    element,
    total: () => total,
    async rows(limit) {
      const out: Record<string, unknown>[] = [];
      for (let n = 0; n * PAGE < Math.min(limit, Math.max(total, PAGE)); n++) {
        out.push(...await page(n));
        if (total >= 0 && out.length >= total) break;
      }
      return out.slice(0, limit);
    },
  };
}

function show(v: unknown): string {
  if (v === null || v === undefined) return "";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}
