/**
 * The script editor: CodeMirror 6 with Trawl's language, the server's diagnostics as lint marks
 * (`POST /check`, debounced), bracket matching, Ctrl/Cmd-Enter to run, and inline help: a
 * completion that knows where the cursor is (matchers only inside a pattern, nothing inside
 * another string, commands after a pipe, the fields of the stream first inside a command's
 * arguments, from the schema `/check` gives for the script up to that pipe), each word with its
 * signature and description (`GET /language`), which hovering a name also shows. And the pattern
 * pane's editor: a PARSE pattern highlighted, matchers completed and explained the same way.
 */

import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  hoverTooltip,
  keymap,
  lineNumbers,
  type Tooltip,
} from "@codemirror/view";
import { EditorState, type Extension, Prec, type Text } from "@codemirror/state";
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
import {
  type Diagnostic as LintMark,
  linter,
  lintGutter,
  lintKeymap,
  setDiagnostics,
} from "@codemirror/lint";
import type { Completion, CompletionContext, CompletionResult } from "@codemirror/autocomplete";
import { api, type CheckAnswer, type Diagnostic } from "./api.ts";
import {
  contextAt,
  helpKey,
  matcherExpected,
  patternLanguage,
  trawlLanguage,
  type Vocabulary,
  type WordHelp,
} from "./trawl_language.ts";

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
  { tag: tags.propertyName, class: "tok-field" },
  { tag: tags.invalid, class: "tok-invalid" },
]);

/** A word's help as a small block: the signature in code, the description under it. */
function helpNode(help: WordHelp): HTMLElement {
  const box = document.createElement("div");
  box.className = "word-help";
  const sig = document.createElement("code");
  sig.textContent = help.signature;
  const text = document.createElement("div");
  text.textContent = `${help.kind}: ${help.description}`;
  box.append(sig, text);
  return box;
}

/** A completion of a word, with its signature beside it and its description in the info box. */
function helped(
  words: Vocabulary,
  kind: WordHelp["kind"],
  name: string,
  rest: Partial<Completion>,
): Completion {
  const help = words.help.get(helpKey(kind, kind === "function" ? name.toLowerCase() : name));
  return {
    label: name,
    // The signature when it says more than the name (a matcher's is mostly the name alone).
    detail: help && help.signature !== name ? help.signature : kind,
    ...(help ? { info: () => helpNode(help) } : {}),
    ...rest,
  };
}

const SECTIONS = {
  fields: { name: "Fields", rank: 0 },
  functions: { name: "Functions", rank: 1 },
  commands: { name: "Commands", rank: 1 },
  sources: { name: "Sources", rank: 2 },
  keywords: { name: "Keywords", rank: 3 },
  matchers: { name: "Matchers", rank: 0 },
};

function matcherOptions(words: Vocabulary): Completion[] {
  return [...words.matchers].map((m) =>
    helped(words, "matcher", m, { type: "constant", section: SECTIONS.matchers })
  );
}

/**
 * The help of the name at `pos`: a matcher inside a pattern, else a command, source or
 * function (a name followed by `(` first), or null.
 */
function helpAt(
  state: EditorState,
  pos: number,
  words: Vocabulary,
  inPattern: (from: number) => boolean,
): { from: number; to: number; help: WordHelp } | null {
  const line = state.doc.lineAt(pos);
  const at = pos - line.from;
  let from = at;
  let to = at;
  while (from > 0 && /\w/.test(line.text[from - 1]!)) from--;
  while (to < line.text.length && /\w/.test(line.text[to]!)) to++;
  if (from === to) return null;
  const word = line.text.slice(from, to);
  const start = line.from + from;
  const lookup = (kind: WordHelp["kind"], name: string) => words.help.get(helpKey(kind, name));
  let help: WordHelp | undefined;
  if (inPattern(start)) help = lookup("matcher", word.toUpperCase());
  else {
    help = lookup("command", word.toLowerCase()) ?? lookup("source", word.toUpperCase()) ??
      lookup("function", word.toLowerCase());
  }
  return help ? { from: start, to: line.from + to, help } : null;
}

function helpOnHover(words: Vocabulary, inPattern: (state: EditorState, from: number) => boolean) {
  return hoverTooltip((view, pos): Tooltip | null => {
    const found = helpAt(view.state, pos, words, (from) => inPattern(view.state, from));
    if (!found) return null;
    return {
      pos: found.from,
      end: found.to,
      above: true,
      create: () => ({ dom: helpNode(found.help) }),
    };
  }, { hoverTime: 300 });
}

/** What every editor of the console has: keys, history, brackets, completion, highlighting. */
function basics(onRun: (() => void) | null): Extension[] {
  return [
    ...(onRun ? [Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => (onRun(), true) }]))] : []),
    history(),
    drawSelection(),
    indentOnInput(),
    bracketMatching(),
    closeBrackets(),
    autocompletion(),
    keymap.of([
      ...closeBracketsKeymap,
      ...defaultKeymap,
      ...historyKeymap,
      ...completionKeymap,
      ...lintKeymap,
    ]),
    syntaxHighlighting(highlight),
    EditorView.lineWrapping,
  ];
}

/**
 * A shadow root for an editor: CodeMirror's styles go into a constructed style sheet there,
 * which the Content-Security-Policy allows (a <style> element it would otherwise add is inline).
 */
