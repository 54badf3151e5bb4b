import assert from "node:assert/strict";
import { startTestServer } from "../api/server.ts";
import type { SchemeRegistry } from "../../connectors/file/registry.ts";
import { cloudApiFactory } from "../../connectors/cloudapi/cloudapi_datastore.ts";
import { ConnectorPool } from "../../actors/connector_pool.ts";
import { FetchFlights } from "../../connectors/cloudapi/fetch_flights.ts";
import { SubscriptionMemory } from "../../connectors/cloudapi/subscriptions.ts";
import { TokenProvider } from "../../connectors/cloudapi/token_provider.ts";
import { cloudHomeAccess } from "../../home/cloud_access.ts";
import { homeLayout } from "../../home/layout.ts";
import { CloudEmulator } from "../emulator/emulator.ts";
import { baseStore, CLIENT, HOUR, NOW, SECRET, TENANT } from "./harness.ts";

Deno.test("a synchronous query reads directory audits from the emulator through the HTTP API", async () => {
  const emulator = new CloudEmulator({
    tenants: [{ tenantId: TENANT, clientId: CLIENT, secret: SECRET }],
    seed: { from: NOW - 6 * HOUR, to: NOW, perHour: 5 },
    now: () => NOW,
    graphPageSize: 3,
  });
  await emulator.start();
  await using s = await startTestServer();
  const pool = new ConnectorPool();
  try {
    await Deno.writeTextFile(`${s.home}/conf/license`, "edition = enterprise\n");
    await s.write(
      "/system/datastores/corp.json",
      JSON.stringify({
        type: "CLOUDAPI",
        cloudapiStore: baseStore({ acl: { users: { alice: ["read"] }, groups: {} } }),
      }),
    );
    (s.deps.datastores as SchemeRegistry).register(
      "cloudapi",
      cloudApiFactory({
        ...cloudHomeAccess(homeLayout(s.home)),
        tokens: new TokenProvider(),
        settings: { loginHost: emulator.url, graphHost: emulator.url, manageHost: emulator.url },
        now: () => NOW,
        pacer: pool,
        flights: new FetchFlights(),
        subscriptions: new SubscriptionMemory(),
      }),
    );
    const from = new Date(NOW - 3 * HOUR - 30 * 60_000).toISOString();
    const to = new Date(NOW - 30 * 60_000).toISOString();
    const script =
      `READ_JSON(src: 'cloudapi://corp/directory_service/audits/$yyyy$/$MM$/$dd$/*', ` +
      `from: TIMESTAMP('${from}'), to: TIMESTAMP('${to}'))`;
    const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: { "Content-Type": "text/vnd.engine.script" },
      body: script,
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.ok(!text.includes(SECRET));
    const rows = JSON.parse(text) as { id: string }[];
    const expected = emulator.data(TENANT).audits
      .filter((a) => a.time >= Date.parse(from) && a.time < Date.parse(to))
      .map((a) => String(a.record.id)).sort();
    assert.ok(expected.length > 0);
    assert.deepEqual(rows.map((r) => r.id).sort(), expected);
    // The query's stats count the cloud requests made for it, and /metrics' pool per family.
    const id = res.headers.get("Trawl-Query-Id")!;
    const status = await (await s.fetch("alice", `/API/v1.0/queries/${id}`)).json();
    assert.ok(status.stats.cloudRequests > 0, JSON.stringify(status.stats));
    assert.equal(status.stats.rowsOut, expected.length);
    assert.equal(pool.counters.get("directory")?.requests, status.stats.cloudRequests);
    const denied = await s.fetch("bob", "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: { "Content-Type": "text/vnd.engine.script" },
      body: script,
    });
    // bob is outside the store's acl: to him it is as a store that does not exist.
    const deniedText = await denied.text();
    assert.equal(denied.status, 404, deniedText);
    assert.match(deniedText, /that you may read/);
  } finally {
    pool.stop();
    await emulator.stop();
  }
});
