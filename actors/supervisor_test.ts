import assert from "node:assert/strict";
import { createActor, SimulatedClock } from "xstate";
import { lookupQuery, queryRef, type SupervisorLimits, supervisorMachine } from "./supervisor.ts";
import { queryMachine, topState, withEngine } from "./query_machine.ts";
import { memoryLogger } from "../home/log.ts";
import { ResultStore } from "./result_store.ts";
import { ALICE, BOB, fakeEngine, type FakeRunOptions, PLAN, waitFor } from "./test_support.ts";

function startSupervisor(
  engine: FakeRunOptions,
  limits: Partial<SupervisorLimits> = {},
  query = queryMachine,
) {
  const clock = new SimulatedClock();
  const time = { now: 0 };
  const log = memoryLogger();
  const supervisor = createActor(supervisorMachine, {
    input: {
      maxRunning: 1,
      maxQueued: 1,
      retentionMs: 60_000,
      expiredMemoryMs: 86_400_000,
      now: () => time.now,
      log,
      queryLogic: withEngine(fakeEngine(engine), query),
      clock,
      ...limits,
    },
  });
  supervisor.start();
  function submit(queryId: string, owner = ALICE) {
    supervisor.send({
      type: "SUBMIT",
      input: {
        queryId,
        owner,
        plan: PLAN,
        store: new ResultStore(queryId, { memoryBytes: 1 << 20, spillDir: "/nonexistent" }),
        serverTimeZone: "UTC",
      },
    });
    return queryRef(supervisor, queryId);
  }
  // Advances both the XState clock (timers) and the time stamps.
  function advance(ms: number) {
    time.now += ms;
    clock.increment(ms);
  }
  return { supervisor, submit, advance, log, [Symbol.dispose]: () => supervisor.stop() };
}

const state = (ref: { getSnapshot(): { value: unknown } } | undefined) =>
  topState(ref!.getSnapshot().value);

Deno.test("the supervisor runs at most maxRunning queries and schedules the next when one ends", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  using started = startSupervisor({ batches: [[{ a: 1 }], [{ a: 2 }]], gate });
  const { submit } = started;
  const first = submit("q1");
  const second = submit("q2");
  await waitFor(first!, (s) => topState(s.value) === "RUNNING");
  assert.equal(state(second), "QUEUED");
  release();
  await waitFor(first!, (s) => topState(s.value) === "SUCCEEDED");
  await waitFor(second!, (s) => topState(s.value) === "SUCCEEDED");
  assert.deepEqual(second!.getSnapshot().context.stateChanges.map((c) => c.to), [
    "QUEUED",
    "SCHEDULED",
    "RUNNING",
    "SUCCEEDED",
  ]);
});

Deno.test("the supervisor refuses a query past maxQueued waiting ones", async () => {
  using started = startSupervisor({ batches: [[{ a: 1 }]], gate: new Promise(() => {}) });
  const { submit } = started;
  const first = submit("q1");
  assert.ok(submit("q2"));
  assert.equal(submit("q3"), undefined);
  await waitFor(first!, (s) => topState(s.value) === "RUNNING");
});

Deno.test("a queued query cancelled leaves the queue and the next one gets its turn", async () => {
  using started = startSupervisor(
    { batches: [[{ a: 1 }]], gate: new Promise(() => {}) },
    { maxQueued: 5 },
  );
  const { supervisor, submit } = started;
  const q1 = submit("q1");
  const q2 = submit("q2");
  const q3 = submit("q3");
  supervisor.send({ type: "CANCEL", queryId: "q2" });
  assert.equal(state(q2), "CANCELLED");
  assert.deepEqual(supervisor.getSnapshot().context.waiting, ["q3"]);
  supervisor.send({ type: "CANCEL", queryId: "q1" });
  await waitFor(q1!, (s) => topState(s.value) === "CANCELLED");
  await waitFor(q3!, (s) => topState(s.value) === "RUNNING");
});

