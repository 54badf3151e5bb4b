import assert from "node:assert/strict";
import { FAMILY_SPECS, type FamilySpec, type LogTypeSpec } from "./families.ts";
import { graphWindowUrl } from "./graph_fetcher.ts";
import { parseLogList } from "./log_list.ts";
import { hourFilePath } from "./file_layout.ts";

const FROM = Date.UTC(2026, 2, 10, 11);
const TO = FROM + 3_600_000;

/** A URL with its query decoded, for reading. */
function readable(u: string): string {
  return decodeURIComponent(u.replaceAll("+", " "));
}

function url(family: "directory" | "activity", logType: string): string {
  const log = { family, uriName: "x", logType, lagMs: 0, updateMs: 0 };
  return readable(graphWindowUrl("https://g", log, FROM, TO));
}

Deno.test("the Graph URL of every Graph log type is built from its entry", () => {
  const window = "ge 2026-03-10T11:00:00Z and {f} lt 2026-03-10T12:00:00Z";
  const signIns = (version: string, kind?: string) =>
    `https://g/${version}/auditLogs/signIns?$filter=createdDateTime ${
      window.replace("{f}", "createdDateTime")
    }${kind ? ` and signInEventTypes/any(t: t eq '${kind}')` : ""}&$top=1000`;
  const audits = (version: string) =>
    `https://g/${version}/auditLogs/directoryAudits?$filter=activityDateTime ${
      window.replace("{f}", "activityDateTime")
    }`;
  assert.equal(url("directory", "audits"), audits("v1.0"));
  assert.equal(url("directory", "signins"), signIns("v1.0"));
  assert.equal(url("activity", "audits"), audits("beta"));
  assert.equal(url("activity", "signins"), signIns("beta", "interactiveUser"));
  assert.equal(url("activity", "ni-signins"), signIns("beta", "nonInteractiveUser"));
  assert.equal(url("activity", "sp-signins"), signIns("beta", "servicePrincipal"));
  assert.equal(url("activity", "mi-signins"), signIns("beta", "managedIdentity"));
});

Deno.test("a log type added to its family's entry is allowed, fetched and stored by that entry", () => {
  const directory = FAMILY_SPECS.directory as
    & { logTypes: Record<string, LogTypeSpec> }
    & FamilySpec;
  const types = { ...directory.logTypes };
  (directory as { logTypes: Record<string, LogTypeSpec> }).logTypes = {
    ...types,
    provisioning: {
      api: "graph",
      version: "v1.0",
      path: "auditLogs/provisioning",
      idField: "id",
      timeField: "activityDateTime",
    },
  };
  try {
    const list = parseLogList("directory", "prov:provisioning|1 h|15 min");
    assert.ok(list.ok, JSON.stringify(list));
    const [log] = list.logs;
    assert.equal(
      readable(graphWindowUrl("https://g", log!, FROM, TO)),
      "https://g/v1.0/auditLogs/provisioning?$filter=activityDateTime ge 2026-03-10T11:00:00Z and activityDateTime lt 2026-03-10T12:00:00Z",
    );
    const placement = {
      fileNameIncludesApp: true,
      filePathIncludesApp: false,
      fileNameIncludesHour: true,
      filePathIncludesHour: false,
    };
    assert.equal(
      hourFilePath(log!, FROM, "UTC", placement),
      "directory_service/prov/2026/03/10/2026031011.prov.provisioning.json",
    );
    assert.ok(!parseLogList("activity", "prov:provisioning|1 h|15 min").ok);
  } finally {
    (directory as { logTypes: Record<string, LogTypeSpec> }).logTypes = types;
  }
});

Deno.test("a log list refuses a type its family's entry does not hold, naming the allowed ones", () => {
  const list = parseLogList("suite", "x:Audit.Nope|1 h|15 min, y:constructor|1 h|15 min");
  assert.ok(!list.ok);
  assert.match(list.problems[0]!, /'Audit\.Nope'.*allowed: Audit\.Directory, Audit\.Mail/);
  assert.match(list.problems[1]!, /'constructor'/);
});
