/**
 * Two servers on one KV storage, each with its own connector (pool, flights, tokens) and home,
 * over one cloud emulator: the cloud hours are fetched into the KV (either server reads what the
 * other fetched) and the schedule's state, with the fetch state of each hour it read, is in the
 * same KV. A sign-in published 6 h after its time, 4 h past the log's lag, is alerted exactly once
 * when the administrator raises the lag and its hour is fetched again; each round exactly one
 * server runs the schedule (its lease).
 */

import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "../api/server.ts";
import { CloudEmulator } from "../emulator/emulator.ts";
import type { Seeded } from "../emulator/seed.ts";
import { CLIENT, HOUR, NOW, SECRET, TENANT } from "../cloudapi/harness.ts";
import { emulatorDeps, storeDefinition } from "../cloudapi/http_harness.ts";
import { memoryStorage } from "../../actors/test_support.ts";
import type { Scheduler } from "../../actors/scheduler.ts";
import type { AlertOutbox } from "../../actors/alert_outbox.ts";
import type { SchemeRegistry } from "../../connectors/file/registry.ts";
import { openCloudApiStore } from "../../connectors/cloudapi/cloudapi_datastore.ts";
import { ConnectorPool } from "../../actors/connector_pool.ts";
import { cleanUp } from "../support/deadline.ts";

const MIN = 60_000;
const RULE = `title: Wrong passwords
id: 6f1f0000-0000-4000-8000-000000000026
level: medium
logsource: {product: azure, service: signinlogs}
detection:
    selection:
        ResultType: 50126
    condition: selection
`;

Deno.test("two servers on one KV: a record published past the lag is alerted once, by one of them", async () => {
  await using kv = await memoryStorage();
  const clock = { now: NOW };
  const emulator = new CloudEmulator({
    tenants: [{ tenantId: TENANT, clientId: CLIENT, secret: SECRET }],
    seed: { from: NOW - 4 * HOUR, to: NOW + 10 * HOUR, perHour: 4, lateFraction: 0 },
    now: () => clock.now,
    graphPageSize: 2,
    contentPageSize: 2,
  });
  await emulator.start();
  const parts: { scheduler: Scheduler; outbox: AlertOutbox }[] = [];
  const servers: TestServer[] = [];
  const pools: ConnectorPool[] = [];
  const definition = (lag: string) =>
    JSON.stringify({
      type: "CLOUDAPI",
      cloudapiStore: storeDefinition({ directoryLogs: `signins:signins|${lag}|15 min` }),
    });
  try {
    for (const name of ["one", "two"]) {
      const s = await startTestServer({ "query.maxRunning": "32" }, {
        detections: {
          storage: kv,
          server: name,
          clock: () => clock.now,
          onStart: (p) => parts.push(p),
        },
      });
      servers.push(s);
      await Deno.writeTextFile(`${s.home}/conf/license`, "edition = enterprise\n");
      const pool = new ConnectorPool();
      pools.push(pool);
      const deps = { ...emulatorDeps(s.home, emulator, pool, clock), hourStorage: kv };
      (s.deps.datastores as SchemeRegistry).register(
        "cloudapi",
        (uri, user) => openCloudApiStore(uri, user, deps),
      );
      await s.write("/system/datastores/corp.json", definition("2 h"));
    }
    const hour = Math.floor(NOW / HOUR) * HOUR + HOUR;
    const signIns = emulator.data(TENANT).signIns as Seeded<Record<string, unknown>>[];
    const model = signIns.find((s) =>
      (s.record.signInEventTypes as string[]).includes("interactiveUser")
    )!;
    signIns.push({
      time: hour + MIN,
      availableAt: hour + MIN + 6 * HOUR,
      record: {
        ...model.record,
        id: "very-late",
        createdDateTime: new Date(hour + MIN).toISOString(),
        status: { errorCode: 50126 },
      },
    });
    clock.now = hour - 30 * MIN;
    const created = await servers[0]!.fetch("alice", "/API/v1.0/schedules", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        name: "late",
        sigma: RULE,
        store: "corp",
        everyMinutes: 15,
        lookbackMinutes: 120,
      }),
    });
    const schedule = await created.json();
    assert.equal(created.status, 201, JSON.stringify(schedule));
    const alerted = async () =>
      (await parts[1]!.outbox.list({ schedule: schedule.id })).filter((a) =>
        (a.payload.record as { id: string }).id === "very-late"
      ).length;
    const rounds = async (until: number) => {
      for (; clock.now <= until; clock.now += 15 * MIN) {
        const ran = (await Promise.all(parts.map((p) => p.scheduler.tick()))).flat();
        assert.equal(ran.length, 1, "one server ran the round");
        assert.equal(ran[0]!.state, "succeeded", ran[0]!.error);
      }
    };
    await rounds(hour + 7 * HOUR);
    assert.equal(await alerted(), 0, "its hour was final when it was published");
    // The administrator raises the log's lag (on both servers): the hour is not final any more,
    // a run reads it, the store fetches it again (into the KV), the run alerts the sign-in.
    for (const s of servers) await s.write("/system/datastores/corp.json", definition("8 h"));
    await rounds(clock.now + 2 * HOUR);
    assert.equal(await alerted(), 1);
    const ids = (await parts[0]!.outbox.list({ schedule: schedule.id })).map((a) =>
      String((a.payload.record as { id: string }).id)
    );
    assert.equal(new Set(ids).size, ids.length, "no match alerted twice");
    // The state both servers keep: the fetch state of each hour read, in the KV.
    const state = await parts[1]!.scheduler.state(schedule.id);
    assert.ok(Object.keys(state.hours ?? {}).some((k) => k === `corp/signins/${hour}`));
  } finally {
    await cleanUp([
      ...pools.map((p) => () => p.stop()),
      ...servers.map((s) => () => s[Symbol.asyncDispose]()),
      () => emulator.stop(),
    ]);
  }
});
