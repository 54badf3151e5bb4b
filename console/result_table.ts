/**
 * A result as a grid that scrolls through any number of rows: only the rows in view (and a page
 * around them) are in the page, fetched by `Range: items=<first>-<last>` as the person scrolls.
 *
 * A grid one works in (WAI-ARIA grid pattern): the headers show the schema's types and sort by
 * their column (the `onSort` hook appends `| sort(...)` to the script and runs it); a filter box
 * per column (`onFilter`: `| filter(...)`); columns as wide as their content (from the first
 * page), resizable by dragging a header's edge or with Alt+Left/Right; one cell in the tab order,
 * the arrow keys, Home/End, Page Up/Down and Ctrl+Home/End move between cells; Enter (or a click)
 * opens the row's detail pane, `+` / `-` filter for / out the focused cell's value.
 */

import { api, ApiFailure } from "./api.ts";
import { fill, h } from "./dom.ts";
import { columnCondition, type SortDirection, valueCondition } from "./refine.ts";

const ROW_PX = 28;
/**
 * Browsers cap an element's height (Chromium near 33.5 million px, some 1.2 million rows): past
 * this the scroll bar maps onto the rows proportionally instead of a row per 28 px.
 */
const MAX_SCROLL_PX = 8_000_000;
const PAGE = 200;
/** How long the view must rest before pages it lacks are fetched. */
const SETTLE_MS = 60;
const MIN_COL_PX = 60;
const MAX_COL_PX = 480;

export interface RowSource {
  /** The path under /API/v1.0 answering rows as JSON with Range by items. */
  readonly rowsPath: string;
  readonly schema: Record<string, string>;
}

export interface GridActions {
  /** The sort the script ends with, shown on its header. */
  readonly sorted?: { readonly field: string; readonly direction: SortDirection } | null;
  readonly onSort?: (field: string, direction: SortDirection) => void;
  /** A condition to add as `| filter(condition)`. */
  readonly onFilter?: (condition: string) => void;
  /** The result is gone from the server (410). */
  readonly onExpired?: (e: ApiFailure) => void;
}

export interface ResultTable {
  readonly element: HTMLElement;
  /** How many rows there are (known after the first page). */
  total(): number;
  /** Loaded rows so far, for the charts. */
  rows(limit: number): Promise<Record<string, unknown>[]>;
}

