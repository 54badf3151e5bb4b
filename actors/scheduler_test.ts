import assert from "node:assert/strict";
import {
  canonicalJson,
  type CloudHour,
  lateWindows,
  nextDue,
  parseCron,
  type RunQuery,
  type Schedule,
  Scheduler,
  SCHEDULES,
} from "./scheduler.ts";
import { AlertOutbox } from "./alert_outbox.ts";
import { memoryStorage } from "./test_support.ts";
import type { Storage } from "../engine/mod.ts";

const MIN = 60_000;
const T0 = Date.parse("2026-03-09T12:00:00Z");

interface Event {
  readonly time: number;
  /** When the store has it (late records arrive after their time). */
  readonly availableAt: number;
  readonly record: Record<string, unknown>;
}

/** A store of records and the query of a schedule over it: records of the window that have arrived. */
function source(events: Event[], clock: () => number) {
  const windows: { from: number; to: number }[] = [];
  let failNext = false;
  let n = 0;
  const runQuery: RunQuery = (_s, window) => {
    windows.push(window);
    if (failNext) {
      failNext = false;
      return Promise.reject(new Error("the store could not be read"));
    }
    const records = events.filter((e) =>
      e.time >= window.from && e.time < window.to && e.availableAt <= clock()
    ).map((e) => e.record);
    return Promise.resolve({ queryId: `q${++n}`, rule: { id: "rule-1", title: "t" }, records });
  };
  return { runQuery, windows, failOnce: () => failNext = true };
}

async function addSchedule(storage: Storage, s: Partial<Schedule> = {}): Promise<Schedule> {
  const schedule: Schedule = {
    id: "s1",
    name: "failures",
    owner: "alice",
    runAs: "alice",
    script: "x",
    everyMinutes: 15,
    lookbackMinutes: 60,
    enabled: true,
    dedupDays: 30,
    created: T0,
    ...s,
  };
  await storage.put(
    [...SCHEDULES, schedule.id],
    new TextEncoder().encode(JSON.stringify(schedule)),
  );
  return schedule;
}

const ev = (id: string, time: number, late = 0, extra: Record<string, unknown> = {}): Event => ({
  time,
  availableAt: time + late,
  record: { id, ...extra },
});

async function alertedIds(storage: Storage) {
  const outbox = new AlertOutbox({
    storage,
    clock: () => 0,
    webhookOf: () => Promise.resolve(undefined),
  });
  return (await outbox.list()).map((a) => (a.payload.record as { id: string }).id).sort();
}

Deno.test("overlapping windows and late records: every match alerted once", async () => {
  await using storage = await memoryStorage();
  let now = T0;
  const events = [
    ev("a", T0 - 50 * MIN),
    ev("b", T0 - 10 * MIN),
    ev("late", T0 - 30 * MIN, 40 * MIN), // arrives at T0 + 10 min
  ];
  const src = source(events, () => now);
  const scheduler = new Scheduler({
    storage,
    clock: () => now,
    server: "one",
    runQuery: src.runQuery,
  });
  await addSchedule(storage);

  let runs = await scheduler.tick();
  assert.equal(runs.length, 1);
  assert.deepEqual([runs[0]!.from, runs[0]!.to], [T0 - 60 * MIN, T0]);
  assert.equal(runs[0]!.alerts, 2);
  assert.equal(runs[0]!.queryId, "q1");

  now = T0 + 5 * MIN;
  assert.deepEqual(await scheduler.tick(), [], "not due before 15 minutes");

  now = T0 + 15 * MIN;
  runs = await scheduler.tick();
  // From the last window's end less the look-back, [T0-60, T0+15): a and b again (not
  // doubled) and the late record, which arrived since.
  assert.deepEqual([runs[0]!.from, runs[0]!.to], [T0 - 60 * MIN, T0 + 15 * MIN]);
  assert.equal(runs[0]!.alerts, 1);
  assert.equal(runs[0]!.duplicates, 2);
  assert.deepEqual(await alertedIds(storage), ["a", "b", "late"]);
  assert.deepEqual((await scheduler.runs("s1")).map((r) => r.queryId), ["q2", "q1"]);
});

Deno.test("after downtime and after a failed run the next run reaches back to the last success", async () => {
  await using storage = await memoryStorage();
  let now = T0;
  const events = [
    ev("before", T0 - 5 * MIN),
    ev("down1", T0 + 2 * 60 * MIN),
    ev("down2", T0 + 4 * 60 * MIN),
  ];
  const src = source(events, () => now);
  const scheduler = new Scheduler({
    storage,
    clock: () => now,
    server: "one",
    runQuery: src.runQuery,
  });
  await addSchedule(storage);
  await scheduler.tick();
  // Five hours without a run; then the first one fails.
  now = T0 + 5 * 60 * MIN;
  src.failOnce();
  const failed = await scheduler.tick();
  assert.equal(failed[0]!.state, "failed");
  assert.equal(failed[0]!.error, "the store could not be read");
  assert.equal((await scheduler.state("s1")).coveredTo, T0);
  now += 15 * MIN;
  const [run] = await scheduler.tick();
  assert.equal(run!.state, "succeeded");
  assert.equal(
    run!.from,
    T0 - 60 * MIN,
    "from the end of the last successful window less the look-back",
  );
  assert.deepEqual(await alertedIds(storage), ["before", "down1", "down2"]);
});

