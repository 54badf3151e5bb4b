/**
 * A scheduled Sigma rule over a real `cloudapi://` store on the cloud emulator, a quarter of whose
 * sign-ins arrive up to two hours late: run every 15 minutes for six hours of the emulator's
 * clock (the store's and the scheduler's clock are one), with an outage of three hours (longer than
 * the look-back) in the middle, every match is alerted exactly once — the late ones when they arrive, those of the
 * outage after it — while the store re-fetches the hours within its lag.
 */

import assert from "node:assert/strict";
import { cloudServer, readScript, storeDefinition } from "../cloudapi/http_harness.ts";
import { HOUR, NOW, TENANT } from "../cloudapi/harness.ts";
import type { Seeded } from "../emulator/seed.ts";
import type { Scheduler } from "../../actors/scheduler.ts";
import type { AlertOutbox } from "../../actors/alert_outbox.ts";
import { join } from "node:path";
import { homeLayout } from "../../home/layout.ts";

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

/** Alice's schedule of RULE over `store`, every 15 minutes with `lookbackMinutes`. */
async function scheduleRule(
  c: { readonly s: { fetch(user: string, path: string, init?: RequestInit): Promise<Response> } },
  store: string,
  name: string,
  lookbackMinutes: number,
): Promise<{ id: string }> {
  const created = await c.s.fetch("alice", "/API/v1.0/schedules", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name, sigma: RULE, store, everyMinutes: 15, lookbackMinutes }),
  });
  const schedule = await created.json();
  assert.equal(created.status, 201, JSON.stringify(schedule));
  return schedule;
}

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
  const schedule = await scheduleRule(c, store.name, "wrong passwords", 150);
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
  // After the outage the first run read its look-back before where the last one before it ended;
  // the hours before that were final when that run read them (fetched after their lag), so none
  // was read again.
  const after = runs.find((r) => r.to === NOW + 3 * HOUR)!;
  assert.equal(after.from, NOW - 150 * MIN);
  assert.equal(after.late, undefined);
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
  const schedule = await scheduleRule(c, store.name, "late", 120);
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

/**
 * Two sign-ins published 6 hours after their event time, 4 hours past the log's declared lag (2 h),
 * in hours the schedule read and the store fetched final (after the lag) before they came: the
 * first is stored when the administrator archives its hour and a user's query fetches it anew (the
 * hour is final again: only its changed stamp brings it back), the second when the administrator
 * raises the log's lag to 8 h (the hour is no longer final: the schedule's read fetches it). Each
 * is alerted exactly once, by the scheduled runs, without a backfill; `lateHorizonMs` 0 (only the
 * look-back read) misses both.
 */
async function lateBeyondLag(lateHorizonMs?: number) {
  let clock = { now: NOW };
  let parts: { scheduler: Scheduler; outbox: AlertOutbox } | undefined;
  await using c = await cloudServer({
    detections: {
      clock: () => clock.now,
      onStart: (p) => parts = p,
      ...(lateHorizonMs !== undefined ? { lateHorizonMs } : {}),
    },
  });
  const definition = (lag: string) =>
    storeDefinition({ directoryLogs: `signins:signins|${lag}|15 min` });
  const store = await c.addStore(
    { seed: { from: NOW - 4 * HOUR, to: NOW + 10 * HOUR, perHour: 4, lateFraction: 0 } },
    definition("2 h"),
  );
  clock = store.clock;
  const hour = Math.floor(NOW / HOUR) * HOUR + HOUR;
  const signIns = store.emulator.data(TENANT).signIns as Seeded<Record<string, unknown>>[];
  const model = signIns.find((s) =>
    (s.record.signInEventTypes as string[]).includes("interactiveUser")
  )!;
  for (const [id, time] of [["archived", hour + MIN], ["lag-raised", hour + HOUR + MIN]] as const) {
    signIns.push({
      time,
      availableAt: time + 6 * HOUR,
      record: {
        ...model.record,
        id,
        createdDateTime: new Date(time).toISOString(),
        status: { errorCode: 50126 },
      },
    });
  }
  clock.now = hour - 30 * MIN;
  const schedule = await scheduleRule(c, store.name, "late", 120);
  const alerted = async (id: string) =>
    (await parts!.outbox.list({ schedule: schedule.id })).filter((a) =>
      (a.payload.record as { id: string }).id === id
    ).length;
  const ticks = async (until: number) => {
    for (; clock.now <= until; clock.now += 15 * MIN) {
      for (const r of await parts!.scheduler.tick()) assert.equal(r.state, "succeeded", r.error);
    }
  };
  // Both published (hour + 6 h 1 min, hour + 7 h 1 min) long after their hours were final.
  await ticks(hour + 7 * HOUR + 15 * MIN);
  assert.equal(await alerted("archived"), 0, "not stored: its hour was final when it came");
  assert.equal(await alerted("lag-raised"), 0);
  // The administrator archives the first hour's file; a user's query reads the hour: fetched
  // again (after its lag: final again), with the late sign-in.
  const folder = join(homeLayout(c.s.home).cloudApiDir, store.name);
  const stamp = new Date(hour).toISOString().slice(0, 13).replace(/[-T]/g, "");
  let archived = 0;
  for await (const f of walk(folder)) {
    if (f.includes(stamp)) {
      await Deno.remove(f);
      archived++;
    }
  }
  assert.equal(archived, 2, "the hour's file and its state");
  const read = await c.syncQuery(
    readScript(store.name, { path: "directory_service/signins" } as never, hour, hour + HOUR),
  );
  assert.ok(read.ids.includes("archived"), read.bodies.join("\n"));
  await ticks(clock.now + HOUR);
  const first = await alerted("archived");
  // The administrator raises the log's lag: the second hour is no longer final.
  await c.s.write(
    `/system/datastores/${store.name}.json`,
    JSON.stringify({ type: "CLOUDAPI", cloudapiStore: definition("8 h") }),
  );
  await ticks(clock.now + HOUR);
  const second = await alerted("lag-raised");
  const ids = (await parts!.outbox.list({ schedule: schedule.id })).map((a) =>
    String((a.payload.record as { id: string }).id)
  );
  assert.equal(new Set(ids).size, ids.length, "no match alerted twice");
  const runs = await parts!.scheduler.runs(schedule.id, 1000);
  return { first, second, runs };
}

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) yield* walk(path);
    else yield path;
  }
}

Deno.test("a record published hours past the lag is alerted once when its hour's stored records change", async () => {
  const { first, second, runs } = await lateBeyondLag();
  assert.equal(first, 1, "the archived hour's late sign-in");
  assert.equal(second, 1, "the late sign-in of the hour whose lag was raised");
  assert.ok(runs.every((r) => r.kind === "scheduled"), "no backfill");
  assert.ok(runs.some((r) => (r.late ?? []).length > 0), "hours read again");
});

Deno.test("with the late horizon 0 (the look-back only) those records are missed", async () => {
  const { first, second } = await lateBeyondLag(0);
  assert.equal(first, 0);
  assert.equal(second, 0);
});
