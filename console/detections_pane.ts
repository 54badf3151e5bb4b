/**
 * The Detections tab (issue 26 item 4, issue 27 item 10).
 * Schedules with their last run and next run (enable/disable, run now), their alerts with the
 * delivery state (redeliver a dead one), and a Sigma paste box converted through
 * POST /sigma/convert. Every value is text (dom.ts h()), never HTML.
 */

import { api, apiJson } from "./api.ts";
import { fill, h } from "./dom.ts";

interface Schedule {
  readonly id: string;
  readonly name: string;
  readonly enabled: boolean;
  readonly everyMinutes?: number;
  readonly cron?: string;
  readonly state: { readonly lastRunAt?: number; readonly nextRun: string | null };
  readonly [k: string]: unknown;
}
interface Run {
  readonly kind: string;
  readonly from: number;
  readonly to: number;
  readonly state: string;
  readonly matches: number;
  readonly alerts: number;
  readonly duplicates: number;
  readonly error?: string;
}
interface Alert {
  readonly id: string;
  readonly key: string;
  readonly state: string;
  readonly attempts: number;
  readonly lastError?: string;
  readonly created: number;
}
interface Conversion {
  readonly ok: boolean;
  readonly title: string | null;
  readonly target?: string;
  readonly script?: string;
  readonly fields?: readonly { sigma: string; paths: readonly string[] }[];
  readonly warnings: readonly string[];
  readonly reason?: string;
  readonly message?: string;
}

const iso = (ms: number | undefined) => ms === undefined ? "never" : new Date(ms).toISOString();