Deno.test("two servers on one storage: one runs each due run, nothing doubled", async () => {
  await using storage = await memoryStorage();
  let now = T0;
  const events = [ev("x", T0 - 20 * MIN), ev("y", T0 - 10 * MIN)];
  const a = source(events, () => now);
  const b = source(events, () => now);
  const one = new Scheduler({ storage, clock: () => now, server: "one", runQuery: a.runQuery });
  const two = new Scheduler({ storage, clock: () => now, server: "two", runQuery: b.runQuery });
  await addSchedule(storage);
  for (let i = 0; i < 4; i++) {
    const [r1, r2] = await Promise.all([one.tick(), two.tick()]);
    assert.equal(r1.length + r2.length, 1, `round ${i}: exactly one server ran`);
    now += 15 * MIN;
  }
  assert.equal(a.windows.length + b.windows.length, 4);
  assert.deepEqual(await alertedIds(storage), ["x", "y"]);
  assert.equal((await one.runs("s1")).length, 4);
});

Deno.test("lateWindows(): changed or due hours before the window, contiguous ones joined", () => {
  const H = 60 * MIN;
  const hour = (i: number, stamp: string | null, due = false): CloudHour => ({
    key: `s/l/${i}`,
    hour: T0 + i * H,
    end: T0 + (i + 1) * H,
    stamp,
    due,
  });
  const evaluated = { "s/l/0": "a", "s/l/1": "b", "s/l/2": "c", "s/l/3": "d", "s/l/5": "f" };
  const main = { from: T0 + 5 * H + 30 * MIN, to: T0 + 8 * H };
  const hours = [
    hour(0, "a"),
    hour(1, "B"), // changed
    hour(2, "c", true), // due (not final)
    hour(3, "d"),
    hour(4, null, true), // never fetched
    hour(5, "F"), // changed, straddles the window's start: the window begins at its start
    hour(6, "g"),
  ];
  assert.deepEqual(lateWindows(hours, evaluated, main, T0), [
    { from: T0 + 4 * H, to: main.to },
    { from: T0 + H, to: T0 + 3 * H },
  ]);
  // Nothing before `since` (the schedule's first window).
  assert.deepEqual(lateWindows(hours, evaluated, main, T0 + 2 * H + 30 * MIN), [
    { from: T0 + 4 * H, to: main.to },
    { from: T0 + 2 * H + 30 * MIN, to: T0 + 3 * H },
  ]);
  assert.deepEqual(lateWindows(hours.slice(0, 1), evaluated, main, T0), [main]);
});

Deno.test("two servers on one storage: a changed cloud hour is read again once, by one of them", async () => {
  await using storage = await memoryStorage();
  const H = 60 * MIN;
  let now = T0;
  // One stored cloud hour, T0 - 8 h: its stamp changes when a late record is stored in it.
  const stored: Event[] = [ev("early", T0 - 8 * H + MIN)];
  let stamp = "1";
  const cloudHours = () =>
    Promise.resolve([{ key: "s/l/h", hour: T0 - 8 * H, end: T0 - 7 * H, stamp, due: false }]);
  const a = source(stored, () => now);
  const b = source(stored, () => now);
  const options = { storage, clock: () => now, cloudHours, lateHorizonMs: 86_400_000 };
  const one = new Scheduler({ ...options, server: "one", runQuery: a.runQuery });
  const two = new Scheduler({ ...options, server: "two", runQuery: b.runQuery });
  // Its first windows (the look-back, 8 h) read the hour whole; the next ones, an hour later
  // each, no longer reach it.
  await addSchedule(storage, { lookbackMinutes: 480 });
  const round = async () => {
    const [r1, r2] = await Promise.all([one.tick(), two.tick()]);
    assert.equal(r1.length + r2.length, 1, "exactly one server ran");
    now += H;
    return [...r1, ...r2][0]!;
  };
  assert.equal((await round()).late, undefined);
  assert.deepEqual((await one.state("s1")).hours, { "s/l/h": "1" });
  assert.equal((await round()).late, undefined, "still in the window");
  assert.equal((await round()).late, undefined, "unchanged: not read again");
  // A record of that hour, published 8 h late, is stored: the hour's stamp changes.
  stored.push(ev("late", T0 - 8 * H + 2 * MIN));
  stamp = "2";
  const again = await round();
  assert.deepEqual(again.late, [{ from: T0 - 8 * H, to: T0 - 7 * H }]);
  assert.equal(again.alerts, 1);
  assert.equal((await round()).late, undefined, "read once");
  assert.deepEqual(await alertedIds(storage), ["early", "late"]);
  // The state and the run records: one per round, in the storage both servers share.
  assert.equal((await two.runs("s1")).length, 5);
  assert.deepEqual((await two.state("s1")).hours, { "s/l/h": "2" });
});

