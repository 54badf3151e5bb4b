/**
 * Converted Sigma rules with the built-in `archive` mapping over an `azblob://` store in Azurite
 * holding what Entra ID's diagnostic settings archive (one blob of JSON lines per hour, Graph's
 * record under `properties`): sign-ins and audits from the cloud emulator's seed. Each rule,
 * run as a stored script through the API, finds exactly the records it means.
 */

import assert from "node:assert/strict";
import { DEV_ACCOUNT, DEV_KEY, startAzurite } from "../support/azurite.ts";
import { startTestServer } from "../api/server.ts";
import { seedTenant } from "../emulator/seed.ts";

const TENANT = "tenantId=0f1e2d3c-0000-4000-8000-123456789abc";
const FROM = Date.parse("2024-05-01T10:00:00Z");
const TO = Date.parse("2024-05-01T14:00:00Z");
const seed = seedTenant("contoso.com", { from: FROM - 3_600_000, to: TO + 3_600_000, perHour: 15 });
type Rec = Record<string, unknown>;

const SIGNIN_RULE = `title: Wrong passwords outside Teams
id: 6f1f0000-0000-4000-8000-000000000011
logsource: {product: azure, service: signinlogs}
detection:
    selection:
        ResultType: 50126
    filter:
        AppDisplayName: teams
    condition: selection and not filter
`;
const AUDIT_RULE = `title: Users deleted or passwords reset
id: 6f1f0000-0000-4000-8000-000000000012
logsource: {product: azure, service: auditlogs}
detection:
    selection:
        OperationName: [Delete user, Reset password]
        Category: UserManagement
    condition: selection
`;

function blobPath(t: number): string {
  const d = new Date(t).toISOString();
  return `${TENANT}/y=${d.slice(0, 4)}/m=${d.slice(5, 7)}/d=${d.slice(8, 10)}/h=${
    d.slice(11, 13)
  }/m=00/PT1H.json`;
}

/** Records grouped into hourly blobs, as the archive writes them. */
function byHour(records: { time: number; line: Rec }[]): Map<string, string> {
  const blobs = new Map<string, string>();
  for (const r of records) {
    const path = blobPath(r.time);
    blobs.set(path, (blobs.get(path) ?? "") + JSON.stringify(r.line) + "\n");
  }
  return blobs;
}

Deno.test("Sigma rules over an azblob:// archive in Azurite find the records they mean", async () => {
  await using az = await startAzurite();
  const signIns = seed.signIns.map((s) => ({
    time: s.time,
    line: {
      time: new Date(s.time).toISOString(),
      resourceId: "/tenants/0f1e2d3c/providers/Microsoft.aadiam",
      operationName: "Sign-in activity",
      category: "SignInLogs",
      resultType: String((s.record.status as Rec).errorCode),
      callerIpAddress: s.record.ipAddress,
      properties: s.record,
    } as Rec,
  }));
  const audits = seed.audits.map((s) => ({
    time: s.time,
    line: {
      time: new Date(s.time).toISOString(),
      operationName: s.record.activityDisplayName,
      category: "AuditLogs",
      properties: s.record,
    } as Rec,
  }));
  for (const [path, text] of byHour(signIns)) {
    await az.upload("insights-logs-signinlogs", path, text);
  }
  for (const [path, text] of byHour(audits)) await az.upload("insights-logs-auditlogs", path, text);

  await using s = await startTestServer();
  await s.write(
    "/system/datastores/archive.json",
    JSON.stringify({
      type: "AZBLOB",
      azblobStore: {
        endpoint: az.endpoint,
        accountName: DEV_ACCOUNT,
        accountKey: DEV_KEY,
        acl: { users: { alice: ["read", "list"] }, groups: {} },
      },
    }),
  );
  const inWindow = (t: number) => t >= FROM && t < TO;
  const cases = [
    {
      rule: SIGNIN_RULE,
      expected: signIns.filter((r) => {
        const p = r.line.properties as Rec;
        return inWindow(r.time) && (p.status as Rec).errorCode === 50126 &&
          p.appDisplayName !== "Teams";
      }).map((r) => String((r.line.properties as Rec).id)),
    },
    {
      rule: AUDIT_RULE,
      expected: audits.filter((r) =>
        inWindow(r.time) && ["Delete user", "Reset password"].includes(String(r.line.operationName))
      ).map((r) => String((r.line.properties as Rec).id)),
    },
  ];
  for (const [i, k] of cases.entries()) {
    assert.ok(k.expected.length > 0, `case ${i}: the seed has matches`);
    const res = await s.fetch("alice", "/API/v1.0/sigma/convert?target=archive", {
      method: "POST",
      body: k.rule,
    });
    const [conversion] = (await res.json()).rules;
    assert.equal(conversion.ok, true, conversion.message);
    await s.write(`/users/alice/rule${i}.sx`, conversion.script);
    const run = await s.fetch(
      "alice",
      `/API/v1.0/?scriptPath=/users/alice/rule${i}.sx&from=${new Date(FROM).toISOString()}&to=${
        new Date(TO).toISOString()
      }`,
      { method: "POST", headers: { Accept: "application/json" } },
    );
    const text = await run.text();
    assert.equal(run.status, 200, `${conversion.script}\n${text}`);
    const ids = (JSON.parse(text) as Rec[]).map((r) => String((r.properties as Rec).id));
    assert.deepEqual(ids.sort(), k.expected.sort(), conversion.script);
  }
});
