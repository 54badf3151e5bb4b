/**
 * The open script's file: its path, Save (with `If-Match` on the ETag it was opened with, so a
 * save over someone else's change is refused and said so), Rename and Delete.
 */

import { api, ApiFailure } from "./api.ts";
import { fill, h } from "./dom.ts";
import { encodePath } from "./tree_pane.ts";
import { makeFolders } from "./folders.ts";

export interface FileBar {
  readonly element: HTMLElement;
  /** Opens `path` (GET with its ETag) and gives its text. */
  open(path: string): Promise<string>;
  path(): string;
  /** The path the editor's text was opened from or saved to; null for a new script. */
  storedPath(): string | null;
  /** Forgets the stored path: the editor holds a new script. */
  reset(): void;
  /** The folder a script in the editor runs in: the open file's, else /user. */
  workDir(): string;
}

export function fileBar(options: {
  readonly text: () => string;
  readonly onChanged: () => void;
  readonly onNew: () => void;
  /** Saved to `path` (a draft of it may go). */
  readonly onSaved?: (path: string) => void;
}): FileBar {
  const pathInput = h("input", {
    id: "file-path",
    type: "text",
    value: "/user/untitled.sx",
    size: 30,
  });
  const renameInput = h("input", { id: "file-rename", type: "text", size: 20 });
  const status = h("span", { role: "status", className: "file-status", "aria-live": "polite" });
  let opened: { path: string; etag: string } | null = null;

  const report = (e: unknown, what: string) => {
    const conflict = e instanceof ApiFailure && e.status === 412;
    fill(
      status,
      h(
        "span",
        { role: "alert", className: "error" },
        conflict
          ? `Not saved: ${what} was changed elsewhere since you opened it; reopen it to see the other version. (${e.message})`
          : `${e instanceof ApiFailure ? e.message : String(e)}`,
      ),
    );
  };
  const save = async () => {
    const path = pathInput.value.trim();
    const headers: Record<string, string> = { "Content-Type": "text/plain" };
    if (opened?.path === path) headers["If-Match"] = opened.etag;
    else headers["If-None-Match"] = "*";
    try {
      const res = await api(`/resources${encodePath(path)}`, {
        method: "PUT",
        headers,
        body: options.text(),
      });
      opened = { path, etag: res.headers.get("ETag") ?? "" };
      await res.body?.cancel();
      fill(status, `Saved ${path}`);
      options.onSaved?.(path);
      options.onChanged();
    } catch (e) {
      const missing = e instanceof ApiFailure && e.status === 404 &&
        /no such folder: /.exec(e.message);
      if (!missing) return report(e, path);
      const folder = path.slice(0, path.lastIndexOf("/")) || "/";
      fill(
        status,
        h(
          "span",
          { role: "alert", className: "error" },
          `Not saved: there is no folder ${folder}. `,
          h("button", {
            type: "button",
            onclick: async () => {
              try {
                await makeFolders(folder);
              } catch (err) {
                return report(err, folder);
              }
              await save();
            },
          }, "Create the folder and save"),
        ),
      );
    }
  };
  const rename = async () => {
    const from = pathInput.value.trim();
    const to = renameInput.value.trim();
    if (!to) return fill(status, h("span", { role: "alert" }, "Give the new path first"));
    try {
      await api(`/resources${encodePath(from)}?moveTo=${encodeURIComponent(to)}`, {
        method: "POST",
      });
      pathInput.value = to;
      if (opened?.path === from) opened = { ...opened, path: to };
      renameInput.value = "";
      fill(status, `Renamed to ${to}`);
      options.onChanged();
    } catch (e) {
      report(e, from);
    }
  };
  const remove = async () => {
    const path = pathInput.value.trim();
    if (!confirm(`Delete ${path}?`)) return;
    try {
      const headers: Record<string, string> = {};
      if (opened?.path === path) headers["If-Match"] = opened.etag;
      await api(`/resources${encodePath(path)}`, { method: "DELETE", headers });
      opened = null;
      fill(status, `Deleted ${path}`);
      options.onChanged();
    } catch (e) {
      report(e, path);
    }
  };
  const element = h(
    "div",
    { className: "file-bar", role: "toolbar", "aria-label": "File" },
    h("label", { htmlFor: "file-path" }, "Path"),
    pathInput,
    h("button", { type: "button", onclick: save }, "Save"),
    h("button", {
      type: "button",
      onclick: () => {
        opened = null;
        pathInput.value = "/user/untitled.sx";
        options.onNew();
      },
    }, "New"),
    h("label", { htmlFor: "file-rename" }, "New path"),
    renameInput,
    h("button", { type: "button", onclick: rename }, "Rename"),
    h("button", { type: "button", onclick: remove }, "Delete"),
    status,
  );
  return {
    element,
    async open(path) {
      const res = await api(`/resources${encodePath(path)}`);
      const text = await res.text();
      opened = { path, etag: res.headers.get("ETag") ?? "" };
      pathInput.value = path;
      fill(status, `Opened ${path}`);
      return text;
    },
    path: () => pathInput.value.trim(),
    storedPath: () => opened?.path ?? null,
    reset() {
      opened = null;
      pathInput.value = "/user/untitled.sx";
      fill(status);
    },
    workDir() {
      const p = pathInput.value.trim();
      const dir = p.slice(0, p.lastIndexOf("/"));
      return dir || "/user";
    },
  };
}
