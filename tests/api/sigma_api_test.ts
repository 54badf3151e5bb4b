/**
 * `/sigma/convert`, `/sigma/test`, `/sigma/mappings` on a real server: a mapping file of the tree
 * replaces the built-in one, the converted script runs through the synchronous API (the
 * supervisor, like any query) and finds what the rule means; tokens are checked; bad mapping
 * files and bodies are refused with a message naming the problem.
 */

import assert from "node:assert/strict";
import { startTestServer } from "./server.ts";
import { GRAPH_MAPPING } from "../../connectors/sigma/mapping.ts";

const API = "/API/v1.0";
const rules = (name: string) =>
  Deno.readTextFileSync(new URL(`../sigma/rules/${name}`, import.meta.url));

const SIGNINS = [
  {
    id: "a",
    createdDateTime: "2024-05-01T10:00:00Z",
    appDisplayName: "Office 365 Exchange Online",
    ipAddress: "192.0.2.1",
    status: { errorCode: 50126 },
  },
  {
    id: "b",
    createdDateTime: "2024-05-01T10:05:00Z",
    appDisplayName: "Office 365 Exchange Online",
    ipAddress: "10.1.4.4",
    status: { errorCode: 50126 },
  },
  {
    id: "c",
    createdDateTime: "2024-05-01T10:09:00Z",
    appDisplayName: "Teams",
    ipAddress: "192.0.2.1",
    status: { errorCode: 50126 },
  },
  {
    id: "d",
    createdDateTime: "2024-05-01T11:30:00Z",
    appDisplayName: "office 365 sharepoint",
    ipAddress: "192.0.2.9",
    status: { errorCode: 50126 },
  },
  {
    id: "e",
    createdDateTime: "2024-05-01T10:30:00Z",
    appDisplayName: "Office 365 Exchange Online",
    ipAddress: "192.0.2.1",
    status: { errorCode: 0 },
  },
];

Deno.test("convert with a mapping file of the tree, and run the script through the sync API", async () => {
  await using s = await startTestServer();
  // The administrator's mapping: Graph's sign-ins read from a file of the tree.
  const mapping = {
    ...GRAPH_MAPPING,
    logsources: GRAPH_MAPPING.logsources.map((l) =>
      l.service === "signinlogs" ? { ...l, source: "/shared/{store}/signins.json" } : l
    ),
  };
  await s.write("/system/sigma/graph.json", JSON.stringify(mapping));
  await s.write("/shared/lab/signins.json", SIGNINS.map((r) => JSON.stringify(r)).join("\n"));
  const res = await s.fetch("alice", `${API}/sigma/convert?target=graph&store=lab`, {
    method: "POST",
    headers: { "Content-Type": "application/yaml" },
    body: rules("signin_failures.yml") + "---\n" + rules("refused.yml"),
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  const [first, ...refused] = body.rules;
  assert.equal(first.ok, true);
  assert.equal(first.id, "4a7c5b0e-1111-4c3e-9a51-000000000001");
  assert.equal(first.level, "medium");
  assert.deepEqual(first.sources, ["/shared/lab/signins.json"]);
  assert.deepEqual(first.fields.find((f: { sigma: string }) => f.sigma === "ResultType").paths, [
    "status.errorCode",
  ]);
  assert.equal(first.predicate, undefined);
  assert.deepEqual(refused.map((r: { reason: string }) => r.reason), [
    "KEYWORDS", // found before the log source is looked up
    "PLACEHOLDER",
    "AGGREGATION",
    "UNKNOWN_FIELD",
    "UNSUPPORTED_MODIFIER",
    "NO_SOURCE",
    "UNSUPPORTED_REGEX",
  ]);
  // An ordinary stored script: run with its window as arguments.
  await s.write("/users/alice/signin_failures.sx", first.script);
  const run = await s.fetch(
    "alice",
    `${API}/?scriptPath=/users/alice/signin_failures.sx&from=2024-05-01T10:00:00Z&to=2024-05-01T11:00:00Z`,
    { method: "POST", headers: { Accept: "application/json" } },
  );
  const text = await run.text();
  assert.equal(run.status, 200, text);
  // d is outside the window; b in the office network; c another app; e succeeded.
  assert.deepEqual(JSON.parse(text).map((r: { id: string }) => r.id), ["a"]);

  const mappings = await (await s.fetch("alice", `${API}/sigma/mappings`)).json();
  assert.deepEqual(
    mappings.mappings.map((m: { target: string; from: string }) => [m.target, m.from]),
    [
      ["graph", "/system/sigma/graph.json"],
      ["archive", "built-in"],
      ["suite", "built-in"],
    ],
  );
});

Deno.test("POST /sigma/test runs one rule over the records given", async () => {
  await using s = await startTestServer();
  const res = await s.fetch("bob", `${API}/sigma/test`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ rule: rules("signin_failures.yml"), records: SIGNINS }),
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.rule.target, "graph");
  assert.deepEqual(body.matches.map((m: { index: number }) => SIGNINS[m.index]!.id), ["a", "d"]);
  assert.ok(body.matches[0].fields.includes("status.errorCode"));
  const two = await s.fetch("bob", `${API}/sigma/test`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ rule: rules("audit_user_changes.yml"), records: [] }),
  });
  assert.equal(two.status, 400);
  assert.match((await two.json()).message, /one rule, not 2/);
});

Deno.test("sigma routes need a token, refuse bad bodies and name a bad mapping file", async () => {
  await using s = await startTestServer();
  const anonymous = await fetch(`${s.url}${API}/sigma/convert`, { method: "POST", body: "x: 1" });
  assert.equal(anonymous.status, 401);
  await anonymous.body?.cancel();
  const empty = await s.fetch("alice", `${API}/sigma/convert`, { method: "POST", body: " " });
  assert.equal(empty.status, 400);
  await empty.body?.cancel();
  const big = await s.fetch("alice", `${API}/sigma/convert`, {
    method: "POST",
    body: "#".repeat(1024 * 1024 + 1),
  });
  assert.equal(big.status, 413);
  await big.body?.cancel();
  const badTarget = await s.fetch("alice", `${API}/sigma/convert?target=../x`, {
    method: "POST",
    body: rules("suite_alert.yml"),
  });
  assert.equal(badTarget.status, 400);
  await badTarget.body?.cancel();
  await s.write("/system/sigma/suite.json", JSON.stringify({ target: "suite", logsources: 3 }));
  const bad = await s.fetch("alice", `${API}/sigma/convert`, {
    method: "POST",
    body: rules("suite_alert.yml"),
  });
  assert.equal(bad.status, 409);
  const err = await bad.json();
  assert.equal(err.code, "BAD_MAPPING");
  assert.match(err.message, /\/system\/sigma\/suite\.json.*description.*logsources/);
});
