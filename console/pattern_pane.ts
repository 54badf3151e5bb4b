/**
 * Developing a PARSE pattern: sample lines and a pattern in, per line the fields it extracts
 * or "no match" out, as one types (`POST /patterns/try`).
 */

import { apiJson } from "./api.ts";
import { debounce, fill, h } from "./dom.ts";

interface TryAnswer {
  readonly ok: boolean;
  readonly message?: string;
  readonly offset?: number;
  readonly fields?: Record<string, string>;
  readonly lines?: readonly { row: Record<string, unknown> | null }[];
}

export function patternPane(options: {
  /** "Use in query": the pattern, and the file its samples came from if any. */
  readonly onUse?: (pattern: string, src: string | null) => void;
} = {}) {
  let source: string | null = null;
  const use = h("button", {
    type: "button",
    className: "primary",
    onclick: () => options.onUse?.(pattern.value, source),
  }, "Use in query");
  const samples = h("textarea", { id: "pattern-samples", rows: 6, spellcheck: false });
  const pattern = h("textarea", { id: "pattern-text", rows: 3, spellcheck: false });
  const out = h("div", { className: "pattern-out table-scroll", "aria-live": "polite" });
  const element = h(
    "section",
    { "aria-label": "Pattern" },
    h("h2", {}, "Pattern"),
    h(
      "div",
      { className: "field" },
      h("label", { htmlFor: "pattern-samples" }, "Sample lines"),
      samples,
    ),
    h(
      "div",
      { className: "field" },
      h("label", { htmlFor: "pattern-text" }, "PARSE pattern"),
      pattern,
    ),
    h("div", { className: "buttons" }, use),
    out,
  );
  const update = debounce(async () => {
    const lines = samples.value.split("\n").filter((l) => l !== "");
    if (pattern.value.trim() === "" || lines.length === 0) return fill(out);
    try {
      const answer = await apiJson<TryAnswer>("/patterns/try", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ pattern: pattern.value, lines }),
      });
      if (!answer.ok) {
        return fill(
          out,
          h("p", { role: "alert", className: "error" }, `${answer.message} (at ${answer.offset})`),
        );
      }
      const fields = Object.keys(answer.fields ?? {});
      fill(
        out,
        h(
          "table",
          { className: "pattern-table" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              h("th", { scope: "col" }, "Line"),
              ...fields.map((f) => h("th", { scope: "col" }, `${f} ${answer.fields![f]}`)),
            ),
          ),
          h(
            "tbody",
            {},
            ...answer.lines!.map((l, i) =>
              h(
                "tr",
                { className: l.row ? "match" : "no-match" },
                h("th", { scope: "row" }, lines[i]),
                ...(l.row
                  ? fields.map((f) => h("td", {}, JSON.stringify(l.row![f])))
                  : [h("td", { colSpan: Math.max(1, fields.length) }, "no match")]),
              )
            ),
          ),
        ),
      );
    } catch (e) {
      fill(out, h("p", { role: "alert", className: "error" }, (e as Error).message));
    }
  }, 250);
  samples.addEventListener("input", update);
  pattern.addEventListener("input", update);
  return {
    element,
    /** Samples (a file's first lines) and a pattern to start from. */
    prepare(lines: readonly string[], text: string, from: string | null = null) {
      source = from;
      samples.value = lines.join("\n");
      pattern.value = text;
      update();
    },
  };
}
