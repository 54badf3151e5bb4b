/**
 * A view's arguments as a form: `init(name::TYPE, other: default)` at the top of a script
 * becomes one typed input per argument (LANGUAGE.md section 2), whose values go to the query
 * string when the stored script runs.
 */

import { h } from "./dom.ts";

export interface ViewArgument {
  readonly name: string;
  readonly type: string;
  /** The default's literal text, when the argument is optional. */
  readonly defaultText?: string;
}

/** The arguments of `init(...)` when the script starts with it, else []. */
export function viewArguments(script: string): ViewArgument[] {
  const text = script.replace(/^(\s|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)*/, "");
  if (!/^init\s*\(/i.test(text)) return [];
  const open = text.indexOf("(");
  let depth = 0;
  let quote: string | null = null;
  const parts: string[] = [];
  let start = open + 1;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === quote) quote = null;
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "(") depth++;
    else if (ch === ")" && --depth === 0) {
      parts.push(text.slice(start, i));
      break;
    } else if (ch === "," && depth === 1) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  return parts.map((p) => p.trim()).filter(Boolean).map((p) => {
    const typed = /^([A-Za-z_]\w*)\s*::\s*\??([A-Za-z_]+)/.exec(p);
    if (typed) return { name: typed[1]!, type: typed[2]!.toUpperCase() };
    const m = /^([A-Za-z_]\w*)\s*:\s*([\s\S]+)$/.exec(p);
    if (!m) return { name: p, type: "STRING" };
    return { name: m[1]!, type: literalType(m[2]!.trim()), defaultText: m[2]!.trim() };
  });
}

function literalType(literal: string): string {
  if (/^-?\d+$/.test(literal)) return "LONG";
  if (/^-?\d+\.\d+/.test(literal)) return "DOUBLE";
  if (/^(true|false)$/i.test(literal)) return "BOOLEAN";
  if (/^T\s*\(/i.test(literal)) return "TIMESTAMP";
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(literal)) return "IPADDR";
  return "STRING";
}

/** The form; `onRun` gets the values of the filled inputs (empty optional ones left out). */
export function viewForm(
  args: readonly ViewArgument[],
  onRun: (values: Record<string, string>) => void,
): HTMLFormElement {
  const inputs = args.map((arg) => {
    const id = `view-arg-${arg.name}`;
    const input = inputFor(arg, id);
    return {
      arg,
      input,
      row: h(
        "div",
        { className: "field" },
        h("label", { htmlFor: id }, `${arg.name} (${arg.type})`),
        input,
        arg.defaultText ? h("small", {}, `default ${arg.defaultText}`) : null,
      ),
    };
  });
  const form = h(
    "form",
    { className: "view-form", "aria-label": "View arguments" },
    h("h3", {}, "View arguments"),
    ...inputs.map((i) => i.row),
    h("button", { type: "submit" }, "Run view"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const values: Record<string, string> = {};
    for (const { arg, input } of inputs) {
      if (input.value !== "") values[arg.name] = input.value;
    }
    onRun(values);
  });
  return form;
}

function inputFor(arg: ViewArgument, id: string): HTMLInputElement | HTMLSelectElement {
  const required = arg.defaultText === undefined;
  switch (arg.type) {
    case "INTEGER":
    case "LONG":
      return h("input", { id, name: arg.name, type: "number", step: "1", required });
    case "DOUBLE":
      return h("input", { id, name: arg.name, type: "number", step: "any", required });
    case "BOOLEAN":
      return h(
        "select",
        { id, name: arg.name, required },
        h("option", { value: "" }, ""),
        h("option", { value: "true" }, "true"),
        h("option", { value: "false" }, "false"),
      );
    case "TIMESTAMP":
      return h("input", {
        id,
        name: arg.name,
        type: "text",
        required,
        placeholder: "2024-01-01T00:00:00Z",
        pattern:
          "\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?)?(Z|[+-]\\d{2}:?\\d{2})?",
      });
    case "IPADDR":
      return h("input", {
        id,
        name: arg.name,
        type: "text",
        required,
        placeholder: "10.0.0.1",
        pattern: "[0-9.:a-fA-F/]+",
      });
    default:
      return h("input", { id, name: arg.name, type: "text", required });
  }
}
