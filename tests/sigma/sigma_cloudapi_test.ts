/**
 * Converted Sigma rules with the built-in mappings, run as stored scripts through the API over a
 * real `cloudapi://` store talking to the cloud emulator: Graph sign-ins, Graph directory audits
 * and Management Activity records. Each finds exactly the emulator's records the rule means
 * (written out by hand here), so the default sources, paths and time fields are those the
 * connector really serves.
 */

import assert from "node:assert/strict";
import { cloudServer, storeDefinition } from "../cloudapi/http_harness.ts";
import { HOUR, NOW, TENANT } from "../cloudapi/harness.ts";

const FROM = NOW - 6 * HOUR;
const TO = NOW - HOUR;

const SIGNIN_RULE = `title: Wrong passwords outside Teams
id: 6f1f0000-0000-4000-8000-000000000001
level: medium
logsource: {product: azure, service: signinlogs}
detection:
    selection:
        ResultType: 50126
    filter:
        AppDisplayName: teams
    condition: selection and not filter
`;
const AUDIT_RULE = `title: Users deleted or passwords reset
id: 6f1f0000-0000-4000-8000-000000000002
level: high
logsource: {product: azure, service: auditlogs}
detection:
    selection:
        properties.message: [Delete user, Reset password]
    condition: selection
`;
const SUITE_RULE = `title: Files downloaded
id: 6f1f0000-0000-4000-8000-000000000003
level: low
logsource: {product: m365, service: audit}
detection:
    selection:
        Operation: filedownloaded
        Workload|startswith: Gen
    condition: selection
`;

Deno.test("Sigma rules over a cloudapi:// store of the emulator find the records they mean", async () => {
  await using c = await cloudServer();
  const store = await c.addStore(
    { seed: { from: NOW - 6 * HOUR, to: NOW, perHour: 20 } },
    storeDefinition({
      directoryLogs: "audits:audits|2 h|15 min, signins:signins|2 h|15 min",
      suiteLogs: "Audit.General:Audit.General|2 h|15 min",
    }),
  );
  const data = store.emulator.data(TENANT);
  const inWindow = (t: number, available: number) => t >= FROM && t < TO && available <= NOW;
  const cases = [
    {
      rule: SIGNIN_RULE,
      idField: "id",
      expected: data.signIns.filter((s) =>
        inWindow(s.time, s.availableAt) &&
        (s.record.signInEventTypes as string[]).includes("interactiveUser") &&
        (s.record.status as { errorCode: number }).errorCode === 50126 &&
        s.record.appDisplayName !== "Teams"
      ).map((s) => String(s.record.id)),
    },
    {
      rule: AUDIT_RULE,
      idField: "id",
      expected: data.audits.filter((s) =>
        inWindow(s.time, s.availableAt) &&
        ["Delete user", "Reset password"].includes(String(s.record.activityDisplayName))
      ).map((s) => String(s.record.id)),
    },
    {
      rule: SUITE_RULE,
      idField: "Id",
      expected: data.blobs.filter((b) => b.contentType === "Audit.General" && b.created < NOW)
        .flatMap((b) => b.records).filter((r) => {
          const t = Date.parse(String(r.CreationTime) + "Z");
          return t >= FROM && t < TO && r.Operation === "FileDownloaded";
        }).map((r) => String(r.Id)),
    },
  ];
  for (const [i, k] of cases.entries()) {
    assert.ok(k.expected.length > 0, `case ${i}: the seed has matches`);
    const res = await c.s.fetch("alice", `/API/v1.0/sigma/convert?store=${store.name}`, {
      method: "POST",
      body: k.rule,
    });
    const [conversion] = (await res.json()).rules;
    assert.equal(conversion.ok, true, conversion.message);
    await c.s.write(`/users/alice/rule${i}.sx`, conversion.script);
    const run = await c.s.fetch(
      "alice",
      `/API/v1.0/?scriptPath=/users/alice/rule${i}.sx&from=${new Date(FROM).toISOString()}&to=${
        new Date(TO).toISOString()
      }`,
      { method: "POST", headers: { Accept: "application/json" } },
    );
    const text = await run.text();
    assert.equal(run.status, 200, `${conversion.script}\n${text}`);
    const ids = (JSON.parse(text) as Record<string, unknown>[]).map((r) => String(r[k.idField]));
    assert.deepEqual(ids.sort(), k.expected.sort(), conversion.script);
  }
});