function shadowHost(
  parent: HTMLElement,
  className: string,
): { host: HTMLElement; root: ShadowRoot } {
  const root = parent.attachShadow({ mode: "open" });
  const sheet = document.createElement("link");
  sheet.rel = "stylesheet";
  sheet.href = "/console.css";
  const host = document.createElement("div");
  host.className = className;
  root.append(sheet, host);
  return { host, root };
}

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
  const { words } = options;
  const complete = async (context: CompletionContext): Promise<CompletionResult | null> => {
    const word = context.matchBefore(/[A-Za-z_][A-Za-z0-9_]*/);
    if (!word && !context.explicit) return null;
    const from = word?.from ?? context.pos;
    const before = context.state.doc.sliceString(0, from);
    const where = contextAt(before);
    const result = (options: Completion[]): CompletionResult => ({
      from,
      options,
      validFor: /^[A-Za-z0-9_]*$/,
    });
    // Inside a pattern only matchers make sense; inside another string (a path) nothing does.
    if (where.string === "pattern") {
      return where.raw === undefined || matcherExpected(where.raw)
        ? result(matcherOptions(words))
        : null;
    }
    if (where.string === "other") return null;
    const commands = () =>
      [...words.commands].map((c) =>
        helped(words, "command", c, { type: "keyword", section: SECTIONS.commands })
      );
    if (where.afterPipe) return result(commands());
    const list: Completion[] = [];
    for (const f of words.functions) {
      list.push(helped(words, "function", f, {
        type: "function",
        apply: `${f}(`,
        section: SECTIONS.functions,
      }));
    }
    for (const k of words.keywords) {
      list.push({ label: k, type: "keyword", detail: "keyword", section: SECTIONS.keywords });
    }
    if (!where.inArguments) {
      // The start of a statement: a source (or a command, for a pipe on the next line).
      for (const s of words.sources) {
        list.push(helped(words, "source", s, { type: "class", section: SECTIONS.sources }));
      }
      list.push(...commands());
      return result(list);
    }
    // An expression: the fields of the stream the cursor's stage reads come first (the script
    // up to that stage's pipe); a source's own arguments have none.
    if (where.pipe > 0) {
      const fields = await fieldsBefore(before.slice(0, where.pipe));
      if (context.aborted) return null;
      for (const f of fields) {
        list.push({
          label: f,
          type: "property",
          detail: "field",
          boost: 2,
          section: SECTIONS.fields,
        });
      }
    }
    return result(list);
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
  const { host, root } = shadowHost(parent, "editor-host");
  const inPattern = (state: EditorState, from: number) =>
    contextAt(state.doc.sliceString(0, from)).string === "pattern";
  const view = new EditorView({
    parent: host,
    root,
    state: EditorState.create({
      doc: "",
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        ...basics(options.onRun),
        trawlLanguage(words, complete),
        helpOnHover(words, inPattern),
        lint,
        lintGutter(),
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

/** The pattern pane's editor: one PARSE pattern, its mistake marked where the server says. */
export interface PatternEditor {
  readonly view: EditorView;
  text(): string;
  setText(text: string): void;
  /** Marks a mistake at `offset` of the pattern (null: none). */
  mark(mistake: { readonly message: string; readonly offset: number } | null): void;
  /** Selects the pattern's text from `offset` to `offset + length`, and focuses it. */
  select(offset: number, length: number): void;
}

export function createPatternEditor(
  parent: HTMLElement,
  options: {
    readonly words: Vocabulary;
    readonly label: string;
    readonly onChange: (text: string) => void;
    readonly onRun?: () => void;
  },
): PatternEditor {
  const { words } = options;
  const complete = (context: CompletionContext): CompletionResult | null => {
    const word = context.matchBefore(/[A-Za-z_][A-Za-z0-9_]*/);
    if (!word && !context.explicit) return null;
    const from = word?.from ?? context.pos;
    const before = context.state.doc.sliceString(0, from);
    // After `:` comes a field's name, inside quotes a literal: no matcher there.
    if (!matcherExpected(before)) return null;
    return { from, options: matcherOptions(words), validFor: /^[A-Za-z0-9_]*$/ };
  };
  const { host, root } = shadowHost(parent, "editor-host pattern-editor");
  /** Whether a mistake is marked now. */
  let marked = false;
  const view = new EditorView({
    parent: host,
    root,
    state: EditorState.create({
      doc: "",
      extensions: [
        ...basics(options.onRun ?? null),
        patternLanguage(words, complete),
        helpOnHover(words, () => true),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) options.onChange(u.state.doc.toString());
        }),
        EditorView.contentAttributes.of({ "aria-label": options.label }),
      ],
    }),
  });
  return {
    view,
    text: () => view.state.doc.toString(),
    setText(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    mark(m) {
      if (m === null && !marked) return;
      marked = m !== null;
      const doc = view.state.doc;
      const marks: LintMark[] = [];
      if (m !== null) {
        const from = Math.min(Math.max(0, m.offset), doc.length);
        const word = /^[A-Za-z0-9_$]+|^./.exec(doc.sliceString(from, from + 64))?.[0] ?? "";
        const to = Math.min(doc.length, from + Math.max(1, word.length));
        marks.push({ from, to: Math.max(from, to), severity: "error", message: m.message });
      }
      view.dispatch(setDiagnostics(view.state, marks));
    },
    select(offset, length) {
      const from = Math.min(offset, view.state.doc.length);
      view.dispatch({
        selection: { anchor: from, head: Math.min(from + length, view.state.doc.length) },
      });
      view.focus();
    },
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
