/**
 * The pattern developer: sample lines (typed, pasted, or the first lines of a file of the tree,
 * `GET /preview/<path>`) and a PARSE pattern in a highlighted editor that completes and explains
 * matchers; as one types (`POST /patterns/try`), each line shows the fields it gives, each field
 * coloured where it lies in the line, or, for a line that fails, the character where matching
 * stopped and the element of the pattern that failed there. "Use in query" makes a script of it.
 * The table wraps: no line, however long, makes the page wider than the window.
 */

import { apiJson } from "./api.ts";
import { debounce, fill, h } from "./dom.ts";
import { createPatternEditor } from "./editor.ts";
import type { Vocabulary } from "./trawl_language.ts";
import { encodePath, type Entry } from "./tree_pane.ts";
import type { Preview } from "./file_view.ts";

interface LineAnswer {
  readonly row: Record<string, unknown> | null;
  readonly spans: Readonly<Record<string, readonly [number, number]>>;
  readonly stop: {
    readonly at: number;
    readonly element: { readonly offset: number; readonly text: string };
  } | null;
}

interface TryAnswer {
  readonly ok: boolean;
  readonly message?: string;
  readonly offset?: number;
  readonly fields?: Record<string, string>;
  readonly lines?: readonly LineAnswer[];
}

/** Lines read from a file for samples. */
const SAMPLE_LINES = 50;
/** Field colours (console.css `.fc-0` ...), taken in the pattern's order. */
const COLOURS = 8;

export function patternPane(options: {
  readonly words: Vocabulary;
  /** "Use in query": the pattern, and the file its samples came from if any. */
  readonly onUse?: (pattern: string, src: string | null) => void;
}) {
  let source: string | null = null;
  const use = h("button", {
    type: "button",
    className: "primary",
    onclick: () => options.onUse?.(editor.text(), source),
  }, "Use in query");
  const samples = h("textarea", { id: "pattern-samples", rows: 6, spellcheck: false });
  const files = h("datalist", { id: "pattern-file-list" });
  const file = h("input", {
    id: "pattern-file",
    type: "text",
    list: "pattern-file-list",
    placeholder: "/shared/logs/access.log",
    autocomplete: "off",
    spellcheck: false,
  });
  const fileNote = h("span", { className: "hint", role: "status" });
  const load = h(
    "button",
    { type: "button", onclick: () => loadFile(file.value.trim()) },
    "Load lines",
  );
  const editorBox = h("div", { className: "editor pattern-editor-box" });
  const out = h("div", { className: "pattern-out", "aria-live": "polite" });
  const element = h(
    "section",
    { "aria-label": "Pattern", className: "pattern-pane" },
    h("h2", {}, "Pattern"),
    h(
      "p",
      { className: "hint" },
      "Each sample line shows the fields the pattern extracts, coloured where they are, or where matching stopped. Ctrl+Space lists the matchers; hover one for its help.",
    ),
    h(
      "div",
      { className: "field pattern-file" },
      h("label", { htmlFor: "pattern-file" }, "Sample file"),
      h("div", { className: "buttons" }, file, load, fileNote),
      files,
    ),
    h(
      "div",
      { className: "field" },
      h("label", { htmlFor: "pattern-samples" }, "Sample lines"),
      samples,
    ),
    h(
      "div",
      { className: "field" },
      h("span", { className: "label", id: "pattern-text-label" }, "PARSE pattern"),
      editorBox,
    ),
    h("div", { className: "buttons" }, use),
    out,
  );
  const editor = createPatternEditor(editorBox, {
    words: options.words,
    label: "PARSE pattern",
    onChange: () => update(),
  });

  /** Fills the samples with the first lines of `path`. */
  async function loadFile(path: string) {
    if (path === "") return fill(fileNote, "Name a file of the tree.");
    fill(fileNote, `Reading ${path}…`);
    try {
      const p = await apiJson<Preview>(`/preview${encodePath(path)}?lines=${SAMPLE_LINES}`);
      source = p.path;
      samples.value = p.lines.join("\n");
      fill(fileNote, `${p.lines.length} lines of ${p.path}`);
      update();
    } catch (e) {
      fill(fileNote, h("span", { className: "error" }, `${path}: ${(e as Error).message}`));
    }
  }
  // The files of the folder typed so far, offered as one types the path.
  let listed = "";
  file.addEventListener("input", async () => {
    const folder = file.value.slice(0, file.value.lastIndexOf("/") + 1);
    if (!folder.startsWith("/") || folder === listed) return;
    listed = folder;
    try {
      const entries = await apiJson<Entry[]>(`/resources${encodePath(folder.slice(0, -1))}/`);
      fill(
        files,
        ...entries.map((e) =>
          h("option", { value: folder + e.name + (e.kind === "folder" ? "/" : "") })
        ),
      );
    } catch {
      fill(files);
    }
  });
  samples.addEventListener("input", () => update());
  file.addEventListener("keydown", (e) => {
    if (e.key === "Enter") loadFile(file.value.trim());
  });

  const update = debounce(async () => {
    const lines = samples.value.split("\n").filter((l) => l !== "");
    const text = editor.text();
    if (text.trim() === "" || lines.length === 0) {
      editor.mark(null);
      return fill(out);
    }
    let answer: TryAnswer;
    try {
      answer = await apiJson<TryAnswer>("/patterns/try", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ pattern: text, lines }),
      });
    } catch (e) {
      return fill(out, h("p", { role: "alert", className: "error" }, (e as Error).message));
    }
    if (editor.text() !== text) return; // typed on meanwhile: the next answer draws
    if (!answer.ok) {
      const offset = answer.offset ?? 0;
      editor.mark({ message: answer.message ?? "", offset });
      return fill(
        out,
        h(
          "p",
          { role: "alert", className: "error" },
          `${answer.message} (at ${describeOffset(text, offset)})`,
        ),
      );
    }
    editor.mark(null);
    fill(out, ...results(lines, answer));
  }, 250);

  /** The summary, the legend of field colours and the table of lines. */
  function results(lines: readonly string[], answer: TryAnswer): HTMLElement[] {
    const fields = Object.keys(answer.fields ?? {});
    const colour = new Map(fields.map((f, i) => [f, `fc-${i % COLOURS}`]));
    const matched = answer.lines!.filter((l) => l.row !== null).length;
    const summary = h(
      "p",
      { className: matched === lines.length ? "pattern-summary" : "pattern-summary partial" },
      `${matched} of ${lines.length} lines match.`,
    );
    const legend = h(
      "ul",
      { className: "pattern-legend", "aria-label": "Fields" },
      ...fields.map((f) =>
        h(
          "li",
          { className: `field-chip ${colour.get(f)}` },
          `${f} `,
          h("small", {}, answer.fields![f]),
        )
      ),
    );
    const table = h(
      "table",
      { className: "pattern-table" },
      h(
        "thead",
        {},
        h("tr", {}, h("th", { scope: "col" }, "Line"), h("th", { scope: "col" }, "Fields")),
      ),
      h(
        "tbody",
        {},
        ...answer.lines!.map((l, i) =>
          h(
            "tr",
            { className: l.row ? "match" : "no-match" },
            h("th", { scope: "row" }, lineWithFields(lines[i]!, l, colour)),
            h("td", {}, l.row ? fieldValues(l.row, fields, colour) : stopNote(lines[i]!, l)),
          )
        ),
      ),
    );
    return [summary, legend, table];
  }

  /** Where `stop` left a line, and a button that selects the failed element in the pattern. */
  function stopNote(line: string, l: LineAnswer): HTMLElement {
    if (!l.stop) return h("span", { className: "error" }, "no match");
    const { at, element: el } = l.stop;
    const where = at >= line.length ? "at the end of the line" : `at column ${at + 1}`;
    return h(
      "div",
      { className: "stop-note" },
      h("span", { className: "error" }, `No match: stopped ${where}, expecting `),
      h("code", {}, el.text),
      " ",
      h("button", {
        type: "button",
        className: "link",
        "aria-label": `Show in pattern: ${el.text}`,
        onclick: () => editor.select(el.offset, el.text.length),
      }, "Show in pattern"),
    );
  }

  return {
    element,
    /** Samples (a file's first lines) and a pattern to start from. */
    prepare(lines: readonly string[], text: string, from: string | null = null) {
      source = from;
      file.value = from ?? "";
      fill(fileNote, from ? `${lines.length} lines of ${from}` : "");
      samples.value = lines.join("\n");
      editor.setText(text);
      update();
    },
  };

  function fieldValues(
    row: Record<string, unknown>,
    fields: readonly string[],
    colour: ReadonlyMap<string, string>,
  ): HTMLElement {
    return h(
      "dl",
      { className: "pattern-values" },
      ...fields.flatMap((f) => [
        h("dt", { className: `field-chip ${colour.get(f)}` }, f),
        h("dd", {}, row[f] === null || row[f] === undefined ? "null" : JSON.stringify(row[f])),
      ]),
    );
  }
}

