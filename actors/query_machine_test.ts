import assert from "node:assert/strict";
import { createActor, fromCallback, SimulatedClock } from "xstate";
import { type QueryInput, type QueryReport, topState, withEngine } from "./query_machine.ts";
import { ResultStore } from "./result_store.ts";
import { ALICE, fakeEngine, type FakeRunOptions, PLAN, waitFor } from "./test_support.ts";
import { QueryError, scalar } from "../engine/mod.ts";
import { memoryLogger } from "../home/log.ts";

function start(engine: FakeRunOptions, extra: Partial<QueryInput> = {}) {
  const clock = new SimulatedClock();
  let now = 1_000;
  const store = new ResultStore("q", { memoryBytes: 1 << 20, spillDir: "/nonexistent" });
  const log = memoryLogger();
  const actor = createActor(
    withEngine(fakeEngine(engine)),
    {
      clock,
      input: {
        queryId: "q",
        owner: ALICE,
        plan: PLAN,
        store,
        retentionMs: 60_000,
        serverTimeZone: "UTC",
        now: () => now++,
        log,
        ...extra,
      },
    },
  );
  actor.start();
  return { actor, clock, store, log, [Symbol.dispose]: () => actor.stop() };
}

type Started = ReturnType<typeof start>["actor"];

Deno.test("a query goes NEW, QUEUED, SCHEDULED, RUNNING, SUCCEEDED with every change recorded", async () => {
  const schema = [{ name: "a", type: scalar("INTEGER"), nullable: false }];
  using started = start({ batches: [[{ a: 1 }], [{ a: 2 }]], schema });
  const { actor, store } = started;
  assert.equal(topState(actor.getSnapshot().value), "NEW");
  actor.send({ type: "ACCEPT" });
  assert.equal(topState(actor.getSnapshot().value), "QUEUED");
  actor.send({ type: "SCHEDULE" });
  const done = await waitFor(actor, (s) => topState(s.value) === "SUCCEEDED");
  const changes = done.context.stateChanges;
  assert.deepEqual(changes.map((c) => [c.from, c.to]), [
    ["NEW", "QUEUED"],
    ["QUEUED", "SCHEDULED"],
    ["SCHEDULED", "RUNNING"],
    ["RUNNING", "SUCCEEDED"],
  ]);
  for (let i = 1; i < changes.length; i++) assert.ok(changes[i]!.millis > changes[i - 1]!.millis);
  assert.equal(done.context.progress, 1);
  assert.deepEqual(done.context.schema, schema);
  assert.equal(store.count, 2);
});

Deno.test("progress never decreases and warnings carry a local time and level", async () => {
  const seen: number[] = [];
  using started = start({
    batches: [[{ a: 1 }], [{ a: 2 }], [{ a: 3 }]],
    warning: { level: "WARN", message: "file x skipped" },
  }, { now: () => Date.UTC(2024, 4, 1, 13, 0, 0, 250), serverTimeZone: "Europe/Berlin" });
  const { actor } = started;
  actor.subscribe((s) => seen.push(s.context.progress));
  actor.send({ type: "ACCEPT" });
  actor.send({ type: "SCHEDULE" });
  const done = await waitFor(actor, (s) => topState(s.value) === "SUCCEEDED");
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! >= seen[i - 1]!);
  assert.deepEqual(done.context.warnings, [
    { time: "2024-05-01T15:00:00.250", level: "WARN", message: "file x skipped" },
  ]);
});

Deno.test("CANCEL while RUNNING aborts the engine and ends CANCELLED once it has stopped", async () => {
  const open = { count: 0 };
  using started = start({ batches: [[{ a: 1 }], [{ a: 2 }]], gate: new Promise(() => {}), open });
  const { actor } = started;
  actor.send({ type: "ACCEPT" });
  actor.send({ type: "SCHEDULE" });
  await waitFor(actor, (s) => topState(s.value) === "RUNNING" && open.count === 1);
  actor.send({ type: "CANCEL" });
  const done = await waitFor(actor, (s) => topState(s.value) === "CANCELLED");
  assert.equal(open.count, 0);
  assert.deepEqual(done.context.stateChanges.at(-1)?.from, "RUNNING");
});

Deno.test("CANCEL from NEW and from QUEUED ends CANCELLED without running", () => {
  for (const before of [[], ["ACCEPT"]] as const) {
    using started = start({ batches: [[{ a: 1 }]] });
    const { actor } = started;
    for (const type of before) actor.send({ type });
    actor.send({ type: "CANCEL" });
    assert.equal(topState(actor.getSnapshot().value), "CANCELLED");
    assert.equal(actor.getSnapshot().context.run, undefined);
  }
});

