/**
 * The facade of the shared queries (actors/shared_queries.ts) with two or three servers on one
 * KV in memory, their loops driven by hand (`poll`, `sweep`) and their clocks injected: who gets
 * a slot, in what order, who is taken for dead, whose requests a server answers.
 */

import assert from "node:assert/strict";
import { SharedQueries, type SharedQueriesOptions } from "./shared_queries.ts";
import type { SupervisorEvent } from "./supervisor.ts";
import { ALICE, memoryStorage, sharedTestOptions } from "./test_support.ts";
import { createLogger } from "../home/log.ts";
import { Lease } from "./shared/leases.ts";
import { sleep, type Storage } from "../engine/mod.ts";
import { createActor } from "xstate";
import { withEngine } from "./query_machine.ts";
import { ResultStore } from "./result_store.ts";
import { fakeEngine, PLAN } from "./test_support.ts";

const SUBMISSION = { shareResult: true } as const;

interface Server {
  readonly shared: SharedQueries;
  /** What it told its supervisor. */
  readonly told: SupervisorEvent[];
  /** Its clock (ms), moved by the test. */
  now: number;
}

async function server(
  storage: Storage,
  serverId: string,
  options: Partial<SharedQueriesOptions> = {},
): Promise<Server> {
  const told: SupervisorEvent[] = [];
  const s: Server = {
    told,
    now: 0,
    shared: undefined as unknown as SharedQueries,
  };
  (s as { shared: SharedQueries }).shared = new SharedQueries(storage, {
    ...sharedTestOptions,
    serverId,
    now: () => s.now,
    ...options,
  });
  await s.shared.start({ send: (e) => void told.push(e) });
  return s;
}

async function slotsOf(storage: Storage) {
  const stored = await storage.get(["queries", "slots"]);
  const slots = JSON.parse(new TextDecoder().decode(stored!.value));
  const ids = (l?: { id: string }[]) => (l ?? []).map((s) => s.id);
  return { running: ids(slots.running), queued: ids(slots.queued) };
}

Deno.test("a new query never takes a free slot ahead of queries already waiting", async () => {
  await using storage = await memoryStorage();
  const [a, b, c] = [
    await server(storage, "a"),
    await server(storage, "b"),
    await server(storage, "c"),
  ];
  assert.equal(await a.shared.admit("q1", ALICE, SUBMISSION), "run");
  assert.equal(await b.shared.admit("q2", ALICE, SUBMISSION), "queue");
  // q1 goes: a slot is free, but q2 waits for it (b has not polled yet).
  await a.shared.release("q1");
  assert.deepEqual(await slotsOf(storage), { running: [], queued: ["q2"] });
  assert.equal(await c.shared.admit("q3", ALICE, SUBMISSION), "queue");
  assert.equal(c.shared.mayRun("q3"), false);
  assert.deepEqual(await slotsOf(storage), { running: [], queued: ["q2", "q3"] });
  // b's poll moves q2 in; q3 still waits.
  await b.shared.poll();
  assert.equal(b.shared.mayRun("q2"), true);
  assert.deepEqual(b.told, [{ type: "SLOTS" }]);
  await c.shared.poll();
  assert.equal(c.shared.mayRun("q3"), false);
  assert.deepEqual(await slotsOf(storage), { running: ["q2"], queued: ["q3"] });
});

Deno.test("a server never promotes its own queued queries ahead of other servers' older ones", async () => {
  await using storage = await memoryStorage();
  const [a, b] = [await server(storage, "a"), await server(storage, "b")];
  assert.equal(await a.shared.admit("q1", ALICE, SUBMISSION), "run");
  assert.equal(await b.shared.admit("older", ALICE, SUBMISSION), "queue");
  assert.equal(await a.shared.admit("younger", ALICE, SUBMISSION), "queue");
  // a frees its slot; its commit carries its promotion, which must leave b's older query first.
  await a.shared.release("q1");
  await a.shared.poll();
  assert.equal(a.shared.mayRun("younger"), false);
  assert.deepEqual(await slotsOf(storage), { running: [], queued: ["older", "younger"] });
  await b.shared.poll();
  assert.equal(b.shared.mayRun("older"), true);
  await a.shared.poll();
  assert.equal(a.shared.mayRun("younger"), false);
});

