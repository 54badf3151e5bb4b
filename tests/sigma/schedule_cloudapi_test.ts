/**
 * A scheduled Sigma rule over a real `cloudapi://` store on the cloud emulator, a quarter of whose
 * sign-ins arrive up to two hours late: run every 15 minutes for six hours of the emulator's
 * clock (the store's and the scheduler's clock are one), with an outage of three hours (longer than
 * the look-back) in the middle, every match is alerted exactly once — the late ones when they arrive, those of the
 * outage after it — while the store re-fetches the hours within its lag.
 */

import assert from "node:assert/strict";
import { cloudServer, storeDefinition } from "../cloudapi/http_harness.ts";
import { HOUR, NOW, TENANT } from "../cloudapi/harness.ts";
import type { Seeded } from "../emulator/seed.ts";
import type { Scheduler } from "../../actors/scheduler.ts";
import type { AlertOutbox } from "../../actors/alert_outbox.ts";

const MIN = 60_000;
const RULE = `title: Wrong passwords
id: 6f1f0000-0000-4000-8000-000000000021
level: medium
logsource: {product: azure, service: signinlogs}
detection:
    selection:
        ResultType: 50126
    condition: selection
`;

Deno.test("a scheduled rule over late cloud records and an outage alerts every match once", async () => {
  let clock = { now: NOW };
  let parts: { scheduler: Scheduler; outbox: AlertOutbox } | undefined;
  await using c = await cloudServer({
    detections: { clock: () => clock.now, onStart: (p) => parts = p },
  });
  const store = await c.addStore(
    {
      seed: { from: NOW - 4 * HOUR, to: NOW + 2 * HOUR, perHour: 30, lateFraction: 0.25 },
    },
    storeDefinition({ directoryLogs: "signins:signins|2 h|15 min" }),
  );
  clock = store.clock;
  const start = NOW - 2 * HOUR;
  clock.now = start;
  const created = await c.s.fetch("alice", "/API/v1.0/schedules", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      name: "wrong passwords",
      sigma: RULE,
      store: store.name,
      everyMinutes: 15,
      lookbackMinutes: 150,
    }),
  });
  const schedule = await created.json();
  assert.equal(created.status, 201, JSON.stringify(schedule));
  const end = NOW + 5 * HOUR;
  for (let t = start; t <= end; t += 15 * MIN) {
    // An outage: no server runs between NOW and NOW + 3 h.
    if (t > NOW && t < NOW + 3 * HOUR) continue;
    clock.now = t;
    const runs = await parts!.scheduler.tick();
    for (const r of runs) assert.equal(r.state, "succeeded", r.error);
  }
  const runs = await parts!.scheduler.runs(schedule.id, 1000);
  const firstFrom = Math.min(...runs.map((r) => r.from));
  const expected = store.emulator.data(TENANT).signIns.filter((s) =>
    s.time >= firstFrom && s.time < NOW + 2 * HOUR &&
    (s.record.signInEventTypes as string[]).includes("interactiveUser") &&
    (s.record.status as { errorCode: number }).errorCode === 50126
  );
  assert.ok(expected.some((s) => s.availableAt > s.time + HOUR), "some matches arrived late");
  const alerts = await parts!.outbox.list({ schedule: schedule.id });
  const ids = alerts.map((a) => String((a.payload.record as { id: string }).id));
  assert.equal(new Set(ids).size, ids.length, "no match alerted twice");
  assert.deepEqual(ids.sort(), expected.map((s) => String(s.record.id)).sort());
  assert.ok(runs.some((r) => r.duplicates > 0), "windows overlapped");
  // After the outage the first run reached back to where the last one before it ended, less the
  // look-back or, longer here, the reach of the cloud hours not final then (lag 2 h + update
  // 15 min + 2 h): records of before the outage arrived during it.
  const after = runs.find((r) => r.to === NOW + 3 * HOUR)!;
  assert.equal(after.from, NOW - (120 + 15 + 120) * MIN);
});

Deno.test("a late record in a cloud hour evaluated before it arrived, past the look-back, is alerted exactly once", async () => {
  let clock = { now: NOW };
  let parts: { scheduler: Scheduler; outbox: AlertOutbox } | undefined;
  await using c = await cloudServer({
    detections: { clock: () => clock.now, onStart: (p) => parts = p },
  });
  const store = await c.addStore(
    { seed: { from: NOW - 4 * HOUR, to: NOW + 6 * HOUR, perHour: 6, lateFraction: 0 } },
    storeDefinition({ directoryLogs: "signins:signins|2 h|15 min" }),
  );
  clock = store.clock;
  // One sign-in at 1 minute into an hour that arrives 5 minutes before the hour's lag ends: 2 h 55
  // after its event time, so later than the look-back (the lag, 2 h) reaches.
  const hour = Math.floor(NOW / HOUR) * HOUR + HOUR;
  const signIns = store.emulator.data(TENANT).signIns as Seeded<Record<string, unknown>>[];
  const model = signIns.find((s) =>
    (s.record.signInEventTypes as string[]).includes("interactiveUser")
  )!;
  const time = hour + MIN;
  signIns.push({
    time,
    availableAt: hour + HOUR + 2 * HOUR - 5 * MIN,
    record: {
      ...model.record,
      id: "late-sign-in",
      createdDateTime: new Date(time).toISOString(),
      status: { errorCode: 50126 },
    },
  });
  clock.now = hour - 30 * MIN;
  const created = await c.s.fetch("alice", "/API/v1.0/schedules", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      name: "late",
      sigma: RULE,
      store: store.name,
      everyMinutes: 15,
      lookbackMinutes: 120,
    }),
  });
  const schedule = await created.json();
  assert.equal(created.status, 201, JSON.stringify(schedule));
  let alertedAt: number | undefined;
  for (let t = clock.now; t <= hour + 7 * HOUR; t += 15 * MIN) {
    clock.now = t;
    for (const r of await parts!.scheduler.tick()) assert.equal(r.state, "succeeded", r.error);
    const found = (await parts!.outbox.list({ schedule: schedule.id })).filter((a) =>
      (a.payload.record as { id: string }).id === "late-sign-in"
    );
    if (found.length > 0) alertedAt ??= t;
    assert.ok(found.length <= 1, "alerted once");
  }
  assert.ok(alertedAt !== undefined, "the late record was alerted");
  // It was alerted by a run whose look-back alone started after its event time.
  const runs = await parts!.scheduler.runs(schedule.id, 1000);
  const run = runs.find((r) => r.to === alertedAt)!;
  assert.ok(alertedAt - 15 * MIN - 120 * MIN > time, "past the look-back");
  assert.ok(run.from <= time);
  assert.ok(
    runs.some((r) => r.duplicates > 0),
    "hours read again counted their matches as duplicates",
  );
  // No match of the whole store alerted twice.
  const ids = (await parts!.outbox.list({ schedule: schedule.id })).map((a) =>
    String((a.payload.record as { id: string }).id)
  );
  assert.equal(new Set(ids).size, ids.length);
});
