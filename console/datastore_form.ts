/**
 * Defining a datastore (admins). The kinds there are come from the server
 * (`GET /datastore-kinds`: type, store key, secret and bound keys), never from a list here. A
 * CLOUDAPI store gets the specification's form, field by field; any other kind its settings as
 * JSON and one write-only field per secret key. Written with `PUT /datastores/<name>` and
 * checked by the server, whose messages appear beside the fields they name; "Test connection"
 * sends the form's definition, unsaved, to `POST /datastores/<name>/test` for each family's
 * answer. Secrets are write-only: the
 * form shows whether one is set, never its value.
 */

import { api, ApiFailure, apiJson } from "./api.ts";
import { fill, h } from "./dom.ts";

interface Family {
  readonly id: "directory" | "suite" | "activity";
  readonly label: string;
  readonly example: string;
}

const FAMILIES: readonly Family[] = [
  { id: "directory", label: "Directory-service logs", example: "audits:audits|2 h|15 min" },
  { id: "suite", label: "Productivity-suite logs", example: "exchange:Audit.Mail|24 h|1 h" },
  { id: "activity", label: "Cloud-activity logs", example: "signins:signins|2 h|15 min" },
];

const PLANS = ["ent", "gcc", "gcc_high", "dod"];

/** A kind of datastore as `GET /datastore-kinds` describes it. */
interface Kind {
  readonly type: string;
  readonly storeKey: string;
  readonly description: string;
  readonly secretKeys: readonly string[];
  readonly boundKeys: readonly string[];
}

/** The kind with the specification's own form; other kinds are edited as JSON. */
const CLOUD = "CLOUDAPI";

type Field = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

