/**
 * The resource tree (`GET /resources/<folder>`) as an ARIA tree: folders open on demand, a
 * script opens in the editor, a stored table opens as a query of `@[/path]`.
 */

import { apiJson } from "./api.ts";
import { makeFolders } from "./folders.ts";
import { fill, h } from "./dom.ts";

export interface Entry {
  readonly name: string;
  readonly kind: "folder" | "script" | "table" | "pattern" | "datastore" | "file";
  readonly size?: number;
  /** ISO 8601. */
  readonly modified?: string;
  readonly rights?: readonly string[];
}

export interface TreePane {
  readonly element: HTMLElement;
  /** Reloads the folders shown (after a save, rename or delete). */
  refresh(): Promise<void>;
}

export function treePane(options: {
  readonly onOpen: (path: string, entry: Entry) => void;
}): TreePane {
  const folderInput = h("input", {
    id: "new-folder-path",
    type: "text",
    value: "/user/",
    size: 16,
  });
  const newFolder = h(
    "form",
    { id: "new-folder", className: "new-folder", hidden: true, "aria-label": "New folder" },
    h("label", { htmlFor: "new-folder-path" }, "Folder path"),
    folderInput,
    h("button", { type: "submit" }, "Create"),
  );
  newFolder.addEventListener("submit", async (e) => {
    e.preventDefault();
    const path = folderInput.value.trim().replace(/\/+$/, "");
    if (!path.startsWith("/")) return fill(error, "A folder path starts with /, e.g. /user/logs");
    try {
      await makeFolders(path);
      fill(error);
      newFolder.hidden = true;
      await pane.refresh();
    } catch (err) {
      fill(error, `${path}: ${(err as Error).message}`);
    }
  });
  const tree = h("ul", { role: "tree", "aria-label": "Files", className: "tree" });
  const error = h("p", { role: "alert", className: "error" });
  const element = h(
    "nav",
    { className: "files", "aria-label": "Files" },
    h(
      "div",
      { className: "files-head" },
      h("h2", {}, "Files"),
      h("button", { type: "button", onclick: () => pane.refresh() }, "Refresh"),
      h("button", {
        type: "button",
        "aria-expanded": "false",
        "aria-controls": "new-folder",
        onclick: (e: Event) => {
          newFolder.hidden = !newFolder.hidden;
          (e.currentTarget as HTMLElement).setAttribute("aria-expanded", String(!newFolder.hidden));
          if (!newFolder.hidden) folderInput.focus();
        },
      }, "New folder"),
    ),
    newFolder,
    tree,
    error,
  );
  const open = new Set<string>();

  const folder = async (path: string, into: HTMLElement, level: number) => {
    let entries: Entry[];
    try {
      entries = await apiJson<Entry[]>(`/resources${encodePath(path)}/`);
      // The caller's own folder first, as `/user` (the same as /users/<name>).
      if (path === "/" && !entries.some((e) => e.name === "user")) {
        entries = [{ name: "user", kind: "folder" }, ...entries];
      }
    } catch (e) {
      fill(error, `${path}: ${(e as Error).message}`);
      return;
    }
    const items = await Promise.all(entries.map(async (entry) => {
      const child = `${path === "/" ? "" : path}/${entry.name}`;
      const label = h("span", { className: `kind-${entry.kind}` }, entry.name);
      const meta = entry.kind === "folder" ? null : h(
        "span",
        { className: "tree-meta" },
        [entry.size === undefined ? "" : bytesText(entry.size), dateText(entry.modified)]
          .filter((x) => x).join(" · "),
      );
      const item = h(
        "li",
        {
          role: "treeitem",
          tabIndex: -1,
          "aria-level": String(level),
          "data-path": child,
        },
        label,
        meta,
      );
      if (entry.kind === "folder") {
        const group = h("ul", { role: "group" });
        item.setAttribute("aria-expanded", String(open.has(child)));
        item.append(group);
        if (open.has(child)) await folder(child, group, level + 1);
        label.addEventListener("click", (e) => {
          e.stopPropagation();
          toggle(child, item, group, level);
        });
      } else {
        label.addEventListener("click", (e) => {
          e.stopPropagation();
          options.onOpen(child, entry);
        });
      }
      return item;
    }));
    fill(into, ...items);
  };
  const toggle = async (path: string, item: HTMLElement, group: HTMLElement, level: number) => {
    if (open.has(path)) {
      open.delete(path);
      fill(group);
      item.setAttribute("aria-expanded", "false");
    } else {
      open.add(path);
      item.setAttribute("aria-expanded", "true");
      await folder(path, group, level + 1);
    }
  };
  // Keyboard: arrows move, Enter/Space opens, Right/Left expand and collapse (WAI-ARIA tree).
  tree.addEventListener("keydown", (e) => {
    const items = [...tree.querySelectorAll<HTMLElement>('[role="treeitem"]')];
    const at = items.indexOf(document.activeElement as HTMLElement);
    const focus = (i: number) => {
      const next = items[Math.max(0, Math.min(items.length - 1, i))]!;
      items.forEach((it) => it.tabIndex = -1);
      next.tabIndex = 0;
      next.focus();
    };
    const item = items[at];
    switch (e.key) {
      case "ArrowDown":
        focus(at + 1);
        break;
      case "ArrowUp":
        focus(at - 1);
        break;
      case "Enter":
      case " ":
      case "ArrowRight":
      case "ArrowLeft": {
        if (!item) return;
        const label = item.firstElementChild as HTMLElement;
        const expanded = item.getAttribute("aria-expanded");
        if (e.key === "ArrowRight" && expanded !== "false") return;
        if (e.key === "ArrowLeft" && expanded !== "true") return;
        label.click();
        break;
      }
      default:
        return;
    }
    e.preventDefault();
  });
  const pane: TreePane = {
    element,
    async refresh() {
      fill(error);
      await folder("/", tree, 1);
      const first = tree.querySelector<HTMLElement>('[role="treeitem"]');
      if (first) first.tabIndex = 0;
    },
  };
  return pane;
}

/** A tree path as a URL path, each name encoded. */
export function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/").replace(/\/$/, "");
}

/** A size as people read it: 512 B, 4.1 KB, 50.3 MB. */
export function bytesText(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1000;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

/** A date as the tree shows it: day and minute in the browser's zone. */
export function dateText(iso: string | undefined): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime()) || d.getTime() === 0) return "";
  return d.toLocaleString(undefined, {
    ...(d.getFullYear() === new Date().getFullYear() ? {} : { year: "numeric" }),
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
  });
}
