/**
 * The console's entry: sign in with a token, then the tabs (Editor, Queries, Machines, Pattern,
 * Datastores for admins) over the HTTP API. Bundled by `deno task console` into
 * routes/console_assets.ts and served at `/` (docs/console.md).
 */

import { apiJson, type Language, storedToken, storeToken, type Whoami } from "./api.ts";
import { debounce, fill, h } from "./dom.ts";
import { createEditor, type ScriptEditor } from "./editor.ts";
import { emptyVocabulary, helpKey } from "./trawl_language.ts";
import { runPane } from "./run_pane.ts";
import { treePane } from "./tree_pane.ts";
import { fileBar } from "./file_bar.ts";
import { viewArguments, viewForm } from "./view_form.ts";
import { queriesPane } from "./queries_pane.ts";
import { machinesPane } from "./machines_pane.ts";
import { patternPane } from "./pattern_pane.ts";
import { datastoreForm } from "./datastore_form.ts";
import { detectionsPane } from "./detections_pane.ts";
import { drafts, formatUrlState, parseUrlState, sameUrlState, type UrlState } from "./url_state.ts";
import { QueryHistory } from "./history.ts";
import { fileView } from "./file_view.ts";
import {
  isAggregate,
  stringLiteral,
  trailingSort,
  withFilter,
  withRangeFilter,
  withSort,
  withSourceRange,
} from "./refine.ts";
import { timePicker } from "./time_picker.ts";

/** A file larger than this is previewed rather than opened in the editor. */
const MAX_EDITOR_BYTES = 256 * 1024;

const SAMPLE = "VALUES((host: 'a', n: 1), (host: 'b', n: 2), (host: 'a', n: 3))\n" +
  "| select(host, count(*) as hits)\n| group(host)";

function start(root: HTMLElement): void {
  const token = storedToken();
  if (token) {
    apiJson<Whoami>("/whoami").then((me) => showConsole(root, me), () => {
      storeToken(null);
      showSignIn(root, "Your session's token is no longer accepted; sign in again.");
    });
  } else showSignIn(root);
}

function showSignIn(root: HTMLElement, message = ""): void {
  const input = h("input", {
    id: "token",
    type: "password",
    autocomplete: "off",
    required: true,
    "aria-describedby": "sign-in-message",
  });
  const note = h("p", { id: "sign-in-message", role: "alert", className: "error" }, message);
  const form = h(
    "form",
    { className: "sign-in", "aria-label": "Sign in" },
    h("h1", {}, "Trawl"),
    h("div", { className: "field" }, h("label", { htmlFor: "token" }, "Token"), input),
    h("button", { type: "submit" }, "Sign in"),
    note,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const me = await apiJson<Whoami>("/whoami", {
        headers: { Authorization: `Bearer ${input.value.trim()}` },
      });
      storeToken(input.value.trim());
      showConsole(root, me);
    } catch (err) {
      fill(note, `Not signed in: ${(err as Error).message}`);
    }
  });
  fill(root, h("main", {}, form));
  input.focus();
}