Deno.test("a finished query expires after its retention and its id answers expired, not unknown", async () => {
  using started = startSupervisor({ batches: [[{ a: 1 }]] });
  const { supervisor, submit, advance } = started;
  const q = submit("q1");
  await waitFor(q!, (s) => topState(s.value) === "SUCCEEDED");
  advance(50_000);
  supervisor.send({ type: "TOUCH", queryId: "q1" });
  advance(50_000);
  assert.equal(lookupQuery(supervisor, "q1", ALICE).kind, "found");
  assert.equal(lookupQuery(supervisor, "q1", BOB).kind, "unknown");
  advance(10_001);
  assert.equal(lookupQuery(supervisor, "q1", ALICE).kind, "expired");
  assert.equal(lookupQuery(supervisor, "q1", BOB).kind, "unknown");
  assert.equal(lookupQuery(supervisor, "never", ALICE).kind, "unknown");
  advance(86_400_001);
  assert.equal(lookupQuery(supervisor, "q1", ALICE).kind, "unknown");
});

Deno.test("FREE drops a finished query at once but leaves an unfinished one alone", async () => {
  using started = startSupervisor({ batches: [[{ a: 1 }]] }, { maxRunning: 1 });
  const { supervisor, submit } = started;
  const q = submit("q1");
  await waitFor(q!, (s) => topState(s.value) === "SUCCEEDED");
  supervisor.send({ type: "FREE", queryId: "q1" });
  assert.equal(lookupQuery(supervisor, "q1", ALICE).kind, "expired");
  using other = startSupervisor({
    batches: [[{ a: 1 }]],
    gate: new Promise(() => {}),
  });
  const { supervisor: s2, submit: submit2 } = other;
  const running = submit2("q2");
  await waitFor(running!, (s) => topState(s.value) === "RUNNING");
  s2.send({ type: "FREE", queryId: "q2" });
  assert.equal(lookupQuery(s2, "q2", ALICE).kind, "found");
  s2.send({ type: "CANCEL", queryId: "q2" });
  await waitFor(running!, (s) => topState(s.value) === "CANCELLED");
});

Deno.test("a freed query's actor is stopped, and stopping the supervisor stops the queries it holds", async () => {
  using started = startSupervisor({ batches: [[{ a: 1 }]] }, { maxRunning: 2 });
  const { supervisor, submit } = started;
  const q1 = submit("q1")!;
  const q2 = submit("q2")!;
  await waitFor(q1, (s) => topState(s.value) === "SUCCEEDED");
  await waitFor(q2, (s) => topState(s.value) === "SUCCEEDED");
  supervisor.send({ type: "FREE", queryId: "q1" });
  assert.equal(q1.getSnapshot().status, "stopped");
  assert.equal(q2.getSnapshot().status, "active");
  supervisor.stop();
  assert.equal(q2.getSnapshot().status, "stopped");

  const open = { count: 0 };
  using held = startSupervisor({ batches: [[{ a: 1 }]], gate: new Promise(() => {}), open });
  const running = held.submit("q3")!;
  await waitFor(running, (s) => topState(s.value) === "RUNNING");
  held.supervisor.stop();
  assert.equal(running.getSnapshot().status, "stopped");
  assert.ok(running.getSnapshot().context.abort?.signal.aborted, "the engine was told to stop");
});

