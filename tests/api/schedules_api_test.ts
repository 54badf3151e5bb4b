/**
 * `/schedules` on a real server: a Sigma rule scheduled as alice, run through the supervisor
 * (visible in `GET /queries`), windows following the injected clock, each match alerted once to a
 * real loopback webhook with its Idempotency-Key and signature, backfills doubling nothing, the
 * webhook's secret in no answer, other users kept out.
 */

import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "./server.ts";
import { GRAPH_MAPPING } from "../../connectors/sigma/mapping.ts";
import { signature } from "../../actors/alert_outbox.ts";
import type { Scheduler } from "../../actors/scheduler.ts";
import type { AlertOutbox } from "../../actors/alert_outbox.ts";
import { dataLoss } from "../../routes/schedules.ts";
import { memoryStorage } from "../../actors/test_support.ts";

const API = "/API/v1.0";
const SECRET = "whsec-schedules-test-0123456789";
const RULE = Deno.readTextFileSync(new URL("../sigma/rules/signin_failures.yml", import.meta.url));
const SIGNINS = [
  { id: "a", t: "10:00", app: "Office 365 Exchange Online", ip: "192.0.2.1", code: 50126 },
  { id: "b", t: "10:05", app: "Office 365 Exchange Online", ip: "10.1.4.4", code: 50126 },
  { id: "c", t: "10:09", app: "Teams", ip: "192.0.2.1", code: 50126 },
  { id: "d", t: "11:30", app: "office 365 sharepoint", ip: "192.0.2.9", code: 50126 },
  { id: "e", t: "10:30", app: "Office 365 Exchange Online", ip: "192.0.2.1", code: 0 },
].map((r) => ({
  id: r.id,
  createdDateTime: `2024-05-01T${r.t}:00Z`,
  appDisplayName: r.app,
  ipAddress: r.ip,
  status: { errorCode: r.code },
}));

