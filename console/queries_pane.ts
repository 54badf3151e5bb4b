/** The queries one may see (`GET /queries`: mine; everyone's for admins), refreshed live. */

import { apiJson } from "./api.ts";
import { fill, h } from "./dom.ts";

interface Item {
  readonly queryId: string;
  readonly user: string;
  readonly state: string;
  readonly progress: number;
  readonly submitted: string;
  readonly scriptPath: string;
  readonly excerpt: string;
}

const REFRESH_MS = 1000;

export function queriesPane(onOpen: (queryId: string) => void) {
  const body = h("tbody");
  const error = h("p", { role: "alert", className: "error" });
  const element = h(
    "section",
    { "aria-label": "Queries" },
    h("h2", {}, "Queries"),
    h(
      "table",
      { className: "queries" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["Submitted", "User", "State", "Progress", "Script", ""].map((t) =>
            h("th", { scope: "col" }, t)
          ),
        ),
      ),
      body,
    ),
    error,
  );
  let timer: ReturnType<typeof setInterval> | undefined;
  const load = async () => {
    try {
      const items = await apiJson<Item[]>("/queries");
      fill(error);
      fill(
        body,
        ...items.map((q) =>
          h(
            "tr",
            { "data-query-id": q.queryId },
            h("td", {}, new Date(q.submitted).toLocaleTimeString()),
            h("td", {}, q.user),
            h("td", { className: `state-${q.state}` }, q.state),
            h("td", {}, `${Math.round(q.progress * 100)} %`),
            h("td", {}, h("code", {}, q.scriptPath), " ", q.excerpt),
            h(
              "td",
              {},
              h("button", {
                type: "button",
                onclick: () => onOpen(q.queryId),
                "aria-label": `Open query ${q.queryId}`,
              }, "Open"),
            ),
          )
        ),
      );
    } catch (e) {
      fill(error, (e as Error).message);
    }
  };
  return {
    element,
    /** Refreshes while shown, stops when hidden. */
    setVisible(visible: boolean) {
      clearInterval(timer);
      if (!visible) return;
      load();
      timer = setInterval(load, REFRESH_MS);
    },
  };
}