export function datastoreForm() {
  const fields = new Map<string, { input: Field; message: HTMLElement }>();
  const field = (key: string, label: string, input: Field, hint?: string) => {
    input.id = `ds-${key}`;
    input.name = key;
    const message = h("span", { className: "field-message", id: `ds-${key}-message` });
    input.setAttribute("aria-describedby", message.id);
    fields.set(key, { input, message });
    return h(
      "div",
      { className: "field" },
      h("label", { htmlFor: input.id }, label),
      input,
      hint ? h("small", {}, hint) : null,
      message,
    );
  };
  const text = (placeholder = "") => h("input", { type: "text", placeholder });
  const select = (options: readonly string[]) =>
    h("select", {}, ...options.map((o) => h("option", { value: o }, o)));
  const secretState = h("span", { className: "secret-state", id: "ds-secret-state" });
  const switches = new Map<string, HTMLInputElement>();
  const familyBlocks = FAMILIES.map((f) => {
    const toggle = h("input", { type: "checkbox", role: "switch", id: `ds-enable-${f.id}` });
    switches.set(f.id, toggle);
    toggle.addEventListener("change", () => {
      const list = fields.get(`${f.id}Logs`)!.input;
      if (toggle.checked && list.value === "") list.value = f.example;
    });
    const rows = [
      field(
        `${f.id}Logs`,
        "Log list",
        text(f.example),
        "<uri_name>:<log_type>|<lag time>|<update frequency>, ...",
      ),
      field(`${f.id}RateLimit`, "Rate limit", h("input", { type: "number", min: 1 })),
      field(`${f.id}RateTimeunit`, "Time unit", text("10 sec")),
      field(`${f.id}TimeWindow`, "Time window", text("30 days")),
    ];
    if (f.id === "suite") rows.push(field("suitePlan", "Plan", select(PLANS)));
    return {
      toggleRow: h(
        "div",
        { className: "field switch" },
        toggle,
        h("label", { htmlFor: toggle.id }, f.label),
      ),
      advanced: h("details", {}, h("summary", {}, `Advanced settings: ${f.label}`), ...rows),
    };
  });
  const where = ["name", "path", "both"];
  const status = h("div", { role: "status", className: "form-status", "aria-live": "polite" });
  const results = h("ul", { className: "test-results", "aria-label": "Connection test" });
  const storeList = h("ul", { className: "store-list" });
  // Any other kind: its settings as JSON, and one write-only field per secret key.
  const kindSelect = h("select", { id: "ds-kind", name: "kind" });
  const kindHint = h("small", { id: "ds-kind-hint" });
  const settingsInput = h("textarea", { rows: 6, placeholder: '{"root": "/var/log/web"}' });
  const secretFields = h("div", { className: "secret-fields" });
  const otherFields = h(
    "div",
    { hidden: true },
    field("settings", "Settings (JSON)", settingsInput, "the store's keys, secrets left out"),
    secretFields,
  );
  const cloudFields = h(
    "div",
    {},
    field("clientId", "Application (client) ID", text()),
    field("tenantId", "Directory (tenant) ID", text("contoso.onmicrosoft.com")),
    h(
      "div",
      { className: "field" },
      h("label", { htmlFor: "ds-secret" }, "Secret Key"),
      (() => {
        const input = h("input", {
          type: "password",
          id: "ds-secret",
          name: "secret",
          autocomplete: "off",
        });
        const message = h("span", { className: "field-message", id: "ds-secret-message" });
        input.setAttribute("aria-describedby", "ds-secret-state ds-secret-message");
        fields.set("secret", { input, message });
        return h("span", {}, input, " ", secretState, message);
      })(),
    ),
    ...familyBlocks.map((b) => b.toggleRow),
    field(
      "acl",
      "ACL",
      h("textarea", { rows: 3, placeholder: '{"users": {"alice": ["read"]}, "groups": {}}' }),
    ),
    ...familyBlocks.map((b) => b.advanced),
    field("timeZone", "Time Zone", text("UTC")),
    field("hourIn", "Hour in", select(where)),
    field("logTypeIn", "Log Type in", select(where)),
    field("connectTimeout", "Connect Timeout", text("10 s")),
    field("readTimeout", "Read Timeout", text("60 s")),
    field("maxErrorRetries", "Max Error Retries", h("input", { type: "number", min: 0 })),
  );
  const form = h(
    "form",
    { className: "datastore-form", "aria-label": "Datastore", noValidate: true },
    field("storeName", "Store name", text()),
    h(
      "div",
      { className: "field" },
      h("label", { htmlFor: kindSelect.id }, "Kind"),
      kindSelect,
      kindHint,
    ),
    cloudFields,
    otherFields,
    h(
      "div",
      { className: "buttons" },
      h("button", { type: "submit" }, "Save"),
      h("button", { type: "button", onclick: () => testConnection() }, "Test connection"),
    ),
    status,
    results,
  );
  let kinds: Kind[] = [];
  /** The secret fields of the kind shown (not CLOUDAPI's, which has its own). */
  const secretInputs = new Map<string, { input: HTMLInputElement; state: HTMLElement }>();
  const kindOf = (type: string) => kinds.find((k) => k.type === type);
  const showKind = (type: string) => {
    kindSelect.value = type;
    const kind = kindOf(type);
    const bound = kind && kind.boundKeys.length > 0
      ? ` Changing ${kind.boundKeys.join(", ")} needs the secret again.`
      : "";
    fill(kindHint, kind ? kind.description + "." + bound : "");
    cloudFields.hidden = type !== CLOUD;
    otherFields.hidden = type === CLOUD;
    for (const [key, { input }] of secretInputs) {
      if (fields.get(key)?.input === input) fields.delete(key);
    }
    secretInputs.clear();
    fill(
      secretFields,
      ...(type === CLOUD ? [] : kind?.secretKeys ?? []).map((key) => {
        const input = h("input", { type: "password", autocomplete: "off" });
        const state = h("span", { className: "secret-state", id: `ds-${key}-state` }, "(not set)");
        secretInputs.set(key, { input, state });
        // Registered under the key itself, so the server's messages naming it land beside it.
        const row = field(key, key, input, "write-only: leave empty to keep the stored one");
        row.append(" ", state);
        return row;
      }),
    );
  };
  kindSelect.addEventListener("change", () => showKind(kindSelect.value));
  const loadKinds = async () => {
    kinds = await apiJson<Kind[]>("/datastore-kinds");
    fill(kindSelect, ...kinds.map((k) => h("option", { value: k.type }, k.type)));
    showKind(kindOf(CLOUD) ? CLOUD : kinds[0]?.type ?? "");
  };
  const value = (key: string) => fields.get(key)!.input.value.trim();
  (fields.get("hourIn")!.input as HTMLSelectElement).value = "path";
  (fields.get("logTypeIn")!.input as HTMLSelectElement).value = "name";

  const definition = (): Record<string, unknown> => {
    const kind = kindOf(kindSelect.value);
    if (!kind) throw new FieldProblem("storeName", "the server offers no kind of store");
    if (kind.type !== CLOUD) return otherDefinition(kind);
    return cloudDefinition();
  };
  const otherDefinition = (kind: Kind): Record<string, unknown> => {
    let store: Record<string, unknown>;
    try {
      store = value("settings") ? JSON.parse(value("settings")) : {};
    } catch {
      throw new FieldProblem("settings", "the settings are not valid JSON");
    }
    if (typeof store !== "object" || store === null || Array.isArray(store)) {
      throw new FieldProblem("settings", "the settings are a JSON object");
    }
    for (const [key, { input }] of secretInputs) {
      if (input.value !== "") store[key] = input.value;
    }
    return { type: kind.type, [kind.storeKey]: store };
  };
  const cloudDefinition = (): Record<string, unknown> => {
    const store: Record<string, unknown> = {
      clientId: value("clientId"),
      tenantId: value("tenantId"),
    };
    if (value("secret")) store.secret = value("secret");
    for (const f of FAMILIES) {
      if (switches.get(f.id)!.checked) store[`${f.id}Logs`] = value(`${f.id}Logs`);
      const rate = value(`${f.id}RateLimit`);
      if (rate) store[`${f.id}RateLimit`] = Number(rate);
      if (value(`${f.id}RateTimeunit`)) store[`${f.id}RateTimeunit`] = value(`${f.id}RateTimeunit`);
      if (value(`${f.id}TimeWindow`)) store[`${f.id}TimeWindow`] = value(`${f.id}TimeWindow`);
    }
    store.suitePlan = value("suitePlan");
    if (value("timeZone")) store.timeZone = value("timeZone");
    const hour = value("hourIn");
    store.fileNameIncludesHour = hour !== "path";
    store.filePathIncludesHour = hour !== "name";
    const app = value("logTypeIn");
    store.fileNameIncludesApp = app !== "path";
    store.filePathIncludesApp = app !== "name";
    if (value("connectTimeout")) store.connectTimeout = value("connectTimeout");
    if (value("readTimeout")) store.readTimeout = value("readTimeout");
    if (value("maxErrorRetries")) store.maxErrorRetries = Number(value("maxErrorRetries"));
    if (value("acl")) {
      try {
        store.acl = JSON.parse(value("acl"));
      } catch {
        throw new FieldProblem("acl", "the ACL is not valid JSON");
      }
    }
    return { type: CLOUD, cloudapiStore: store };
  };
  const clearMessages = () => {
    for (const { message, input } of fields.values()) {
      fill(message);
      input.removeAttribute("aria-invalid");
    }
    fill(status);
    fill(results);
  };
  const mark = (key: string, text: string) => {
    const f = fields.get(key);
    if (!f) return false;
    f.message.append(h("span", {}, text));
    f.input.setAttribute("aria-invalid", "true");
    return true;
  };
  const save = async (): Promise<boolean> => {
    clearMessages();
    const name = value("storeName");
    if (!name) {
      mark("storeName", "a store needs a name");
      return false;
    }
    let body: Record<string, unknown>;
    try {
      body = definition();
    } catch (e) {
      if (e instanceof FieldProblem) mark(e.field, e.message);
      return false;
    }
    try {
      await api(`/datastores/${encodeURIComponent(name)}`, {
        method: "PUT",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    } catch (e) {
      const problems = e instanceof ApiFailure && Array.isArray(e.body.problems)
        ? e.body.problems as string[]
        : [(e as Error).message];
      const general: string[] = [];
      for (const p of problems) {
        const keys = [...p.matchAll(/keys? '(\w+)'(?: and '(\w+)')?/g)].flatMap((m) => [m[1], m[2]])
          .filter(Boolean) as string[];
        const text = p.replace(/^datastore '[^']*': /, "");
        if (!keys.some((k) => mark(k, text))) general.push(text);
      }
      fill(
        status,
        h("p", { role: "alert", className: "error" }, "Not saved. ", ...general.join("; ")),
      );
      return false;
    }
    fill(status, `Saved ${name}.`);
    if (kindSelect.value === CLOUD) {
      (fields.get("secret")!.input as HTMLInputElement).value = "";
      fill(secretState, "(set)");
    } else {
      const given = [...secretInputs.values()].filter((s) => s.input.value !== "");
      for (const s of given.length > 0 ? secretInputs.values() : []) {
        fill(s.state, s.input.value !== "" ? "(set)" : "(not set)");
      }
      for (const s of secretInputs.values()) s.input.value = "";
    }
    await listStores();
    return true;
  };
  // The form's definition as it stands, tested by the server without saving it.
  const testConnection = async () => {
    clearMessages();
    const name = value("storeName");
    if (!name) {
      mark("storeName", "a store needs a name");
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = definition();
    } catch (e) {
      if (e instanceof FieldProblem) mark(e.field, e.message);
      return;
    }
    fill(status, "Testing the connection (not saved)…");
    try {
      const answer = await apiJson<
        { families: { family: string; ok: boolean; message: string }[] }
      >(
        `/datastores/${encodeURIComponent(name)}/test`,
        {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(body),
        },
      );
      fill(status, `Connection tested; ${name} is not saved until you press Save.`);
      fill(
        results,
        ...answer.families.map((f) =>
          h(
            "li",
            { className: f.ok ? "ok" : "failed" },
            `${f.family}: ${f.ok ? "OK" : "failed"} — ${f.message}`,
          )
        ),
      );
    } catch (e) {
      fill(status, h("p", { role: "alert", className: "error" }, (e as Error).message));
    }
  };
  const load = async (name: string) => {
    clearMessages();
    const def = await apiJson<Record<string, unknown>>(
      `/datastores/${encodeURIComponent(name)}`,
    );
    fields.get("storeName")!.input.value = name;
    const kind = kindOf(String(def.type));
    if (kind && kind.type !== CLOUD) {
      showKind(kind.type);
      const store = { ...(def[kind.storeKey] ?? {}) as Record<string, unknown> };
      for (const key of kind.secretKeys) {
        const entry = secretInputs.get(key);
        if (entry) fill(entry.state, store[`${key}Set`] ? "(set)" : "(not set)");
        delete store[`${key}Set`];
      }
      settingsInput.value = JSON.stringify(store, null, 2);
      return;
    }
    showKind(CLOUD);
    const s = (def.cloudapiStore ?? {}) as Record<string, unknown>;
    for (const [key, { input }] of fields) {
      const v = s[key];
      if (key === "acl") input.value = v ? JSON.stringify(v) : "";
      else if (key !== "secret" && key !== "storeName" && v !== undefined) input.value = String(v);
    }
    for (const f of FAMILIES) switches.get(f.id)!.checked = typeof s[`${f.id}Logs`] === "string";
    const both = (a: unknown, b: unknown) => a && b ? "both" : b ? "path" : "name";
    fields.get("hourIn")!.input.value = both(s.fileNameIncludesHour, s.filePathIncludesHour);
    fields.get("logTypeIn")!.input.value = both(s.fileNameIncludesApp, s.filePathIncludesApp);
    fill(secretState, s.secretSet ? "(set)" : "(not set)");
  };
  const listStores = async () => {
    try {
      if (kinds.length === 0) await loadKinds();
      const stores = await apiJson<{ name: string; type: string }[]>("/datastores");
      fill(
        storeList,
        ...stores.filter((s) => kindOf(s.type)).map((s) =>
          h(
            "li",
            {},
            h("button", { type: "button", onclick: () => load(s.name) }, `Open ${s.name}`),
            ` ${s.type} `,
            h("button", {
              type: "button",
              onclick: async () => {
                if (!confirm(`Delete the datastore ${s.name}? Queries that read it will fail.`)) {
                  return;
                }
                try {
                  await api(`/datastores/${encodeURIComponent(s.name)}`, { method: "DELETE" });
                  fill(status, `Deleted ${s.name}.`);
                } catch (e) {
                  fill(status, h("p", { role: "alert", className: "error" }, (e as Error).message));
                }
                await listStores();
              },
            }, `Delete ${s.name}`),
          )
        ),
      );
    } catch (e) {
      fill(storeList, h("li", { role: "alert" }, (e as Error).message));
    }
  };
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    save();
  });
  const element = h(
    "section",
    { "aria-label": "Datastores" },
    h("h2", {}, "Datastores"),
    storeList,
    form,
  );
  return { element, refresh: listStores };
}

class FieldProblem extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
  }
}