Deno.test("a scheduled Sigma rule alerts each match once, through the supervisor, to a signed webhook", async () => {
  const received: { key: string | null; sig: string | null; body: string }[] = [];
  const hook = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.text();
    received.push({
      key: req.headers.get("Idempotency-Key"),
      sig: req.headers.get("Trawl-Signature"),
      body,
    });
    return new Response("ok");
  });
  let now = Date.parse("2024-05-01T10:30:00Z");
  let parts: { scheduler: Scheduler; outbox: AlertOutbox } | undefined;
  // The webhook is on loopback: allowed as an admin would allow it.
  await using s = await startTestServer({ "alerts.allowPrivateTargets": "127.0.0.1" }, {
    detections: { clock: () => now, onStart: (p) => parts = p },
  });
  try {
    const mapping = {
      ...GRAPH_MAPPING,
      logsources: GRAPH_MAPPING.logsources.map((l) =>
        l.service === "signinlogs" ? { ...l, source: "/shared/{store}/signins.json" } : l
      ),
    };
    await s.write("/system/sigma/graph.json", JSON.stringify(mapping));
    await s.write("/shared/lab/signins.json", SIGNINS.map((r) => JSON.stringify(r)).join("\n"));
    const texts: string[] = [];
    const call = async (user: string, path: string, init: RequestInit = {}) => {
      const res = await s.fetch(user, `${API}${path}`, {
        ...init,
        headers: { "Content-Type": "application/json" },
      });
      const text = await res.text();
      texts.push(text);
      return { status: res.status, body: text === "" ? null : JSON.parse(text) };
    };
    const created = await call("alice", "/schedules", {
      method: "POST",
      body: JSON.stringify({
        name: "password spray",
        sigma: RULE,
        store: "lab",
        everyMinutes: 15,
        lookbackMinutes: 60,
        webhook: { url: `http://127.0.0.1:${hook.addr.port}/alerts`, secret: SECRET },
      }),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    assert.deepEqual(created.body.webhook.secret, "(hidden)");
    assert.equal(created.body.runAs, "alice");
    assert.equal(created.body.state.nextRun, "2024-05-01T10:30:00.000Z");

    // The first run: [09:30, 10:30) holds a (b: office network, c: another app, e: success).
    await parts!.scheduler.tick();
    await parts!.outbox.deliverDue();
    now = Date.parse("2024-05-01T11:45:00Z");
    // The next: from the last run's end less the look-back, 09:30, to 11:45: a again, and d.
    await parts!.scheduler.tick();
    await parts!.outbox.deliverDue();
    const runs = (await call("alice", `/schedules/${id}/runs`)).body.runs;
    assert.deepEqual(
      runs.map((r: { from: number; to: number; alerts: number }) => [r.from, r.to, r.alerts]),
      [
        [Date.parse("2024-05-01T09:30:00Z"), Date.parse("2024-05-01T11:45:00Z"), 1],
        [Date.parse("2024-05-01T09:30:00Z"), Date.parse("2024-05-01T10:30:00Z"), 1],
      ],
    );
    // Runs are queries of alice, listed as the schedule's.
    const queries = (await call("alice", "/queries")).body;
    const listed = JSON.stringify(queries);
    for (const r of runs) assert.ok(listed.includes(r.queryId), `${r.queryId} listed`);

    // A backfill over all of it finds both again and alerts neither twice.
    const back = await call("alice", `/schedules/${id}/run`, {
      method: "POST",
      body: JSON.stringify({ from: "2024-05-01T09:00:00Z", to: "2024-05-01T12:00:00Z" }),
    });
    assert.equal(back.status, 200);
    assert.deepEqual([back.body.matches, back.body.alerts, back.body.duplicates], [2, 0, 2]);

    assert.deepEqual(received.map((r) => JSON.parse(r.body).record.id), ["a", "d"]);
    for (const r of received) {
      assert.match(r.key!, new RegExp(`^${id}\\|4a7c5b0e-1111-4c3e-9a51-000000000001\\|[ad]$`));
      assert.equal(r.sig, `sha256=${await signature(SECRET, r.body)}`);
      const alert = JSON.parse(r.body);
      assert.equal(alert.rule.level, "medium");
      assert.ok(alert.matched.includes("status.errorCode"));
    }
    const alerts = (await call("alice", `/schedules/${id}/alerts`)).body.alerts;
    assert.deepEqual(alerts.map((a: { state: string }) => a.state), ["delivered", "delivered"]);

    // Others: bob sees none of it; a PUT without a secret keeps it.
    assert.equal((await call("bob", `/schedules/${id}`)).status, 404);
    assert.deepEqual((await call("bob", "/schedules")).body.schedules, []);
    const put = await call("alice", `/schedules/${id}`, {
      method: "PUT",
      body: JSON.stringify({
        name: "password spray",
        sigma: RULE,
        store: "lab",
        cron: "*/10 * * * *",
        lookbackMinutes: 60,
        webhook: { url: `http://127.0.0.1:${hook.addr.port}/alerts` },
      }),
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.webhook.secret, "(hidden)");
    const bad = await call("alice", "/schedules", {
      method: "POST",
      body: JSON.stringify({
        name: "x",
        sigma: "title: k\nlogsource: {product: azure, service: signinlogs}\n" +
          "detection: {keywords: [a], condition: keywords}\n",
        everyMinutes: 5,
        lookbackMinutes: 5,
      }),
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.reason, "KEYWORDS");
    const asBob = await call("alice", "/schedules", {
      method: "POST",
      body: JSON.stringify({
        name: "x",
        script: "VALUES((a: 1))",
        everyMinutes: 5,
        lookbackMinutes: 5,
        runAs: "bob",
      }),
    });
    assert.equal(asBob.status, 403);
    assert.equal((await call("alice", `/schedules/${id}`, { method: "DELETE" })).status, 204);
    assert.ok(texts.every((t) => !t.includes(SECRET)), "the secret is in no answer");
  } finally {
    await hook.shutdown();
  }
});

Deno.test("a run whose query could not read all of its window does not cover it", () => {
  assert.deepEqual(
    dataLoss([
      { level: "WARN", message: "READ_JSON: field 'x' was in none of the 3 records read" },
      {
        level: "WARN",
        message: "datastore 'corp', log 'audits', hour 2026-03-10T08:00:00.000Z given up",
      },
      { level: "ERROR", message: "… 3 hours from … to … given up" },
      { level: "INFO", message: "lost nothing" },
    ]),
    [
      "datastore 'corp', log 'audits', hour 2026-03-10T08:00:00.000Z given up",
      "… 3 hours from … to … given up",
    ],
  );
});

Deno.test("a look-back shorter than the lag of the cloud log it reads is refused, naming both", async () => {
  await using s = await startTestServer();
  await s.write(
    "/system/datastores/corp.json",
    JSON.stringify({
      type: "CLOUDAPI",
      cloudapiStore: {
        clientId: "11111111-2222-3333-4444-555555555555",
        tenantId: "contoso.onmicrosoft.com",
        secret: "a-secret-of-sufficient-length",
        directoryLogs: "signins:signins|2 h|15 min",
      },
    }),
  );
  const create = (lookbackMinutes: number) =>
    s.fetch("alice", `${API}/schedules`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        name: "spray",
        sigma: RULE,
        store: "corp",
        everyMinutes: 15,
        lookbackMinutes,
      }),
    });
  const short = await create(60);
  assert.equal(short.status, 400);
  const err = await short.json();
  assert.equal(err.code, "LOOKBACK_TOO_SHORT");
  assert.match(
    err.message,
    /lookbackMinutes 60 .* 'directory_service\/signins' of datastore 'corp' \(120 minutes\)/,
  );
  assert.ok(!JSON.stringify(err).includes("a-secret-of-sufficient-length"));
  const long = await create(180);
  assert.equal(long.status, 201);
  await long.body?.cancel();
});