/** A line with each field's text in its colour (titled with its name) and the stop marked. */
function lineWithFields(
  line: string,
  l: LineAnswer,
  colour: ReadonlyMap<string, string>,
): HTMLElement {
  const code = h("code", { className: "sample-line" });
  const spans = Object.entries(l.spans)
    .filter(([, [from, to]]) => to > from)
    .sort((a, b) => a[1][0] - b[1][0]);
  let at = 0;
  const plain = (to: number) => {
    if (to > at) code.append(line.slice(at, to));
    at = Math.max(at, to);
  };
  for (const [name, [from, to]] of spans) {
    if (from < at) continue;
    plain(from);
    code.append(
      h(
        "span",
        { className: `field-text ${colour.get(name) ?? ""}`, title: name },
        line.slice(from, to),
      ),
    );
    at = to;
  }
  if (l.stop) {
    const stop = Math.min(Math.max(l.stop.at, at), line.length);
    plain(stop);
    // The character where matching stopped; at the end of the line, a mark of its end.
    code.append(
      h(
        "mark",
        { className: "stop", title: `matching stopped here, expecting ${l.stop.element.text}` },
        stop < line.length ? line[stop]! : "⏎",
      ),
    );
    at = stop + 1;
    if (at < line.length) code.append(h("span", { className: "after-stop" }, line.slice(at)));
    return code;
  }
  plain(line.length);
  return code;
}

/** `offset` of the pattern as a person counts: line and column when it spans lines. */
function describeOffset(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return line > 1 ? `line ${line}, column ${column}` : `column ${column}`;
}