export function detectionsPane(options: { readonly onOpenInEditor: (script: string) => void }) {
  const list = h("div", { className: "schedules" });
  const error = h("p", { role: "alert", className: "error" });
  const rule = h("textarea", { id: "sigma-rule", rows: 12, spellcheck: false });
  const result = h("div", { className: "sigma-result", "aria-live": "polite" });
  const convert = h("button", { type: "button" }, "Convert");
  const act = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
      fill(error);
      await load();
    } catch (e) {
      fill(error, (e as Error).message);
    }
  };
  const scheduleBlock = async (s: Schedule) => {
    const id = encodeURIComponent(s.id);
    const [{ runs }, { alerts }] = await Promise.all([
      apiJson<{ runs: Run[] }>(`/schedules/${id}/runs`),
      apiJson<{ alerts: Alert[] }>(`/schedules/${id}/alerts`),
    ]);
    const put = (enabled: boolean) => {
      const { id: _i, state: _s, owner: _o, created: _c, webhook: w, ...body } = s;
      // A PUT without the webhook's secret keeps the old one.
      const hook = w as { url: string } | undefined;
      return api(`/schedules/${id}`, {
        method: "PUT",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ ...body, enabled, ...(hook ? { webhook: { url: hook.url } } : {}) }),
      });
    };
    const now = Date.now();
    return h(
      "section",
      { className: "schedule", "aria-label": `Schedule ${s.name}` },
      h("h3", {}, s.name),
      h(
        "p",
        {},
        s.cron ? `cron ${s.cron}` : `every ${s.everyMinutes} min`,
        ` · ${s.enabled ? "enabled" : "disabled"} · last run ${iso(s.state.lastRunAt)}`,
        ` · next run ${s.state.nextRun ?? "none"}`,
      ),
      h(
        "button",
        { type: "button", onclick: () => act(() => put(!s.enabled)) },
        s.enabled ? "Disable" : "Enable",
      ),
      h("button", {
        type: "button",
        onclick: () =>
          act(() =>
            api(`/schedules/${id}/run`, {
              method: "POST",
              headers: { "Content-Type": "application/json" },
              body: JSON.stringify({
                from: new Date(now - 3600_000).toISOString(),
                to: new Date(now).toISOString(),
              }),
            })
          ),
      }, "Run now (last hour)"),
      h(
        "table",
        { "aria-label": `Runs of ${s.name}` },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["Window", "Kind", "State", "Matches", "Alerts", "Duplicates", "Error"].map((t) =>
              h("th", { scope: "col" }, t)
            ),
          ),
        ),
        h(
          "tbody",
          {},
          ...runs.slice(0, 10).map((r) =>
            h(
              "tr",
              {},
              h("td", {}, `${iso(r.from)} – ${iso(r.to)}`),
              h("td", {}, r.kind),
              h("td", {}, r.state),
              h("td", {}, String(r.matches)),
              h("td", {}, String(r.alerts)),
              h("td", {}, String(r.duplicates)),
              h("td", {}, r.error ?? ""),
            )
          ),
        ),
      ),
      h(
        "table",
        { "aria-label": `Alerts of ${s.name}` },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["Created", "Key", "State", "Attempts", "Last error", "Actions"].map((t) =>
              h("th", { scope: "col" }, t)
            ),
          ),
        ),
        h(
          "tbody",
          {},
          ...alerts.slice(0, 50).map((a) =>
            h(
              "tr",
              {},
              h("td", {}, iso(a.created)),
              h("td", {}, a.key),
              h("td", {}, a.state),
              h("td", {}, String(a.attempts)),
              h("td", {}, a.lastError ?? ""),
              h(
                "td",
                {},
                a.state === "dead"
                  ? h("button", {
                    type: "button",
                    onclick: () =>
                      act(() =>
                        api(`/schedules/${id}/alerts/${encodeURIComponent(a.id)}/redeliver`, {
                          method: "POST",
                        })
                      ),
                  }, "Redeliver")
                  : null,
              ),
            )
          ),
        ),
      ),
    );
  };
  async function load() {
    try {
      const { schedules } = await apiJson<{ schedules: Schedule[] }>("/schedules");
      fill(list, ...(await Promise.all(schedules.map(scheduleBlock))));
      if (!schedules.length) fill(list, h("p", {}, "No schedules."));
    } catch (e) {
      fill(error, (e as Error).message);
    }
  }
  convert.addEventListener("click", async () => {
    try {
      const { rules } = await apiJson<{ rules: Conversion[] }>("/sigma/convert", {
        method: "POST",
        headers: { "Content-Type": "application/yaml" },
        body: rule.value,
      });
      fill(
        result,
        ...rules.map((c) =>
          h(
            "div",
            {},
            h("h3", {}, c.title ?? "(untitled rule)"),
            c.ok
              ? null
              : h("p", { className: "error" }, `Refused: ${c.reason ?? ""}: ${c.message ?? ""}`),
            c.script
              ? h("pre", { "aria-label": "Converted script", tabindex: "0" }, c.script)
              : null,
            c.target ? h("p", {}, `Target: ${c.target}`) : null,
            c.fields?.length
              ? h(
                "table",
                { "aria-label": "Field mapping" },
                h(
                  "thead",
                  {},
                  h(
                    "tr",
                    {},
                    h("th", { scope: "col" }, "Sigma field"),
                    h("th", { scope: "col" }, "Record paths"),
                  ),
                ),
                h(
                  "tbody",
                  {},
                  ...c.fields.map((f) =>
                    h("tr", {}, h("td", {}, f.sigma), h("td", {}, f.paths.join(", ")))
                  ),
                ),
              )
              : null,
            c.warnings.length
              ? h("ul", { "aria-label": "Warnings" }, ...c.warnings.map((w) => h("li", {}, w)))
              : null,
            c.script
              ? h(
                "button",
                { type: "button", onclick: () => options.onOpenInEditor(c.script!) },
                "Open in editor",
              )
              : null,
          )
        ),
      );
    } catch (e) {
      fill(result, h("p", { className: "error" }, (e as Error).message));
    }
  });
  const element = h(
    "section",
    { "aria-label": "Detections" },
    h("h2", {}, "Schedules"),
    error,
    list,
    h("h2", {}, "Convert a Sigma rule"),
    h("label", { htmlFor: "sigma-rule" }, "Sigma rule (YAML)"),
    rule,
    convert,
    result,
  );
  return { element, refresh: load };
}
