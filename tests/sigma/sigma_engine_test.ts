/**
 * The scripts the converter writes, run by the engine over records of each shape (Graph sign-ins
 * and audits and Management Activity records from the cloud emulator's seed, and the same Graph
 * records archived as diagnostic settings write them), find exactly the records the rule means:
 * the same as the converter's own evaluation (`POST /sigma/test`), and the same as the rule
 * written out by hand here.
 */

import assert from "node:assert/strict";
import { engineHome } from "../support/engine_home.ts";
import { seedTenant } from "../emulator/seed.ts";
import { type Conversion, convertRules, matchRecords } from "../../connectors/sigma/convert.ts";
import { DEFAULT_MAPPINGS, type SigmaMapping } from "../../connectors/sigma/mapping.ts";

const FROM = Date.parse("2024-05-01T00:00:00Z");
const TO = Date.parse("2024-05-01T06:00:00Z");
const seed = seedTenant("contoso.com", { from: FROM, to: TO, perHour: 20, seed: 7 });

type Rec = Record<string, unknown>;
const signIns = seed.signIns.map((s) => s.record as Rec);
// A few sign-ins from the office network, which the fixture's filter excludes.
for (const s of signIns.slice(0, 40)) s.ipAddress = "10.1.2.3";
const audits = seed.audits.map((s) => s.record as Rec);
const suite: Rec[] = seed.blobs.flatMap((b) => b.records as Rec[]);
suite.push(
  ...["Activity performed by terminated user", "Suspicious email sending patterns detected"].map((
    name,
    i,
  ) => ({
    Id: `alert-${i}`,
    CreationTime: "2024-05-01T03:00:00",
    Operation: "AlertTriggered",
    RecordType: 40,
    ResultStatus: "Succeeded",
    Workload: "SecurityComplianceCenter",
    Name: name,
  })),
);

const archivedSignIns = signIns.map((r) => ({
  time: r.createdDateTime,
  category: "SignInLogs",
  operationName: "Sign-in activity",
  resultType: String((r.status as Rec).errorCode),
  callerIpAddress: r.ipAddress,
  properties: r,
}));
const archivedAudits = audits.map((r) => ({
  time: r.activityDateTime,
  category: "AuditLogs",
  operationName: r.activityDisplayName,
  properties: r,
}));

/** The default mappings, each source replaced by a file of the tree. */
function local(target: string, files: Record<string, string>): SigmaMapping {
  const m = DEFAULT_MAPPINGS.find((x) => x.target === target)!;
  return {
    ...m,
    logsources: m.logsources.flatMap((s) =>
      files[s.service!] ? [{ ...s, source: files[s.service!]! }] : []
    ),
  };
}

const rules = (name: string) => Deno.readTextFileSync(new URL(`rules/${name}`, import.meta.url));

async function check(
  conversion: Conversion,
  records: readonly Rec[],
  idOf: (r: Rec) => string,
  expected: (r: Rec) => boolean,
) {
  assert.ok(conversion.ok, conversion.message);
  await using home = await engineHome();
  await home.write(conversion.sources![0]!, records.map((r) => JSON.stringify(r)).join("\n"));
  const run = await home.run(conversion.script!, {
    args: { from: new Date(FROM).toISOString(), to: new Date(TO).toISOString() },
  });
  const byEngine = run.rows.map((row) => idOf(row as unknown as Rec)).sort();
  const byEvaluator = matchRecords(conversion, records).map((m) => idOf(records[m.index]!)).sort();
  const byHand = records.filter(expected).map(idOf).sort();
  assert.ok(byHand.length > 0 && byHand.length < records.length, "the fixture selects some");
  assert.deepEqual(byEvaluator, byHand);
  assert.deepEqual(byEngine, byHand);
}

const inOffice = (ip: unknown) => typeof ip === "string" && ip.startsWith("10.1.");
const signInHit = (r: Rec) =>
  (r.status as Rec).errorCode === 50126 &&
  String(r.appDisplayName).toLowerCase().startsWith("office 365") && !inOffice(r.ipAddress);

Deno.test("sign-in rule over Graph records and over archived ones", async () => {
  const text = rules("signin_failures.yml");
  const graph = convertRules(text, {
    mappings: [local("graph", { signinlogs: "/users/alice/signins.json" })],
  })[0]!;
  await check(graph, signIns, (r) => String(r.id), signInHit);
  const archive = convertRules(text, {
    mappings: [local("archive", { signinlogs: "/users/alice/archive.json" })],
  })[0]!;
  await check(
    archive,
    archivedSignIns,
    (r) => String((r.properties as Rec).id),
    (r) => signInHit(r.properties as Rec),
  );
});

Deno.test("audit rules (lists, all of, wildcards, value maps) over Graph and archived records", async () => {
  const [deleted, updates] = convertRules(rules("audit_user_changes.yml"), {
    mappings: [local("graph", { auditlogs: "/users/alice/audits.json" })],
  });
  const deletedHit = (r: Rec) =>
    ["Delete user", "Reset password"].includes(String(r.activityDisplayName)) &&
    r.category === "UserManagement";
  await check(deleted!, audits, (r) => String(r.id), deletedHit);
  const updateHit = (r: Rec) =>
    String(r.activityDisplayName).startsWith("Update") && r.result === "success" &&
    JSON.stringify(r.initiatedBy).includes("carol@");
  await check(updates!, audits, (r) => String(r.id), updateHit);
  const [archived] = convertRules(rules("audit_user_changes.yml"), {
    mappings: [local("archive", { auditlogs: "/users/alice/audits.json" })],
  });
  await check(
    archived!,
    archivedAudits,
    (r) => String((r.properties as Rec).id),
    (r) => deletedHit(r.properties as Rec),
  );
});

Deno.test("m365 alert rule over Management Activity records", async () => {
  const [alert] = convertRules(rules("suite_alert.yml"), {
    mappings: [local("suite", { threat_management: "/users/alice/general.json" })],
  });
  await check(
    alert!,
    suite,
    (r) => String(r.Id),
    (r) => r.Name === "Activity performed by terminated user",
  );
});