export function resultTable(
  source: RowSource,
  onTotal: (total: number) => void,
  actions: GridActions = {},
): ResultTable {
  const columns = Object.keys(source.schema);
  const types = columns.map((c) => source.schema[c]!);
  const pages = new Map<number, Promise<Record<string, unknown>[]>>();
  let total = -1;
  let widths = columns.map((c, i) => textWidth(`${c} ${types[i]}`) + 48);
  let sized = false;
  /** The cell in the tab order: row (0 = the header) and column. */
  let active = { row: 1, col: 0 };

  const sortOf = (c: string): SortDirection | null =>
    actions.sorted?.field === c ? actions.sorted.direction : null;
  const headers = columns.map((c, i) => {
    const dir = sortOf(c);
    const sort = h(
      "button",
      {
        type: "button",
        className: "col-sort",
        tabIndex: -1,
        title: `Sort by ${c}`,
        onclick: () => actions.onSort?.(c, dir === "asc" ? "desc" : "asc"),
      },
      h("span", { className: "col-name" }, c),
      " ",
      h("span", { className: "col-type" }, types[i]!),
      dir
        ? h("span", { className: "col-dir", "aria-hidden": "true" }, dir === "asc" ? " ▲" : " ▼")
        : null,
    );
    const grip = h("span", { className: "col-grip", "aria-hidden": "true" });
    grip.addEventListener("pointerdown", (e) => resizeByDrag(e, i));
    return h(
      "div",
      {
        role: "columnheader",
        className: "cell head-cell",
        "aria-colindex": String(i + 1),
        "aria-sort": dir === "asc" ? "ascending" : dir === "desc" ? "descending" : "none",
      },
      sort,
      grip,
    );
  });
  const filters = columns.map((c, i) => {
    const input = h("input", {
      type: "search",
      className: "col-filter",
      "aria-label": `Filter ${c}`,
      placeholder: /^\??(INTEGER|LONG|DOUBLE)$/.test(types[i]!) ? "= or > 5" : "contains…",
    });
    input.addEventListener("keydown", (e) => {
      if (e.key !== "Enter") return;
      e.stopPropagation();
      const cond = columnCondition(c, types[i]!, input.value);
      if (cond) actions.onFilter?.(cond);
    });
    return h("div", { role: "gridcell", className: "cell filter-cell" }, input);
  });
  const headRow = h(
    "div",
    { role: "row", className: "grid-row grid-head", "aria-rowindex": "1" },
    ...headers,
  );
  const filterRow = h(
    "div",
    { role: "row", className: "grid-row grid-filters", "aria-rowindex": "2" },
    ...filters,
  );
  const head = h("div", { role: "rowgroup", className: "grid-headgroup" }, headRow, filterRow);
  const body = h("div", { role: "rowgroup", className: "grid-body" });
  const viewport = h("div", { className: "grid-viewport" }, head, body);
  const grid = h("div", {
    role: "grid",
    "aria-label": "Result",
    className: "grid",
    "aria-rowcount": "-1",
    "aria-colcount": String(columns.length),
  }, viewport);
  const detail = h("section", {
    className: "row-detail",
    "aria-label": "Row detail",
    hidden: true,
  });
  const element = h("div", { className: "result-grid" }, grid, detail);

  const layout = () => {
    const template = widths.map((w) => `${w}px`).join(" ");
    const width = widths.reduce((a, b) => a + b, 0);
    for (const row of [headRow, filterRow, ...body.children] as HTMLElement[]) {
      row.style.gridTemplateColumns = template;
    }
    head.style.width = `${width}px`;
    body.style.width = `${width}px`;
  };
  const setWidth = (i: number, px: number) => {
    widths = widths.map((w, j) => j === i ? Math.max(MIN_COL_PX, Math.round(px)) : w);
    layout();
  };
  function resizeByDrag(e: PointerEvent, i: number) {
    e.preventDefault();
    const startX = e.clientX;
    const startW = widths[i]!;
    const grip = e.target as HTMLElement;
    grip.setPointerCapture(e.pointerId);
    const move = (m: PointerEvent) => setWidth(i, startW + m.clientX - startX);
    const up = () => {
      grip.removeEventListener("pointermove", move);
      grip.removeEventListener("pointerup", up);
    };
    grip.addEventListener("pointermove", move);
    grip.addEventListener("pointerup", up);
  }
  /** Widths by content: the header and the first page's values, within bounds. */
  const sizeColumns = (rows: readonly Record<string, unknown>[]) => {
    if (sized) return;
    sized = true;
    widths = columns.map((c, i) => {
      let longest = `${c} ${types[i]}`;
      let extra = 48;
      for (const r of rows) {
        const s = show(r[c]);
        if (s.length > longest.length) {
          longest = s;
          extra = 24;
        }
      }
      return Math.min(MAX_COL_PX, Math.max(MIN_COL_PX, textWidth(longest) + extra));
    });
    layout();
  };

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
        if (n === 0) sizeColumns(rows);
        return rows;
      }).catch((e) => {
        pages.delete(n);
        // 416: no rows at all
        if (e instanceof ApiFailure && e.status === 416) setTotal(0);
        else if (e instanceof ApiFailure && e.status === 410) actions.onExpired?.(e);
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
    body.style.height = `${Math.min(n * ROW_PX, MAX_SCROLL_PX)}px`;
    grid.setAttribute("aria-rowcount", String(n + 2));
    onTotal(n);
  };
  const rowCount = () => Math.ceil((viewport.clientHeight - head.offsetHeight) / ROW_PX) + 2;
  const scaled = () => total * ROW_PX > MAX_SCROLL_PX;
  /** The first row index in view for a scroll position. */
  const firstAt = (top: number, count: number) => {
    if (!scaled()) return Math.floor(top / ROW_PX);
    const room = Math.max(1, MAX_SCROLL_PX - viewport.clientHeight);
    return Math.min(total - 1, Math.floor((top / room) * Math.max(0, total - count + 2)));
  };
  /** The scroll position that shows row `i` (0-based data row). */
  const scrollFor = (i: number, count: number) => {
    if (!scaled()) return i * ROW_PX;
    const room = Math.max(1, MAX_SCROLL_PX - viewport.clientHeight);
    return Math.ceil((i / Math.max(1, total - count + 2)) * room);
  };
  let drawn = "";
  let drawing = 0;
  /** Row objects drawn, by index, for the detail pane and the cell keys. */
  const shown = new Map<number, Record<string, unknown>>();
  const draw = async () => {
    const generation = ++drawing;
    const top = viewport.scrollTop;
    const count = rowCount();
    const first = Math.max(0, firstAt(top, count));
    // Where the first row drawn goes: in view, just above the top when scrolled part-way.
    const firstTop = scaled() ? top : first * ROW_PX;
    const last = total >= 0 ? Math.min(total - 1, first + count) : first + count;
    const key = `${first}-${last}-${total}-${active.row}-${active.col}`;
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
    shown.clear();
    const hadFocus = body.contains(document.activeElement);
    for (let i = first; i <= lastNow; i++) {
      const row = loaded.get(Math.floor(i / PAGE))?.[i % PAGE];
      if (!row) break;
      shown.set(i, row);
      const el = h(
        "div",
        { role: "row", className: "grid-row", "aria-rowindex": String(i + 3) },
        ...columns.map((c, j) =>
          h("div", {
            role: "gridcell",
            className: "cell",
            tabIndex: active.row === i + 1 && active.col === j ? 0 : -1,
            "aria-colindex": String(j + 1),
            "data-row": String(i),
            "data-col": String(j),
          }, show(row[c]))
        ),
      );
      el.style.top = `${firstTop + (i - first) * ROW_PX}px`;
      rows.push(el);
    }
    body.replaceChildren(...rows);
    layout();
    drawn = `${first}-${lastNow}-${total}-${active.row}-${active.col}`;
    if (hadFocus || wantFocus) focusActive();
  };
  let wantFocus = false;
  const activeCell = (): HTMLElement | null =>
    active.row === 0
      ? headers[active.col]?.querySelector("button") ?? null
      : body.querySelector<HTMLElement>(`[data-row="${active.row - 1}"][data-col="${active.col}"]`);
  const focusActive = () => {
    const cell = activeCell();
    if (cell) {
      wantFocus = false;
      cell.focus({ preventScroll: true });
    }
  };
  const setActive = (row: number, col: number) => {
    const last = Math.max(0, total);
    active = {
      row: Math.max(0, Math.min(last, row)),
      col: Math.max(0, Math.min(columns.length - 1, col)),
    };
    for (const b of headers.map((x) => x.querySelector("button")!)) b.tabIndex = -1;
    for (const c of body.querySelectorAll<HTMLElement>("[role=gridcell]")) c.tabIndex = -1;
    const cell = activeCell();
    if (cell) cell.tabIndex = 0;
    if (active.row > 0) {
      // Into view: the viewport scrolls and the draw focuses the cell when it is there.
      const i = active.row - 1;
      const count = rowCount();
      const first = firstAt(viewport.scrollTop, count);
      if (i < first || i > first + count - 3) {
        viewport.scrollTop = i < first ? scrollFor(i, count) : scrollFor(i - count + 3, count);
      }
    }
    wantFocus = true;
    if (cell) focusActive();
    draw();
  };

  grid.addEventListener("keydown", (e) => {
    const target = e.target as HTMLElement;
    if (target.classList.contains("col-filter")) return;
    const inHeader = target.closest("[role=columnheader]") !== null;
    const page = Math.max(1, rowCount() - 3);
    const { row, col } = active;
    switch (e.key) {
      case "ArrowDown":
        setActive(row + 1, col);
        break;
      case "ArrowUp":
        setActive(row - 1, col);
        break;
      case "ArrowRight":
        if (e.altKey && inHeader) setWidth(col, widths[col]! + 16);
        else setActive(row, col + 1);
        break;
      case "ArrowLeft":
        if (e.altKey && inHeader) setWidth(col, widths[col]! - 16);
        else setActive(row, col - 1);
        break;
      case "Home":
        setActive(e.ctrlKey ? 1 : row, 0);
        break;
      case "End":
        setActive(e.ctrlKey ? total : row, columns.length - 1);
        break;
      case "PageDown":
        setActive(row + page, col);
        break;
      case "PageUp":
        setActive(Math.max(1, row - page), col);
        break;
      case "Enter":
        if (inHeader) return;
        openDetail(row - 1);
        break;
      case "+":
      case "-": {
        const value = shown.get(row - 1)?.[columns[col]!];
        const cond = valueCondition(columns[col]!, types[col]!, value, e.key === "+");
        if (!cond || row === 0) return;
        actions.onFilter?.(cond);
        break;
      }
      default:
        return;
    }
    e.preventDefault();
  });
  body.addEventListener("click", (e) => {
    const cell = (e.target as HTMLElement).closest<HTMLElement>("[role=gridcell]");
    if (!cell) return;
    const i = Number(cell.dataset.row);
    setActive(i + 1, Number(cell.dataset.col));
    openDetail(i);
  });

  const openDetail = (i: number) => {
    const row = shown.get(i);
    if (!row) return;
    const close = h("button", {
      type: "button",
      onclick: () => {
        detail.hidden = true;
        setActive(active.row, active.col);
      },
    }, "Close");
    const fields = columns.map((c, j) => {
      const value = row[c];
      const forCond = valueCondition(c, types[j]!, value, true);
      const outCond = valueCondition(c, types[j]!, value, false);
      return h(
        "tr",
        {},
        h("th", { scope: "row" }, c, h("br"), h("span", { className: "col-type" }, types[j]!)),
        h("td", {}, h("pre", { className: "value" }, pretty(value))),
        h(
          "td",
          { className: "value-actions" },
          forCond
            ? h("button", {
              type: "button",
              "aria-label": `Filter for ${forCond}`,
              title: `| filter(${forCond})`,
              onclick: () => actions.onFilter?.(forCond),
            }, "Filter for")
            : null,
          outCond
            ? h("button", {
              type: "button",
              "aria-label": `Filter out ${forCond}`,
              title: `| filter(${outCond})`,
              onclick: () => actions.onFilter?.(outCond),
            }, "Filter out")
            : null,
        ),
      );
    });
    fill(
      detail,
      h("div", { className: "detail-head" }, h("h3", {}, `Row ${i + 1}`), close),
      h("table", { className: "detail" }, h("tbody", {}, ...fields)),
    );
    detail.hidden = false;
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
  layout();
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

/** A value for the detail pane: JSON (also a string holding a JSON object or array) indented. */
function pretty(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "object") return JSON.stringify(v, null, 2);
  const s = String(v);
  if (/^\s*[[{]/.test(s)) {
    try {
      return JSON.stringify(JSON.parse(s), null, 2);
    } catch {
      // not JSON after all
    }
  }
  return s;
}

let measure: CanvasRenderingContext2D | null = null;
/** The width of `s` in the grid's font, in px. */
function textWidth(s: string): number {
  measure ??= document.createElement("canvas").getContext("2d");
  if (!measure) return s.length * 8;
  measure.font = `14px ${getComputedStyle(document.body).fontFamily}`;
  return Math.ceil(measure.measureText(s).width);
}
