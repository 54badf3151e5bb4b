/**
 * The script editor: CodeMirror 6 with Trawl's language, the server's diagnostics as lint marks
 * (`POST /check`, debounced), completion of commands, sources, functions, matchers and of the
 * fields known where the cursor is (the schema `/check` gives for the script up to that pipe),
 * bracket matching, and Ctrl/Cmd-Enter to run.
 */

import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { EditorState, Prec, type Text } from "@codemirror/state";
import {
  bracketMatching,
  HighlightStyle,
  indentOnInput,
  syntaxHighlighting,
} from "@codemirror/language";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import {
  autocompletion,
  closeBrackets,
  closeBracketsKeymap,
  completionKeymap,
} from "@codemirror/autocomplete";
import { tags } from "@lezer/highlight";
import { type Diagnostic as LintMark, linter, lintGutter, lintKeymap } from "@codemirror/lint";
import type { Completion, CompletionContext, CompletionResult } from "@codemirror/autocomplete";
import { api, type CheckAnswer, type Diagnostic } from "./api.ts";
import { trawlLanguage, type Vocabulary } from "./trawl_language.ts";

/** Pause in typing before the server checks the script. */
const CHECK_DELAY_MS = 300;

const highlight = HighlightStyle.define([
  { tag: tags.keyword, class: "tok-command" },
  { tag: tags.typeName, class: "tok-source" },
  { tag: tags.function(tags.variableName), class: "tok-function" },
  { tag: tags.operatorKeyword, class: "tok-keyword" },
  { tag: tags.macroName, class: "tok-matcher" },
  { tag: tags.string, class: "tok-string" },
  { tag: tags.number, class: "tok-number" },
  { tag: tags.atom, class: "tok-ip" },
  { tag: [tags.bool, tags.null], class: "tok-literal" },
  { tag: tags.comment, class: "tok-comment" },
  { tag: tags.special(tags.variableName), class: "tok-binding" },
]);

export interface ScriptEditor {
  readonly view: EditorView;
  text(): string;
  setText(text: string): void;
  /** The diagnostics of the last check. */
  lastCheck(): CheckAnswer | null;
}

export function createEditor(
  parent: HTMLElement,
  options: {
    readonly words: Vocabulary;
    readonly workDir: () => string;
    readonly onRun: () => void;
    readonly onChecked?: (answer: CheckAnswer) => void;
    /** The text changed (typed, pasted or set). */
    readonly onChange?: (text: string) => void;
  },
): ScriptEditor {
  let last: CheckAnswer | null = null;
  const check = async (text: string): Promise<CheckAnswer> => {
    const res = await api(`/check?scriptPath=${encodeURIComponent(options.workDir())}`, {
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: text,
    });
    return await res.json() as CheckAnswer;
  };
  const fieldCache = new Map<string, Promise<string[]>>();
  const fieldsBefore = (text: string): Promise<string[]> => {
    let found = fieldCache.get(text);
    if (!found) {
      found = check(text).then((a) => Object.keys(a.schema ?? {})).catch(() => []);
      fieldCache.set(text, found);
      if (fieldCache.size > 50) fieldCache.delete(fieldCache.keys().next().value!);
    }
    return found;
  };
  const complete = async (context: CompletionContext): Promise<CompletionResult | null> => {
    const word = context.matchBefore(/[A-Za-z_][A-Za-z0-9_]*/);
    if (!word && !context.explicit) return null;
    const from = word?.from ?? context.pos;
    const before = context.state.doc.sliceString(0, from);
    const afterPipe = /\|\s*$/.test(before);
    const { words } = options;
    const list: Completion[] = [];
    // Inside a '''pattern''' only matchers make sense.
    if ((before.split("'''").length - 1) % 2 === 1) {
      for (const m of words.matchers) list.push({ label: m, type: "constant", detail: "matcher" });
      return { from, options: list, validFor: /^[A-Za-z0-9_]*$/ };
    }
    for (const c of words.commands) list.push({ label: c, type: "keyword", detail: "command" });
    if (!afterPipe) {
      for (const s of words.sources) list.push({ label: s, type: "class", detail: "source" });
      for (const f of words.functions) {
        list.push({ label: f, type: "function", detail: "function", apply: `${f}(` });
      }
      for (const k of words.keywords) list.push({ label: k, type: "keyword", detail: "keyword" });
      // The fields of the stream the cursor's pipe stage reads: the script up to that pipe.
      const pipe = before.lastIndexOf("|");
      if (pipe > 0) {
        const fields = await fieldsBefore(before.slice(0, pipe));
        if (context.aborted) return null;
        for (const f of fields) {
          list.push({ label: f, type: "property", detail: "field", boost: 2 });
        }
      }
    }
    return { from, options: list, validFor: /^[A-Za-z0-9_]*$/ };
  };
  const lint = linter(async (view) => {
    const text = view.state.doc.toString();
    if (text.trim() === "") return [];
    try {
      last = await check(text);
    } catch {
      return [];
    }
    options.onChecked?.(last);
    return last.diagnostics.map((d) => lintMark(view.state.doc, d));
  }, { delay: CHECK_DELAY_MS });
  // In a shadow root, CodeMirror's styles go into a constructed style sheet, which the
  // Content-Security-Policy allows (a <style> element it would otherwise add is inline style).
  const shadow = parent.attachShadow({ mode: "open" });
  const sheet = document.createElement("link");
  sheet.rel = "stylesheet";
  sheet.href = "/console.css";
  const host = document.createElement("div");
  host.className = "editor-host";
  shadow.append(sheet, host);
  const view = new EditorView({
    parent: host,
    root: shadow,
    state: EditorState.create({
      doc: "",
      extensions: [
        Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => (options.onRun(), true) }])),
        lineNumbers(),
        highlightActiveLineGutter(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        closeBrackets(),
        autocompletion(),
        highlightActiveLine(),
        keymap.of([
          ...closeBracketsKeymap,
          ...defaultKeymap,
          ...historyKeymap,
          ...completionKeymap,
          ...lintKeymap,
        ]),
        trawlLanguage(options.words, complete),
        syntaxHighlighting(highlight),
        lint,
        lintGutter(),
        EditorView.lineWrapping,
        EditorView.updateListener.of((u) => {
          if (u.docChanged) options.onChange?.(u.state.doc.toString());
        }),
        EditorView.contentAttributes.of({ "aria-label": "Script" }),
      ],
    }),
  });
  return {
    view,
    text: () => view.state.doc.toString(),
    setText(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    lastCheck: () => last,
  };
}

/** A server diagnostic (line and column from 1) as a mark over the word it points at. */
export function lintMark(doc: Text, d: Diagnostic): LintMark {
  const lineNo = Math.min(Math.max(1, d.line || 1), doc.lines);
  const line = doc.line(lineNo);
  const from = Math.min(line.from + Math.max(0, (d.column || 1) - 1), line.to);
  const rest = line.text.slice(from - line.from);
  const word = /^[A-Za-z0-9_$@.]+|^./.exec(rest)?.[0] ?? "";
  const to = Math.min(from + Math.max(1, word.length), doc.length);
  return { from, to: Math.max(to, from), severity: "error", message: d.message, source: d.code };
}
