import assert from "node:assert/strict";
import { createActor, SimulatedClock } from "xstate";
import { connectorMachine } from "./connector_machine.ts";

function bucket(limit: number, unitMs: number) {
  const clock = new SimulatedClock();
  clock.set(1_000_000);
  const actor = createActor(connectorMachine, {
    clock,
    input: { limit, unitMs, now: () => clock.now() },
  });
  actor.start();
  const granted: number[] = [];
  let id = 0;
  const ask = () => {
    const mine = ++id;
    actor.send({ type: "ACQUIRE", id: mine, grant: () => granted.push(mine) });
    return mine;
  };
  return { clock, actor, granted, ask, [Symbol.dispose]: () => actor.stop() };
}

Deno.test("the bucket grants at most limit tokens per time unit", () => {
  using started = bucket(3, 10_000);
  const { clock, granted, ask } = started;
  for (let i = 0; i < 7; i++) ask();
  assert.deepEqual(granted, [1, 2, 3]);
  clock.increment(9_000);
  assert.deepEqual(granted, [1, 2, 3]);
  clock.increment(1_200); // a unit plus its 200 ms margin
  assert.deepEqual(granted, [1, 2, 3, 4, 5, 6]);
  clock.increment(10_200);
  assert.deepEqual(granted, [1, 2, 3, 4, 5, 6, 7]);
});

Deno.test("a throttling answer pauses the bucket for Retry-After", () => {
  using started = bucket(100, 1_000);
  const { clock, granted, ask, actor } = started;
  ask();
  assert.deepEqual(granted, [1]);
  actor.send({ type: "THROTTLED", pauseMs: 5_000 });
  ask();
  ask();
  clock.increment(4_999);
  assert.deepEqual(granted, [1]);
  clock.increment(1);
  assert.deepEqual(granted, [1, 2, 3]);
});

Deno.test("a cancelled request gives up its place in the queue", () => {
  using started = bucket(1, 1_000);
  const { clock, granted, ask, actor } = started;
  ask();
  const second = ask();
  ask();
  actor.send({ type: "CANCEL", id: second });
  clock.increment(1_100);
  assert.deepEqual(granted, [1, 3]);
});

Deno.test("a tighter limit applies to the tokens that follow", () => {
  using started = bucket(10, 1_000);
  const { clock, granted, ask, actor } = started;
  actor.send({ type: "SET_LIMIT", limit: 2, unitMs: 1_000 });
  for (let i = 0; i < 4; i++) ask();
  assert.deepEqual(granted, [1, 2]);
  clock.increment(1_020);
  assert.deepEqual(granted, [1, 2, 3, 4]);
});

Deno.test("a tracked token comes back a unit after its request completed, not after its grant", () => {
  using started = bucket(1, 1_000);
  const { clock, actor, granted } = started;
  const grant = (id: number) => () => granted.push(id);
  actor.send({ type: "ACQUIRE", id: 1, tracked: true, grant: grant(1) });
  actor.send({ type: "ACQUIRE", id: 2, tracked: true, grant: grant(2) });
  assert.deepEqual(granted, [1]);
  // The first request is slow: its token stays out however long it takes.
  clock.increment(5_000);
  assert.deepEqual(granted, [1]);
  actor.send({ type: "RELEASE", id: 1 });
  clock.increment(1_000);
  assert.deepEqual(granted, [1], "the provider may have counted it as late as its completion");
  clock.increment(20); // the unit's 2% margin
  assert.deepEqual(granted, [1, 2]);
});