Deno.test("a QueryError of the engine ends FAILED with its diagnostic", async () => {
  using started = start({
    batches: [[{ a: 1 }]],
    fail: new QueryError({ code: "TYPE_ERROR", message: "no good", line: 2, column: 3 }),
  });
  const { actor } = started;
  actor.send({ type: "ACCEPT" });
  actor.send({ type: "SCHEDULE" });
  const done = await waitFor(actor, (s) => topState(s.value) === "FAILED");
  assert.equal(done.context.error?.code, "TYPE_ERROR");
  assert.equal(done.context.error?.line, 2);
});

Deno.test("an engine that cannot start ends the query FAILED from SCHEDULED, never RUNNING", () => {
  const store = new ResultStore("q", { memoryBytes: 1 << 20, spillDir: "/nonexistent" });
  let now = 1_000;
  const actor = createActor(
    withEngine(() => {
      throw new QueryError({ code: "RUNTIME_ERROR", message: "no such file", line: 1, column: 1 });
    }),
    {
      input: {
        queryId: "q",
        owner: ALICE,
        plan: PLAN,
        store,
        retentionMs: 60_000,
        serverTimeZone: "UTC",
        now: () => now++,
        log: memoryLogger(),
      },
    },
  );
  actor.start();
  try {
    actor.send({ type: "ACCEPT" });
    actor.send({ type: "SCHEDULE" });
    // The engine starts synchronously: the state is known at once.
    const { context, value } = actor.getSnapshot();
    assert.equal(topState(value), "FAILED");
    assert.equal(context.error?.message, "no such file");
    assert.deepEqual(context.stateChanges.map((c) => c.to), ["QUEUED", "SCHEDULED", "FAILED"]);
  } finally {
    actor.stop();
  }
});

Deno.test("FAIL from QUEUED ends FAILED", () => {
  using started = start({ batches: [] });
  const { actor } = started;
  actor.send({ type: "ACCEPT" });
  actor.send({ type: "FAIL", error: { code: "RUNTIME_ERROR", message: "shutting down" } });
  assert.equal(topState(actor.getSnapshot().value), "FAILED");
  assert.equal(actor.getSnapshot().context.error?.message, "shutting down");
});

Deno.test("an internal error of the engine ends FAILED, logged with its stack but told to nobody else", async () => {
  const { actor, log } = start({ batches: [[{ a: 1 }]], fail: new TypeError("secret detail") });
  actor.send({ type: "ACCEPT" });
  actor.send({ type: "SCHEDULE" });
  const done = await waitFor(actor, (s) => topState(s.value) === "FAILED");
  assert.equal(done.context.error?.code, "RUNTIME_ERROR");
  assert.doesNotMatch(done.context.error?.message ?? "", /secret detail/);
  assert.equal(log.lines.length, 1);
  assert.match(
    log.lines[0]!,
    /ERROR a query failed through an internal error\n\s+TypeError: secret detail/,
  );
});

Deno.test("a query tells the supervisor of its input when it finishes and when its retention ends", async () => {
  const reports: QueryReport[] = [];
  const supervisor = createActor(fromCallback<QueryReport>(({ receive }) => {
    receive((report) => reports.push(report));
  }));
  supervisor.start();
  const { actor, clock } = start({ batches: [[{ a: 1 }]] }, { supervisor });
  actor.send({ type: "ACCEPT" });
  actor.send({ type: "SCHEDULE" });
  await waitFor(actor, (s) => topState(s.value) === "SUCCEEDED");
  assert.deepEqual(reports, [{ type: "QUERY.FINISHED", queryId: "q" }]);
  clock.increment(60_000);
  assert.deepEqual(reports.at(-1), { type: "QUERY.EXPIRED", queryId: "q" });
});

Deno.test("every finished state keeps its result for the retention, which TOUCH restarts", async () => {
  const ends = {
    SUCCEEDED: (actor: Started) => actor.send({ type: "SCHEDULE" }),
    FAILED: (actor: Started) =>
      actor.send({ type: "FAIL", error: { code: "RUNTIME_ERROR", message: "no" } }),
    CANCELLED: (actor: Started) => actor.send({ type: "CANCEL" }),
  };
  for (const [state, end] of Object.entries(ends)) {
    const reports: QueryReport[] = [];
    const supervisor = createActor(fromCallback<QueryReport>(({ receive }) => {
      receive((report) => reports.push(report));
    }));
    supervisor.start();
    const { actor, clock } = start({ batches: [[{ a: 1 }]] }, { supervisor });
    actor.send({ type: "ACCEPT" });
    end(actor);
    await waitFor(actor, (s) => topState(s.value) === state);
    clock.increment(50_000);
    actor.send({ type: "TOUCH" });
    clock.increment(50_000);
    assert.deepEqual(reports.map((r) => r.type), ["QUERY.FINISHED"], state);
    clock.increment(10_000);
    assert.deepEqual(reports.map((r) => r.type), ["QUERY.FINISHED", "QUERY.EXPIRED"], state);
  }
});