Deno.test("a server killed between match and delivery: the alert is in the storage, delivered by the next", async () => {
  await using storage = await memoryStorage();
  const now = T0;
  const src = source([ev("m", T0 - MIN)], () => now);
  await addSchedule(storage);
  // The first server finds and stores the match, and is gone before any delivery.
  await new Scheduler({ storage, clock: () => now, server: "one", runQuery: src.runQuery }).tick();
  const sent: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    sent.push(req.headers.get("Idempotency-Key")!);
    await req.body?.cancel();
    return new Response("ok");
  });
  try {
    const outbox = new AlertOutbox({
      storage,
      clock: () => now,
      // The receiver is on loopback, allowed as an admin would allow it.
      allowPrivateTargets: [{ kind: "host", host: "127.0.0.1" }],
      webhookOf: () =>
        Promise.resolve({ url: `http://127.0.0.1:${server.addr.port}/`, secret: "s".repeat(20) }),
    });
    assert.equal(await outbox.deliverDue(), 1);
    assert.equal(await outbox.deliverDue(), 0);
    assert.deepEqual(sent, ["s1|rule-1|m"]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("suppression by fields, backfills, and records without an id", async () => {
  await using storage = await memoryStorage();
  let now = T0;
  const events = [
    ev("1", T0 - 40 * MIN, 0, { user: "bob" }),
    ev("2", T0 - 30 * MIN, 0, { user: "bob" }),
    ev("3", T0 - 20 * MIN, 0, { user: "eve" }),
    { time: T0 - 3 * 60 * MIN, availableAt: 0, record: { user: "old", b: 1, a: 2 } },
  ];
  const src = source(events, () => now);
  const scheduler = new Scheduler({
    storage,
    clock: () => now,
    server: "one",
    runQuery: src.runQuery,
  });
  const schedule = await addSchedule(storage, { suppress: { fields: ["user"], forMinutes: 60 } });
  const [run] = await scheduler.tick();
  assert.equal(run!.alerts, 2);
  assert.equal(run!.suppressed, 1);
  const outbox = new AlertOutbox({
    storage,
    clock: () => now,
    webhookOf: () => Promise.resolve(undefined),
  });
  assert.deepEqual((await outbox.list({ state: "suppressed" })).map((a) => a.payload.record), [
    { id: "2", user: "bob" },
  ]);
  // A backfill of older time alerts the record without an id once, keyed by its hash.
  now += MIN;
  const back = await scheduler.runNow(schedule, T0 - 4 * 60 * MIN, T0 - 2 * 60 * MIN);
  assert.ok(back !== "leased");
  assert.equal(back.kind, "backfill");
  assert.equal(back.alerts, 1);
  const again = await scheduler.runNow(schedule, T0 - 4 * 60 * MIN, T0 - 2 * 60 * MIN);
  assert.ok(again !== "leased");
  assert.equal(again.duplicates, 1);
  const keyed = (await outbox.list()).find((a) =>
    (a.payload.record as { user: string }).user === "old"
  )!;
  assert.match(keyed.key, /^s1\|rule-1\|sha256:[0-9a-f]{64}$/);
  assert.equal((await scheduler.state("s1")).coveredTo, T0, "a backfill does not move coverage");
});

Deno.test("cron and every-N-minutes due times", () => {
  const at = (iso: string) => Date.parse(iso);
  const s = { cron: "*/30 8-17 * * 1-5" } as Schedule;
  assert.equal(nextDue(s, at("2026-03-09T08:10:00Z"), 0), at("2026-03-09T08:30:00Z"));
  // Friday 17:30 → Monday 08:00 (2026-03-13 is a Friday).
  assert.equal(nextDue(s, at("2026-03-13T17:30:00Z"), 0), at("2026-03-16T08:00:00Z"));
  assert.equal(nextDue({ everyMinutes: 5 } as Schedule, 1000, 0), 1000 + 5 * MIN);
  assert.equal(nextDue({ everyMinutes: 5 } as Schedule, undefined, 42), 42);
  assert.match(parseCron("* * *") as string, /needs 5 fields/);
  assert.match(parseCron("61 * * * *") as string, /out of range/);
  assert.equal(
    canonicalJson({ b: [1, { d: 1, c: 2 }], a: null }),
    '{"a":null,"b":[1,{"c":2,"d":1}]}',
  );
});