async function showConsole(root: HTMLElement, me: Whoami): Promise<void> {
  const words = emptyVocabulary();
  const language = await apiJson<Language>("/language");
  language.commands.forEach((c) => words.commands.add(c));
  language.sources.forEach((s) => words.sources.add(s));
  language.functions.forEach((f) => words.functions.add(f.name));
  language.matchers.forEach((m) => words.matchers.add(m));
  language.keywords.forEach((k) => words.keywords.add(k));
  language.help.forEach((w) => words.help.set(helpKey(w.kind, w.name), w));

  const machines = machinesPane();
  // deno-lint-ignore prefer-const
  let editor: ScriptEditor;
  const picker = timePicker();
  /** Runs the editor's script with the time picker's range written into it. */
  /** Whether the last run wrote the picker's bounds into the script (to take them out again). */
  let pickerWrote = false;
  const runScript = () => {
    const range = picker.range();
    const text = editor.text();
    const any = !range.from && !range.to;
    // "Any time" leaves bounds one wrote by hand alone, and takes out those the picker wrote.
    let next = any && !pickerWrote ? text : withSourceRange(text, range.from, range.to);
    pickerWrote = !any;
    const field = isAggregate(next) ? null : run.timeField();
    next = withRangeFilter(next, field, range.from, range.to);
    if (next !== text) editor.setText(next);
    picker.note(
      range.from || range.to
        ? `${range.label}: ${range.from?.toISOString() ?? "…"} to ${range.to?.toISOString() ?? "…"}`
        : "",
    );
    return run.runText(next, file.workDir());
  };
  /** A refinement from the grid: the script changed in the editor, and run. */
  const refine = (script: string) => {
    editor.setText(script);
    runScript();
  };
  const queryHistory = new QueryHistory(me.name);
  const run = runPane({
    onState: (id, state) => machines.setQueryState(id, state),
    onSubmitted: (queryId, what) => queryHistory.add({ queryId, submitted: Date.now(), ...what }),
    onFinished: (queryId, state, rows) => {
      const known = queryHistory.get(queryId);
      queryHistory.update(queryId, {
        state,
        finished: known?.finished ?? Date.now(),
        ...(rows === undefined ? {} : { rows }),
      });
    },
    onFollow: () => writeUrl(true),
    onRunAgain: runScript,
    script: () => ({ text: editor.text(), workDir: file.workDir() }),
    onZoom: (from, to) => {
      picker.setAbsolute(from, to);
      runScript();
    },
    grid: () => ({
      sorted: trailingSort(editor.text()),
      onSort: (field, direction) => refine(withSort(editor.text(), field, direction)),
      onFilter: (condition) => refine(withFilter(editor.text(), condition)),
    }),
  });
  const viewBox = h("div", { className: "view-box" });
  const draftNote = h("div", { className: "draft-note", role: "status" });
  /** The draft's key: the stored script's path, "" for a new one. */
  let draftPath = "";
  /** The text as stored, for a script opened from the tree. */
  let storedText: string | null = null;
  const file = fileBar({
    text: () => editor.text(),
    onChanged: () => tree.refresh(),
    onNew: () => {
      draftPath = "";
      storedText = null;
      fill(draftNote);
      editor.setText("");
      writeUrl(true);
    },
    onSaved: (path) => {
      drafts.clear(me.name, draftPath);
      draftPath = path;
      storedText = editor.text();
      drafts.clear(me.name, path);
      fill(draftNote);
      showViewForm(editor.text());
      writeUrl(false);
    },
  });
  const runButton = h("button", { type: "button", className: "primary" }, "Run");
  runButton.addEventListener("click", runScript);
  const editorBox = h("div", { className: "editor" });
  const keepDraft = debounce((text: string) => {
    if (storedText !== null && text === storedText) drafts.clear(me.name, draftPath);
    else drafts.set(me.name, draftPath, text);
    writeUrl(false);
  }, 300);
  // A reload or a closed tab within the pause still keeps what was typed last.
  const flushDraft = () => keepDraft.flush();
  globalThis.addEventListener("pagehide", flushDraft);
  editor = createEditor(editorBox, {
    words,
    workDir: () => file.workDir(),
    onRun: runScript,
    onChange: keepDraft,
  });
  const showViewForm = (text: string) => {
    const args = viewArguments(text);
    fill(
      viewBox,
      args.length ? viewForm(args, (values) => run.runStored(file.path(), values)) : null,
    );
  };
  /** Opens a stored script in the editor; a draft of it kept in this browser wins, said so. */
  const openScript = async (path: string) => {
    let text: string;
    try {
      text = await file.open(path);
    } catch (e) {
      fill(
        draftNote,
        h("span", { role: "alert", className: "error" }, `${path}: ${(e as Error).message}`),
      );
      return;
    }
    draftPath = path;
    storedText = text;
    const draft = drafts.get(me.name, path);
    if (draft !== null && draft !== text) {
      editor.setText(draft);
      fill(
        draftNote,
        `Your unsaved changes to ${path}, kept in this browser, are in the editor. `,
        h("button", {
          type: "button",
          onclick: () => {
            drafts.clear(me.name, path);
            editor.setText(text);
            fill(draftNote);
          },
        }, "Discard draft"),
      );
    } else {
      fill(draftNote);
      editor.setText(text);
    }
    showViewForm(editor.text());
  };
  const preview = fileView({
    onPreparePattern: (lines, text, path) => {
      pattern.prepare(lines, text, path);
      selectTab("pattern");
    },
    onNewQuery: (script) => newQuery(script),
  });
  /** A new, unsaved script in the editor (from a file's preview or the pattern pane). */
  function newQuery(script: string) {
    if (file.storedPath() !== null) file.reset();
    draftPath = "";
    storedText = null;
    fill(draftNote);
    fill(viewBox);
    editor.setText(script);
    preview.hide();
    writeUrl(true);
    editor.view.focus();
  }
  const tree = treePane({
    onOpen: async (path, entry) => {
      selectTab("editor");
      if (entry.kind === "table") {
        preview.hide();
        return run.runText(`@[${path}]`, file.workDir());
      }
      // A log (or anything large) is previewed, never loaded into the editor.
      if (entry.kind === "file" || (entry.size ?? 0) > MAX_EDITOR_BYTES) {
        return preview.show(path);
      }
      preview.hide();
      await openScript(path);
      writeUrl(true);
    },
  });
  const queries = queriesPane({
    history: queryHistory,
    onOpen: (id) => {
      selectTab("editor");
      run.follow(id);
    },
    onRunAgain: (entry) => {
      selectTab("editor");
      if (entry.stored) return run.runStored(entry.stored.path, entry.stored.args);
      if (file.storedPath() !== null) file.reset();
      draftPath = "";
      storedText = null;
      fill(draftNote);
      editor.setText(entry.script ?? "");
      run.runText(entry.script ?? "", entry.workDir ?? "/user");
    },
  });
  const pattern = patternPane({
    words,
    onUse: (text, src) => {
      selectTab("editor");
      newQuery(
        `PARSE(pattern: '''${text}''',\n      src: ${
          stringLiteral(src ?? "/shared/*.log")
        })\n| limit(100)`,
      );
    },
  });
  const detections = detectionsPane({
    onOpenInEditor: (script) => {
      selectTab("editor");
      newQuery(script);
    },
  });
  const stores = me.admin ? datastoreForm() : null;

  const editorPanel = h(
    "div",
    { className: "workbench" },
    tree.element,
    h(
      "div",
      { className: "work" },
      preview.element,
      file.element,
      draftNote,
      editorBox,
      h(
        "div",
        { className: "run-bar" },
        runButton,
        h("span", { className: "hint" }, "Ctrl+Enter (⌘+Enter) runs the script"),
        picker.element,
      ),
      viewBox,
      run.element,
    ),
  );
  const tabs: { id: string; label: string; panel: HTMLElement; onShow?: (v: boolean) => void }[] = [
    { id: "editor", label: "Editor", panel: editorPanel },
    { id: "queries", label: "Queries", panel: queries.element, onShow: queries.setVisible },
    { id: "machines", label: "Machines", panel: machines.element, onShow: machines.setVisible },
    { id: "pattern", label: "Pattern", panel: pattern.element },
    {
      id: "detections",
      label: "Detections",
      panel: detections.element,
      onShow: (v) => v && detections.refresh(),
    },
  ];
  if (stores) {
    tabs.push({
      id: "datastores",
      label: "Datastores",
      panel: stores.element,
      onShow: (v) => v && stores.refresh(),
    });
  }
  const tabButtons = tabs.map((t) =>
    h("button", {
      type: "button",
      role: "tab",
      id: `tab-${t.id}`,
      "aria-controls": `panel-${t.id}`,
      onclick: () => selectTab(t.id),
    }, t.label)
  );
  const panels = tabs.map((t) =>
    h("div", { role: "tabpanel", id: `panel-${t.id}`, "aria-labelledby": `tab-${t.id}` }, t.panel)
  );
  const tabList = h("div", { role: "tablist", "aria-label": "Console" }, ...tabButtons);
  tabList.addEventListener("keydown", (e) => {
    const at = tabButtons.indexOf(document.activeElement as HTMLButtonElement);
    if (at < 0 || (e.key !== "ArrowRight" && e.key !== "ArrowLeft")) return;
    const next = (at + (e.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length;
    selectTab(tabs[next]!.id);
    tabButtons[next]!.focus();
    e.preventDefault();
  });
  let currentTab = "editor";
  function selectTab(id: string) {
    if (!tabs.some((t) => t.id === id)) id = "editor";
    const changed = id !== currentTab;
    currentTab = id;
    if (changed) writeUrl(true);
    tabs.forEach((t, i) => {
      const selected = t.id === id;
      tabButtons[i]!.setAttribute("aria-selected", String(selected));
      tabButtons[i]!.tabIndex = selected ? 0 : -1;
      panels[i]!.hidden = !selected;
      t.onShow?.(selected);
    });
  }
  const signOut = h("button", {
    type: "button",
    onclick: () => {
      root.dataset.signedIn = "no";
      storeToken(null);
      tabs.forEach((t) => t.onShow?.(false));
      showSignIn(root);
    },
  }, "Sign out");
  fill(
    root,
    h(
      "header",
      { className: "top" },
      h("h1", {}, "Trawl"),
      tabList,
      h("span", { className: "who" }, `Signed in as ${me.name}${me.admin ? " (admin)" : ""}`),
      signOut,
    ),
    h("main", {}, ...panels),
  );
  /** The address for what is shown: pushed for a new view, replaced for an edit. */
  let applying = false;
  function urlNow(): UrlState {
    const path = file.storedPath() ?? undefined;
    return {
      tab: currentTab,
      path,
      script: path ? undefined : editor.text(),
      query: run.current() ?? undefined,
    };
  }
  function writeUrl(push: boolean) {
    if (applying || !root.isConnected || root.dataset.signedIn !== "yes") return;
    const next = urlNow();
    if (sameUrlState(next, parseUrlState(location.hash))) return;
    if (push) history.pushState(null, "", formatUrlState(next));
    else history.replaceState(null, "", formatUrlState(next));
  }
  /** Shows what an address says: on sign-in, a reload, Back and Forward. */
  async function apply(state: UrlState) {
    applying = true;
    try {
      selectTab(state.tab);
      if (state.path) {
        if (state.path !== file.storedPath()) await openScript(state.path);
      } else {
        if (file.storedPath() !== null) {
          file.reset();
          fill(viewBox);
        }
        draftPath = "";
        storedText = null;
        fill(draftNote);
        const text = state.script ?? drafts.get(me.name, "") ?? SAMPLE;
        if (text !== editor.text()) editor.setText(text);
      }
      // Re-attaches to the query: still running, finished, or gone ("Run again").
      if (state.query && state.query !== run.current()) run.follow(state.query);
    } finally {
      applying = false;
    }
  }
  const onPop = () => apply(parseUrlState(location.hash));
  globalThis.addEventListener("popstate", onPop);
  signOut.addEventListener("click", () => {
    globalThis.removeEventListener("popstate", onPop);
    globalThis.removeEventListener("pagehide", flushDraft);
  });
  root.dataset.signedIn = "yes";
  await apply(parseUrlState(location.hash));
  writeUrl(false);
  await tree.refresh();
}

start(document.getElementById("app")!);