Deno.test("a server that renews its lease is not taken for dead after cluster.lease; one that stops renewing is, and its queries fail", async () => {
  await using storage = await memoryStorage();
  const [a, b] = [await server(storage, "a"), await server(storage, "b")];
  assert.equal(await a.shared.admit("q1", ALICE, SUBMISSION), "run");
  const aLease = new Lease(storage, "a", 1000, () => 0);
  await b.shared.sweep();
  for (const at of [900, 1800, 2700]) {
    await aLease.renew();
    b.now = at;
    await b.shared.sweep();
  }
  assert.equal((await b.shared.record("q1"))!.record.status.state, "QUEUED");
  assert.deepEqual((await slotsOf(storage)).running, ["q1"]);
  // No renewal for longer than the lease: dead, its query FAILED, its slot free.
  b.now = 3701;
  await b.shared.sweep();
  const failed = (await b.shared.record("q1"))!.record;
  assert.equal(failed.status.state, "FAILED");
  assert.match(JSON.stringify(failed.status.error), /stopped responding/);
  assert.deepEqual(await slotsOf(storage), { running: [], queued: [] });
});

Deno.test("a sweep asked for while one is under way resolves after a whole sweep that began after the call", async () => {
  await using storage = await memoryStorage();
  const [a, b] = [await server(storage, "a"), await server(storage, "b")];
  assert.equal(await a.shared.admit("q1", ALICE, SUBMISSION), "run");
  await b.shared.sweep(); // a's lease seen
  // a stops renewing; b's clock moves past the lease while a sweep is under way (it read the
  // clock before): the second call must see a dead, and fail its query, before it resolves.
  const first = b.shared.sweep();
  b.now = 5000;
  const second = b.shared.sweep();
  const third = b.shared.sweep();
  await second;
  const failed = (await b.shared.record("q1"))!.record;
  assert.equal(failed.status.state, "FAILED");
  assert.equal(second, third, "calls made during a sweep share the next one");
  await first;
});

Deno.test("a server answers the cancel and free requests for its own queries only; another server's stay for it", async () => {
  await using storage = await memoryStorage();
  const [a, b, c] = [
    await server(storage, "a", { maxRunning: 5 }),
    await server(storage, "b", { maxRunning: 5 }),
    await server(storage, "c", { maxRunning: 5 }),
  ];
  await a.shared.admit("qa", ALICE, SUBMISSION);
  await b.shared.admit("qb", ALICE, SUBMISSION);
  await c.shared.askCancel("qb");
  await c.shared.askCancel("qa");
  await a.shared.poll();
  assert.deepEqual(a.told, [{ type: "CANCEL", queryId: "qa" }]);
  await b.shared.poll();
  assert.deepEqual(b.told, [{ type: "CANCEL", queryId: "qb" }]);
});

Deno.test("freeing a query: its record becomes a tombstone everywhere; its owner is asked to drop it only by another server", async () => {
  await using storage = await memoryStorage();
  const [a, b] = [
    await server(storage, "a", { maxRunning: 5 }),
    await server(storage, "b", { maxRunning: 5 }),
  ];
  await a.shared.admit("mine", ALICE, SUBMISSION);
  await a.shared.admit("asked", ALICE, SUBMISSION);
  await a.shared.free("mine");
  assert.equal((await b.shared.record("mine"))!.record.freed, true);
  assert.equal(await storage.get(["queries", "ask", "mine"]), null);
  await b.shared.free("asked");
  assert.notEqual(await storage.get(["queries", "ask", "asked"]), null);
  await a.shared.poll();
  assert.deepEqual(a.told, [{ type: "FREE", queryId: "asked" }]);
});

Deno.test("admission counts maxRunning and maxQueued across servers; a full queue is refused and writes nothing", async () => {
  await using storage = await memoryStorage();
  const options = { maxRunning: 1, maxQueued: 1 };
  const [a, b] = [await server(storage, "a", options), await server(storage, "b", options)];
  assert.equal(await a.shared.admit("q1", ALICE, SUBMISSION), "run");
  assert.equal(await b.shared.admit("q2", ALICE, SUBMISSION), "queue");
  assert.equal(await a.shared.admit("q3", ALICE, SUBMISSION), "full");
  assert.equal(await b.shared.record("q3"), null);
  assert.deepEqual(await slotsOf(storage), { running: ["q1"], queued: ["q2"] });
  assert.equal(a.shared.mayRun("q1"), true);
  assert.equal(b.shared.mayRun("q2"), false);
});

Deno.test("a stopping server fails its unfinished queries at once and frees their slots", async () => {
  await using storage = await memoryStorage();
  const [a, b] = [await server(storage, "a"), await server(storage, "b")];
  await a.shared.admit("q1", ALICE, SUBMISSION);
  await b.shared.admit("q2", ALICE, SUBMISSION);
  await a.shared.stop();
  const failed = (await b.shared.record("q1"))!.record;
  assert.equal(failed.status.state, "FAILED");
  assert.deepEqual(failed.status.error, {
    code: "RUNTIME_ERROR",
    message: "the server that ran this query stopped",
  });
  assert.deepEqual((await slotsOf(storage)).running, []);
  assert.equal(await storage.get(["queries", "server", "a"]), null);
  await b.shared.poll();
  assert.equal(b.shared.mayRun("q2"), true);
});

