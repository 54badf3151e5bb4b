/**
 * The result's fields with their top values, as Discover has them: for a field one opens, the
 * server computes (the script run again with `| select(f as value, count(*) as n) | group(value)`
 * and a count, `count(f)` and `count_distinct(f)`) the five commonest values with their counts and
 * share, the distinct count and the share of nulls. A click on a value filters for it.
 */

import { apiJson } from "./api.ts";
import { fill, h } from "./dom.ts";
import { fieldName, valueCondition } from "./refine.ts";

const TOP = 5;

export function fieldsPane(options: {
  readonly schema: Record<string, string>;
  /** The script whose result is shown, and where it ran. */
  readonly script: { readonly text: string; readonly workDir: string };
  readonly onFilter: (condition: string) => void;
}): HTMLElement {
  const { schema, script } = options;
  const sync = (text: string) =>
    apiJson<Record<string, unknown>[]>(`/?scriptPath=${encodeURIComponent(script.workDir)}`, {
      method: "POST",
      headers: { "Content-Type": "text/plain", Accept: "application/json" },
      body: text,
    });
  const base = script.text.replace(/\s+$/, "");
  const items = Object.entries(schema).map(([name, type]) => {
    const out = h("div", { className: "field-values", id: `field-${cssId(name)}`, hidden: true });
    const button = h(
      "button",
      {
        type: "button",
        className: "field-name",
        "aria-expanded": "false",
        "aria-controls": out.id,
      },
      name,
      " ",
      h("span", { className: "col-type" }, type),
    );
    let loaded = false;
    button.addEventListener("click", async () => {
      const open = out.hidden;
      out.hidden = !open;
      button.setAttribute("aria-expanded", String(open));
      if (!open || loaded) return;
      loaded = true;
      fill(out, h("p", { className: "hint" }, "Counting…"));
      const f = fieldName(name);
      try {
        const [[totals], top] = await Promise.all([
          sync(
            `${base}\n| select(count(*) as rows, count(${f}) as present, count_distinct(${f}) as distinct)`,
          ),
          sync(
            `${base}\n| select(${f} as value, count(*) as n)\n| group(value)\n| sort(n desc)\n| limit(${TOP})`,
          ),
        ]);
        const rows = Number(totals?.rows ?? 0);
        const nulls = rows - Number(totals?.present ?? 0);
        const pct = (n: number) => rows ? `${Math.round((n / rows) * 1000) / 10} %` : "–";
        fill(
          out,
          h(
            "p",
            { className: "hint" },
            `${totals?.distinct ?? 0} distinct, ${pct(nulls)} null, of ${rows} rows`,
          ),
          h(
            "ul",
            { className: "top-values", "aria-label": `Top values of ${name}` },
            ...top.map((r) => {
              const cond = valueCondition(name, type, r.value, true);
              const n = Number(r.n);
              const bar = h("span", { className: "share-bar", "aria-hidden": "true" });
              bar.style.width = rows ? `${(n / rows) * 100}%` : "0";
              const label = r.value === null || r.value === undefined
                ? "(null)"
                : typeof r.value === "object"
                ? JSON.stringify(r.value)
                : String(r.value);
              return h(
                "li",
                {},
                cond
                  ? h("button", {
                    type: "button",
                    className: "top-value",
                    title: `| filter(${cond})`,
                    onclick: () => options.onFilter(cond),
                  }, label)
                  : h("span", { className: "top-value" }, label),
                h("span", { className: "top-count" }, `${n} · ${pct(n)}`),
                bar,
              );
            }),
          ),
        );
      } catch (e) {
        loaded = false;
        fill(out, h("p", { className: "error" }, (e as Error).message));
      }
    });
    return h("li", {}, button, out);
  });
  return h(
    "details",
    { className: "fields" },
    h("summary", {}, `Fields (${items.length})`),
    h("ul", { className: "field-list", "aria-label": "Fields" }, ...items),
  );
}

function cssId(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.charCodeAt(0)}`);
}