Deno.test("the supervisor holds each query until it drops it, then the query's actor is stopped", async () => {
  const { supervisor, submit, advance } = startSupervisor(
    { batches: [[{ a: 1 }]] },
    { maxRunning: 3, maxQueued: 3 },
  );
  const held = () => [...supervisor.getSnapshot().context.queries.keys()].sort();
  const freed = submit("freed")!;
  const expired = submit("expired")!;
  const cancelled = submit("cancelled")!;
  supervisor.send({ type: "CANCEL", queryId: "cancelled" });
  assert.deepEqual(held(), ["cancelled", "expired", "freed"]);
  assert.equal(queryRef(supervisor, "freed"), freed);
  await waitFor(freed, (s) => topState(s.value) === "SUCCEEDED");
  await waitFor(expired, (s) => topState(s.value) === "SUCCEEDED");
  supervisor.send({ type: "FREE", queryId: "freed" });
  assert.deepEqual(held(), ["cancelled", "expired"]);
  assert.equal(freed.getSnapshot().status, "stopped");
  assert.equal(queryRef(supervisor, "freed"), undefined);
  advance(60_001);
  assert.deepEqual(held(), []);
  assert.equal(expired.getSnapshot().status, "stopped");
  assert.equal(cancelled.getSnapshot().status, "stopped");
  assert.equal(lookupQuery(supervisor, "constructor", ALICE).kind, "unknown");
});

Deno.test("a query actor that fails through a bug is dropped and logged, and the supervisor goes on", async () => {
  const buggy = queryMachine.provide({
    actions: {
      warn: () => {
        throw new Error("a bug in an action");
      },
    },
  });
  const { supervisor, submit, log } = startSupervisor(
    { batches: [[{ a: 1 }]], warning: { level: "WARN", message: "w" } },
    { maxRunning: 1 },
    buggy,
  );
  const crashed = submit("q1")!;
  const next = submit("q2")!;
  await waitFor(supervisor, (s) => !s.context.queries.has("q1"));
  assert.equal(crashed.getSnapshot().status, "error");
  assert.equal(supervisor.getSnapshot().status, "active");
  assert.equal(lookupQuery(supervisor, "q1", ALICE).kind, "expired");
  assert.match(
    log.lines.join("\n"),
    /ERROR query q1 stopped through an internal error\n\s+Error: a bug/,
  );
  // The slot it held went to the next query.
  assert.ok(next.getSnapshot().context.stateChanges.some((c) => c.to === "SCHEDULED"));
});

Deno.test("queries given no clock run their delays on XState's own (the server's case)", async () => {
  const log = memoryLogger();
  const supervisor = createActor(supervisorMachine, {
    input: {
      maxRunning: 1,
      maxQueued: 1,
      retentionMs: 1,
      expiredMemoryMs: 60_000,
      now: Date.now,
      log,
      queryLogic: withEngine(fakeEngine({ batches: [[{ a: 1 }]] })),
    },
  });
  supervisor.start();
  supervisor.send({
    type: "SUBMIT",
    input: {
      queryId: "q1",
      owner: ALICE,
      plan: PLAN,
      store: new ResultStore("q1", { memoryBytes: 1 << 20, spillDir: "/nonexistent" }),
      serverTimeZone: "UTC",
    },
  });
  // A real (1 ms) retention: the point is the real clock.
  await waitFor(supervisor, (s) => s.context.queries.size === 0, { timeout: 5_000 });
  assert.equal(lookupQuery(supervisor, "q1", ALICE).kind, "expired");
  assert.deepEqual(log.lines, [], "the query expired, it did not crash");
  supervisor.stop();
});

Deno.test("FAIL sent to the supervisor ends that query FAILED with the given error, running or waiting", async () => {
  using started = startSupervisor({
    batches: [[{ a: 1 }], [{ a: 2 }]],
    gate: new Promise(() => {}),
  });
  const { supervisor, submit } = started;
  const running = submit("q1");
  const waiting = submit("q2");
  await waitFor(running!, (s) => topState(s.value) === "RUNNING");
  assert.equal(state(waiting), "QUEUED");
  const error = {
    code: "RUNTIME_ERROR" as const,
    message: "the server that ran this query stopped responding",
  };
  for (const queryId of ["q2", "q1"]) supervisor.send({ type: "FAIL", queryId, error });
  for (const ref of [running, waiting]) {
    const end = await waitFor(ref!, (s) => topState(s.value) === "FAILED");
    assert.deepEqual(end.context.error, error);
  }
});