Deno.test("a live server taken for dead (its lease unrenewed past cluster.lease) ends its query FAILED with the error the others wrote, not CANCELLED: every server tells one state", async () => {
  await using storage = await memoryStorage();
  const [a, b] = [await server(storage, "a"), await server(storage, "b")];
  assert.equal(await a.shared.admit("q1", ALICE, SUBMISSION), "run");
  // An engine that runs until stopped: the query stays RUNNING.
  const engine = fakeEngine({ batches: [[{ a: 1 }], [{ a: 2 }]], gate: new Promise(() => {}) });
  const logic = withEngine(engine);
  const query = createActor(logic, {
    input: {
      queryId: "q1",
      owner: ALICE,
      plan: PLAN,
      store: new ResultStore("q1", { memoryBytes: 1 << 20, spillDir: "/nonexistent" }),
      retentionMs: 60_000,
      serverTimeZone: "UTC",
      now: () => a.now,
      log: createLogger(() => {}),
    },
  }).start();
  query.send({ type: "ACCEPT" });
  a.shared.track("q1", query);
  // a stalls (no renewal) longer than the lease: b marks q1 FAILED.
  await b.shared.sweep();
  b.now = 1001;
  await b.shared.sweep();
  assert.equal((await b.shared.record("q1"))!.record.status.state, "FAILED");
  // a goes on: its next write of q1 (RUNNING) finds the record changed; its supervisor is told.
  query.send({ type: "SCHEDULE" });
  const deadline = Date.now() + 10_000;
  while (!a.told.some((e) => e.type === "FAIL" || e.type === "CANCEL")) {
    if (Date.now() > deadline) throw new Error(`a was told ${JSON.stringify(a.told)}`);
    await sleep(20);
  }
  const told = a.told.find((e) => e.type === "FAIL" || e.type === "CANCEL")!;
  assert.equal(told.type, "FAIL", JSON.stringify(told));
  assert.match(JSON.stringify(told), /stopped responding/);
  query.stop();
});

Deno.test("with query.maxRunning left to its default each live server brings its slots: a second server lets a waiting query run, and its death takes them away", async () => {
  await using storage = await memoryStorage();
  const perServer = { maxRunningPerServer: true } as const;
  const a = await server(storage, "a", perServer);
  assert.equal(a.shared.maxRunning, 1);
  assert.equal(await a.shared.admit("q1", ALICE, SUBMISSION), "run");
  assert.equal(await a.shared.admit("q2", ALICE, SUBMISSION), "queue");
  // b starts: a's next sweep counts its slot, and q2 runs beside q1.
  const b = await server(storage, "b", perServer);
  assert.equal(b.shared.maxRunning, 2, "b counted a at its start");
  await a.shared.sweep();
  assert.equal(a.shared.maxRunning, 2);
  assert.equal(a.shared.mayRun("q2"), true, "the sweep that counted b let q2 in");
  assert.deepEqual(await slotsOf(storage), { running: ["q1", "q2"], queued: [] });
  assert.equal(await b.shared.admit("q3", ALICE, SUBMISSION), "queue", "the cap is 2 now");
  // b stops renewing its lease: past cluster.lease by a's clock, its slot counts no more.
  a.now += 600;
  await a.shared.sweep();
  assert.equal(a.shared.maxRunning, 2, "within the lease");
  a.now += 600;
  await a.shared.sweep();
  assert.equal(a.shared.maxRunning, 1, "b's lease unchanged for longer than cluster.lease");
  await a.shared.stop();
  await b.shared.stop();
});

Deno.test("with query.maxRunning set, it is one cap for the cluster however many servers there are", async () => {
  await using storage = await memoryStorage();
  const a = await server(storage, "a");
  assert.equal(await a.shared.admit("q1", ALICE, SUBMISSION), "run");
  assert.equal(await a.shared.admit("q2", ALICE, SUBMISSION), "queue");
  const b = await server(storage, "b");
  await a.shared.sweep();
  await a.shared.poll();
  assert.equal(a.shared.maxRunning, 1);
  assert.equal(b.shared.maxRunning, 1);
  assert.equal(a.shared.mayRun("q2"), false);
  assert.deepEqual(await slotsOf(storage), { running: ["q1"], queued: ["q2"] });
  await a.shared.stop();
  await b.shared.stop();
});
