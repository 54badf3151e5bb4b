/**
 * The Detections tab (issue 26 item 4, issue 27 item 10): schedules and their alerts, and Sigma
 * rules converted.
 * - Each schedule with what it runs, its last run (window, state, matches) and next run;
 *   "Edit" (the form below, `PUT /schedules/<id>`), "Enable"/"Disable", "Run now" (over its
 *   look-back up to now, `POST /schedules/<id>/run`), "Delete" (after a confirmation); its runs
 *   and its alerts with their delivery state, attempts and last error, "Redeliver" on a dead one.
 * - "New schedule": name, a script or a Sigma rule, every N minutes or a cron, the look-back,
 *   a webhook with a write-only secret (left empty on an edit keeps the stored one).
 * - A Sigma paste box converted through `POST /sigma/convert`: the script, the field mapping, the
 *   warnings; "Open in editor" and "Schedule this rule".
 * Every value is text (dom.ts h()), never HTML.
 */

import { api, apiJson } from "./api.ts";
import { fill, h } from "./dom.ts";

interface Schedule {
  readonly id: string;
  readonly name: string;
  readonly enabled: boolean;
  readonly script?: string;
  readonly sigma?: string;
  readonly target?: string;
  readonly store?: string;
  readonly everyMinutes?: number;
  readonly cron?: string;
  readonly lookbackMinutes: number;
  readonly webhook?: { readonly url: string };
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

const iso = (ms: number | undefined) =>
  ms === undefined ? "never" : new Date(ms).toISOString().replace(/\.000Z$/, "Z");

const table = (label: string, heads: readonly string[], rows: readonly HTMLElement[]) =>
  h(
    "table",
    { "aria-label": label },
    h("thead", {}, h("tr", {}, ...heads.map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...rows),
  );

/** The schedule form: new, or an edit of one. */
function scheduleForm(onSaved: () => Promise<void>) {
  const input = (id: string, attrs: Record<string, unknown> = {}) =>
    h("input", { id, name: id, ...attrs });
  const name = input("sch-name", { required: true, maxLength: 200 });
  const kind = h(
    "select",
    { id: "sch-kind" },
    h("option", { value: "script" }, "a script"),
    h("option", { value: "sigma" }, "a Sigma rule"),
  );
  const text = h("textarea", { id: "sch-text", rows: 6, spellcheck: false });
  const textLabel = h("label", { htmlFor: "sch-text" }, "Script");
  const textHint = h(
    "small",
    { id: "sch-text-hint" },
    "It gets the window as init(from::TIMESTAMP, to::TIMESTAMP).",
  );
  text.setAttribute("aria-describedby", textHint.id);
  const how = h(
    "select",
    { id: "sch-how" },
    h("option", { value: "every" }, "every N minutes"),
    h("option", { value: "cron" }, "on a cron (UTC)"),
  );
  const every = input("sch-every", { type: "number", min: 1, defaultValue: "15" });
  const cron = input("sch-cron", { placeholder: "*/30 8-17 * * 1-5" });
  const lookback = input("sch-lookback", { type: "number", min: 1, defaultValue: "60" });
  const enabled = input("sch-enabled", { type: "checkbox", defaultChecked: true });
  const hookUrl = input("sch-hook", { type: "url", placeholder: "https://hooks.example.com/x" });
  hookUrl.setAttribute("aria-describedby", "sch-hook-hint");
  const hookSecret = input("sch-secret", { type: "password", autocomplete: "new-password" });
  const secretState = h("small", { id: "sch-secret-state" });
  hookSecret.setAttribute("aria-describedby", secretState.id);
  const status = h("div", { className: "form-status", "aria-live": "polite" });
  const heading = h("h3", { id: "sch-form-title" }, "New schedule");
  const submit = h("button", { type: "submit" }, "Create schedule");
  const cancel = h("button", { type: "button", hidden: true }, "Cancel edit");
  let editing: Schedule | null = null;
  const row = (label: string, control: HTMLElement, ...more: (HTMLElement | null)[]) =>
    h("div", { className: "field" }, h("label", { htmlFor: control.id }, label), control, ...more);
  const everyRow = row("Every (minutes)", every);
  const cronRow = row("Cron", cron);
  const showHow = () => {
    everyRow.hidden = how.value !== "every";
    cronRow.hidden = how.value !== "cron";
  };
  const showKind = () => {
    fill(textLabel, kind.value === "sigma" ? "Rule (Sigma YAML)" : "Script");
    textHint.hidden = kind.value === "sigma";
  };
  how.addEventListener("change", showHow);
  kind.addEventListener("change", showKind);
  const reset = () => {
    editing = null;
    form.reset();
    fill(heading, "New schedule");
    fill(submit, "Create schedule");
    fill(secretState);
    cancel.hidden = true;
    showHow();
    showKind();
  };
  cancel.addEventListener("click", () => {
    reset();
    fill(status);
  });
  const form = h(
    "form",
    { className: "schedule-form", "aria-labelledby": heading.id, noValidate: true },
    heading,
    row("Name", name),
    row("Runs", kind),
    h("div", { className: "field" }, textLabel, text, textHint),
    row("When", how),
    everyRow,
    cronRow,
    row("Look-back (minutes)", lookback),
    h(
      "div",
      { className: "field switch" },
      enabled,
      h("label", { htmlFor: enabled.id }, "Enabled"),
    ),
    row(
      "Webhook URL",
      hookUrl,
      h(
        "small",
        { id: "sch-hook-hint" },
        "Optional: without one, alerts are kept and listed here.",
      ),
    ),
    row("Webhook secret", hookSecret, secretState),
    h("div", { className: "actions" }, submit, cancel),
    status,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body: Record<string, unknown> = {
      name: name.value.trim(),
      [kind.value]: text.value,
      lookbackMinutes: Number(lookback.value),
      enabled: enabled.checked,
      ...(how.value === "every"
        ? { everyMinutes: Number(every.value) }
        : { cron: cron.value.trim() }),
    };
    // What the form has no field for is kept (the server would reset it).
    if (editing?.dedupDays !== undefined) body.dedupDays = editing.dedupDays;
    if (editing?.suppress !== undefined) body.suppress = editing.suppress;
    if (editing?.target && kind.value === "sigma") body.target = editing.target;
    if (editing?.store && kind.value === "sigma") body.store = editing.store;
    if (hookUrl.value.trim()) {
      body.webhook = {
        url: hookUrl.value.trim(),
        ...(hookSecret.value ? { secret: hookSecret.value } : {}),
      };
    }
    const id = editing?.id;
    try {
      await api(id ? `/schedules/${encodeURIComponent(id)}` : "/schedules", {
        method: id ? "PUT" : "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    } catch (err) {
      fill(status, h("p", { role: "alert", className: "error" }, (err as Error).message));
      return;
    }
    const what = id ? `Saved ${body.name}.` : `Created ${body.name}.`;
    reset();
    fill(status, h("p", { role: "status" }, what));
    await onSaved();
  });
  showHow();
  showKind();
  return {
    element: form,
    edit(s: Schedule) {
      reset();
      editing = s;
      fill(heading, `Edit ${s.name}`);
      fill(submit, "Save schedule");
      cancel.hidden = false;
      name.value = s.name;
      kind.value = s.sigma !== undefined ? "sigma" : "script";
      text.value = s.sigma ?? s.script ?? "";
      how.value = s.cron !== undefined ? "cron" : "every";
      every.value = String(s.everyMinutes ?? 15);
      cron.value = s.cron ?? "";
      lookback.value = String(s.lookbackMinutes);
      enabled.checked = s.enabled;
      hookUrl.value = s.webhook?.url ?? "";
      fill(secretState, s.webhook ? "(set: leave empty to keep it)" : "");
      showHow();
      showKind();
      fill(status);
      name.focus();
    },
    /** A new schedule of a Sigma rule (from the converter). */
    sigma(rule: string, title: string) {
      reset();
      fill(status);
      name.value = title;
      kind.value = "sigma";
      text.value = rule;
      showKind();
      name.focus();
    },
  };
}

export function detectionsPane(options: { readonly onOpenInEditor: (script: string) => void }) {
  const list = h("div", { className: "schedules" });
  const error = h("p", { role: "alert", className: "error" });
  const rule = h("textarea", { id: "sigma-rule", rows: 12, spellcheck: false });
  const result = h("div", { className: "sigma-result", "aria-live": "polite" });
  const convert = h("button", { type: "button" }, "Convert");
  const form = scheduleForm(() => load());
  const act = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
      fill(error);
    } catch (e) {
      fill(error, (e as Error).message);
    }
    await load();
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
      return api(`/schedules/${id}`, {
        method: "PUT",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ ...body, enabled, ...(w ? { webhook: { url: w.url } } : {}) }),
      });
    };
    const last = runs[0];
    const counts = new Map<string, number>();
    for (const a of alerts) counts.set(a.state, (counts.get(a.state) ?? 0) + 1);
    return h(
      "section",
      { className: "schedule", "aria-label": `Schedule ${s.name}` },
      h("h3", {}, s.name),
      h(
        "dl",
        { className: "schedule-facts" },
        h("dt", {}, "Runs"),
        h(
          "dd",
          {},
          `${s.sigma !== undefined ? "a Sigma rule" : "a script"}, ${
            s.cron ? `on cron ${s.cron}` : `every ${s.everyMinutes} min`
          }, look-back ${s.lookbackMinutes} min, ${s.enabled ? "enabled" : "disabled"}`,
        ),
        h("dt", {}, "Last run"),
        h(
          "dd",
          { "data-fact": "last-run" },
          last
            ? `${last.state}, ${last.matches} matches, ${last.alerts} alerts (${iso(last.from)} – ${
              iso(last.to)
            })`
            : "none yet",
        ),
        h("dt", {}, "Next run"),
        h("dd", { "data-fact": "next-run" }, s.state.nextRun ?? "none (disabled)"),
        h("dt", {}, "Alerts"),
        h(
          "dd",
          {},
          alerts.length ? [...counts].map(([state, n]) => `${n} ${state}`).join(", ") : "none",
          s.webhook ? ` → ${s.webhook.url}` : " (no webhook)",
        ),
      ),
      h(
        "div",
        { className: "actions" },
        h("button", {
          type: "button",
          "aria-label": `Edit ${s.name}`,
          onclick: async () => form.edit(await apiJson<Schedule>(`/schedules/${id}`)),
        }, "Edit"),
        h("button", {
          type: "button",
          "aria-label": `${s.enabled ? "Disable" : "Enable"} ${s.name}`,
          onclick: () => act(() => put(!s.enabled)),
        }, s.enabled ? "Disable" : "Enable"),
        h("button", {
          type: "button",
          "aria-label": `Run now (last ${s.lookbackMinutes} min): ${s.name}`,
          onclick: () =>
            act(() => {
              const now = Date.now();
              return api(`/schedules/${id}/run`, {
                method: "POST",
                headers: { "Content-Type": "application/json" },
                body: JSON.stringify({
                  from: new Date(now - s.lookbackMinutes * 60_000).toISOString(),
                  to: new Date(now).toISOString(),
                }),
              });
            }),
        }, `Run now (last ${s.lookbackMinutes} min)`),
        h("button", {
          type: "button",
          className: "danger",
          "aria-label": `Delete ${s.name}`,
          onclick: () => {
            if (!confirm(`Delete the schedule ${s.name}? Its runs and alerts go with it.`)) return;
            act(() => api(`/schedules/${id}`, { method: "DELETE" }));
          },
        }, "Delete"),
      ),
      h("h4", {}, "Runs"),
      runs.length === 0 ? h("p", {}, "No runs yet.") : table(
        `Runs of ${s.name}`,
        ["Window", "Kind", "State", "Matches", "Alerts", "Duplicates", "Error"],
        runs.slice(0, 10).map((r) =>
          h(
            "tr",
            {},
            h("td", {}, `${iso(r.from)} – ${iso(r.to)}`),
            h("td", {}, r.kind),
            h("td", { className: `run-${r.state}` }, r.state),
            h("td", {}, String(r.matches)),
            h("td", {}, String(r.alerts)),
            h("td", {}, String(r.duplicates)),
            h("td", {}, r.error ?? ""),
          )
        ),
      ),
      h("h4", {}, "Alerts"),
      alerts.length === 0 ? h("p", {}, "No alerts.") : table(
        `Alerts of ${s.name}`,
        ["Created", "Record", "Delivery", "Attempts", "Last error", "Actions"],
        alerts.slice(0, 50).map((a) =>
          h(
            "tr",
            { "data-alert": a.id },
            h("td", {}, iso(a.created)),
            h("td", {}, a.key.split("|").at(-1) ?? a.key),
            h("td", { className: `alert-${a.state}` }, a.state),
            h("td", {}, String(a.attempts)),
            h("td", {}, a.lastError ?? ""),
            h(
              "td",
              {},
              a.state === "dead"
                ? h("button", {
                  type: "button",
                  "aria-label": `Redeliver alert ${a.key.split("|").at(-1) ?? a.id}`,
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
    );
  };
  async function load() {
    try {
      const { schedules } = await apiJson<{ schedules: Schedule[] }>("/schedules");
      fill(list, ...(await Promise.all(schedules.map(scheduleBlock))));
      if (!schedules.length) fill(list, h("p", {}, "No schedules yet: create one below."));
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
              ? table(
                "Field mapping",
                ["Sigma field", "Record paths"],
                c.fields.map((f) =>
                  h("tr", {}, h("td", {}, f.sigma), h("td", {}, f.paths.join(", ")))
                ),
              )
              : null,
            c.warnings.length
              ? h(
                "ul",
                { className: "warnings", "aria-label": "Warnings" },
                ...c.warnings.map((w) => h("li", { className: "warning warn" }, w)),
              )
              : null,
            h(
              "div",
              { className: "actions" },
              c.script
                ? h(
                  "button",
                  { type: "button", onclick: () => options.onOpenInEditor(c.script!) },
                  "Open in editor",
                )
                : null,
              c.ok && rules.length === 1
                ? h("button", {
                  type: "button",
                  onclick: () => form.sigma(rule.value, c.title ?? "Sigma rule"),
                }, "Schedule this rule")
                : null,
            ),
          )
        ),
      );
    } catch (e) {
      fill(result, h("p", { className: "error", role: "alert" }, (e as Error).message));
    }
  });
  const element = h(
    "section",
    { "aria-label": "Detections", className: "detections" },
    h("h2", {}, "Schedules"),
    error,
    list,
    form.element,
    h("h2", {}, "Convert a Sigma rule"),
    h("label", { htmlFor: "sigma-rule" }, "Sigma rule (YAML)"),
    rule,
    convert,
    result,
  );
  return { element, refresh: load };
}