Deno.test("two servers on one storage: each due run runs on one of them, each match alerted once", async () => {
  await using kv = await memoryStorage();
  let now = Date.parse("2026-03-09T12:00:00Z");
  const parts: { scheduler: Scheduler; outbox: AlertOutbox }[] = [];
  const detections = (server: string) => ({
    storage: kv,
    server,
    clock: () => now,
    onStart: (p: { scheduler: Scheduler; outbox: AlertOutbox }) => parts.push(p),
  });
  await using one = await startTestServer({}, { detections: detections("one") });
  await using two = await startTestServer({}, { detections: detections("two") });
  const created = await one.fetch("alice", `${API}/schedules`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      name: "everyone",
      everyMinutes: 5,
      lookbackMinutes: 10,
      script: "init(from::TIMESTAMP, to::TIMESTAMP);\nVALUES((id: 'r1'), (id: 'r2'))",
    }),
  });
  const { id } = await created.json();
  // The other server sees it (one storage).
  assert.equal((await two.fetch("alice", `${API}/schedules/${id}`)).status, 200);
  for (let i = 0; i < 3; i++) {
    const ran = await Promise.all(parts.map((p) => p.scheduler.tick()));
    assert.equal(ran.flat().length, 1, `round ${i}: one server ran it`);
    now += 5 * 60_000;
  }
  const runs = (await (await two.fetch("alice", `${API}/schedules/${id}/runs`)).json()).runs;
  assert.equal(runs.length, 3);
  assert.deepEqual(
    runs.map((r: { alerts: number }) => r.alerts).reduce((a: number, b: number) => a + b),
    2,
  );
  const alerts = (await (await one.fetch("alice", `${API}/schedules/${id}/alerts`)).json()).alerts;
  assert.deepEqual(alerts.map((a: { key: string }) => a.key.split("|")[2]).sort(), ["r1", "r2"]);
});

Deno.test("webhooks of the server's own network are refused at creation and change, unless a setting allows them", async () => {
  const body = (url: string) =>
    JSON.stringify({
      name: "hooked",
      everyMinutes: 5,
      lookbackMinutes: 10,
      script: "init(from::TIMESTAMP, to::TIMESTAMP);\nVALUES((id: 'r1'))",
      webhook: { url, secret: SECRET },
    });
  const send = async (s: TestServer, method: string, path: string, url: string) => {
    const res = await s.fetch("alice", `${API}${path}`, {
      method,
      headers: { "Content-Type": "application/json" },
      body: body(url),
    });
    return { status: res.status, body: await res.json() };
  };
  {
    await using s = await startTestServer();
    const refused: [string, RegExp][] = [
      ["http://169.254.169.254/latest/meta-data/", /the cloud metadata address/],
      ["http://127.0.0.1:9000/hook", /127\.0\.0\.1 is a loopback address/],
      ["http://[::1]/hook", /loopback address/],
      ["http://10.1.2.3/hook", /a private address/],
      ["http://192.168.1.20/hook", /a private address/],
      ["http://localhost:8080/hook", /a loopback name/],
      ["http://[fe80::1]/hook", /link-local/],
    ];
    for (const [url, why] of refused) {
      const r = await send(s, "POST", "/schedules", url);
      assert.equal(r.status, 400, url);
      assert.equal(r.body.code, "WEBHOOK_REFUSED", url);
      assert.match(r.body.message, why);
      assert.match(r.body.message, /alerts\.allowPrivateTargets/);
    }
    const ftp = await send(s, "POST", "/schedules", "ftp://hooks.example.com/x");
    assert.equal(ftp.status, 400);
    // A public one is taken; changing it to a private one is refused and keeps the old one.
    const ok = await send(s, "POST", "/schedules", "https://hooks.example.com/trawl");
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const changed = await send(s, "PUT", `/schedules/${ok.body.id}`, "http://172.16.0.9/x");
    assert.equal(changed.status, 400);
    assert.match(changed.body.message, /172\.16\.0\.9 is a private address/);
    const kept = await (await s.fetch("alice", `${API}/schedules/${ok.body.id}`)).json();
    assert.equal(kept.webhook.url, "https://hooks.example.com/trawl");
  }
  {
    await using s = await startTestServer({
      "alerts.allowPrivateTargets": "127.0.0.1:9000, 10.0.0.0/8",
    });
    assert.equal((await send(s, "POST", "/schedules", "http://127.0.0.1:9000/h")).status, 201);
    assert.equal((await send(s, "POST", "/schedules", "http://10.9.8.7/h")).status, 201);
    const other = await send(s, "POST", "/schedules", "http://127.0.0.1:9001/h");
    assert.equal(other.status, 400);
    const metadata = await send(s, "POST", "/schedules", "http://169.254.169.254/");
    assert.equal(metadata.status, 400);
  }
});
