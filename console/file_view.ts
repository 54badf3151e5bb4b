/**
 * A log file of the tree, seen without loading it: its size and date and its first lines
 * (`GET /preview/<path>`, at most 64 KiB read by the server), "Prepare pattern" (the pattern
 * pane with those lines as samples) and "New query on this file" (a PARSE skeleton in the
 * editor, its pattern guessed from the first line). The file never goes into the editor.
 */

import { apiJson } from "./api.ts";
import { fill, h } from "./dom.ts";
import { bytesText, dateText, encodePath } from "./tree_pane.ts";
import { stringLiteral } from "./refine.ts";

export interface Preview {
  readonly path: string;
  readonly size: number;
  readonly modified: string;
  readonly lines: readonly string[];
  readonly complete: boolean;
}

/** Web server access logs, common and combined formats (README.md's first pattern). */
export const ACCESS_LOG_PATTERN =
  `IPV4:client ' - ' NSPACE:user ' [' HTTPDATE:time '] "' WORD:method ' '\n` +
  `                  NSPACE:path ' ' NSPACE:proto '" ' INT:status ' ' INT?:bytes\n` +
  `                  (' ' DQS:referer ' ' DQS:agent)? EOL`;

/** A pattern for lines like `line`: an access log, JSON, key=value pairs, else the whole line. */
export function guessPattern(line: string | undefined): string {
  const l = line ?? "";
  if (/^\d{1,3}(\.\d{1,3}){3} \S+ \S+ \[[^\]]+\] "/.test(l)) return ACCESS_LOG_PATTERN;
  if (/^\s*[{[]/.test(l)) return "JSON:doc EOL";
  if (/^\S+=\S+( \S+=\S+)+\s*$/.test(l)) return "KVP:fields EOL";
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(l)) return "ISO8601:time ' ' LD:message EOL";
  return "LD:line EOL";
}

/** The script "New query on this file" starts with. */
export function skeleton(path: string, firstLine: string | undefined): string {
  return `PARSE(pattern: '''${guessPattern(firstLine)}''',\n      src: ${stringLiteral(path)})\n` +
    `| limit(100)`;
}

export function fileView(options: {
  readonly onPreparePattern: (lines: readonly string[], pattern: string, path: string) => void;
  readonly onNewQuery: (script: string) => void;
}) {
  const element = h("section", { className: "file-view", "aria-label": "File", hidden: true });
  return {
    element,
    hide() {
      element.hidden = true;
      fill(element);
    },
    async show(path: string) {
      element.hidden = false;
      fill(element, h("p", {}, `Reading the start of ${path}…`));
      let p: Preview;
      try {
        p = await apiJson<Preview>(`/preview${encodePath(path)}?lines=20`);
      } catch (e) {
        fill(
          element,
          h("p", { role: "alert", className: "error" }, `${path}: ${(e as Error).message}`),
        );
        return;
      }
      const close = h("button", { type: "button", onclick: () => this.hide() }, "Close");
      fill(
        element,
        h(
          "div",
          { className: "file-view-head" },
          h("h2", {}, p.path),
          h(
            "span",
            { className: "file-meta" },
            `${bytesText(p.size)} · modified ${dateText(p.modified)}`,
          ),
          close,
        ),
        h(
          "p",
          { className: "hint" },
          p.complete
            ? `The whole file, ${p.lines.length} lines.`
            : `The first ${p.lines.length} lines.`,
        ),
        h(
          "pre",
          { className: "file-lines", tabIndex: 0, "aria-label": "First lines" },
          p.lines.join("\n"),
        ),
        h(
          "div",
          { className: "file-actions" },
          h("button", {
            type: "button",
            onclick: () => options.onPreparePattern(p.lines, guessPattern(p.lines[0]), p.path),
          }, "Prepare pattern"),
          h("button", {
            type: "button",
            className: "primary",
            onclick: () => options.onNewQuery(skeleton(p.path, p.lines[0])),
          }, "New query on this file"),
        ),
      );
    },
  };
}
