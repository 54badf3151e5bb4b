/**
 * Admission as rows (home/storage/pg_admission.ts) on a real PostgreSQL: a slot freed while
 * another server's look has the queued query's row locked is still handed to it (the look had not
 * seen the slot free: skipping the locked row lost the hand-over until the next poll), and no more
 * than `maxRunning` queries ever hold a slot.
 */

import assert from "node:assert/strict";
import { startPostgres } from "../support/postgres.ts";
import { openPgStorage } from "../../home/storage/pg_storage.ts";
import { PgAdmission } from "../../home/storage/pg_admission.ts";
import { sleep } from "../../engine/util/sleep.ts";
import { SharedQueries } from "../../actors/shared_queries.ts";
import { ALICE, sharedTestOptions } from "../../actors/test_support.ts";

const record = (id: string) => ({
  key: ["queries", "records", id],
  value: new TextEncoder().encode(id),
});

Deno.test("pg admission: a slot freed while another server's look holds the queued query's row is handed to it", async () => {
  await using pg = await startPostgres();
  const url = await pg.newDatabase();
  const one = await openPgStorage(url, { connections: 2 });
  const two = await openPgStorage(url, { connections: 2 });
  try {
    const a = new PgAdmission(one, () => 1);
    const b = new PgAdmission(two, () => 1);
    assert.equal(
      (await a.admit({ id: "q1", server: "A", at: 1 }, 10, record("q1"))).decision,
      "run",
    );
    assert.equal(
      (await b.admit({ id: "q2", server: "B", at: 2 }, 10, record("q2"))).decision,
      "queue",
    );
    // Server B's look, as `#fill` takes it: the queued row locked, the slot not yet free.
    const locked = Promise.withResolvers<void>();
    const release = Promise.withResolvers<void>();
    const look = two.sql.begin(async (tx) => {
      await tx`SELECT id FROM trawl_admitted WHERE state = 'queued' FOR UPDATE`;
      locked.resolve();
      await release.promise;
    });
    await locked.promise;
    // Server A ends q1 meanwhile: its slot is freed, and must go to q2 once B's look is done.
    let settled = false;
    const ending = a.end("q1", []).finally(() => settled = true);
    // B's look ends once A waits for the row (or, skipping it, has ended already).
    while (!settled) {
      const [{ waiting }] = await one.sql<[{ waiting: number }]>`
        SELECT count(*)::int AS waiting FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      if (waiting > 0) break;
      await sleep(5);
    }
    release.resolve();
    const ended = await ending;
    await look;
    assert.equal(ended.applied, true);
    assert.deepEqual(ended.handed.map((h) => ({ ...h })), [{ id: "q2", server: "B" }]);
    assert.deepEqual(await b.holding(["q2"]), { ids: ["q2"], handed: false });
    // One slot: a third query queues.
    assert.equal(
      (await a.admit({ id: "q3", server: "A", at: 3 }, 10, record("q3"))).decision,
      "queue",
    );
    assert.deepEqual((await a.all()).map((s) => s.id).sort(), ["q2", "q3"]);
  } finally {
    await one.close();
    await two.close();
  }
});

Deno.test("pg: with query.maxRunning left to its default each live server brings its slots; a server whose lease stops counts no more", async () => {
  await using pg = await startPostgres();
  const url = await pg.newDatabase();
  const one = await openPgStorage(url, { connections: 2 });
  const two = await openPgStorage(url, { connections: 2 });
  let now = 0;
  const server = async (storage: typeof one, serverId: string) => {
    const shared = new SharedQueries(storage, {
      ...sharedTestOptions,
      maxRunningPerServer: true,
      serverId,
      now: () => now,
    });
    await shared.start({ send: () => {} });
    return shared;
  };
  const submission = { shareResult: true } as const;
  const a = await server(one, "a");
  try {
    assert.equal(await a.admit("q1", ALICE, submission), "run");
    assert.equal(await a.admit("q2", ALICE, submission), "queue");
    const b = await server(two, "b");
    assert.equal(b.maxRunning, 2);
    await a.sweep();
    assert.equal(a.maxRunning, 2);
    assert.equal(a.mayRun("q2"), true, "the sweep that counted b let q2 in");
    assert.equal(await b.admit("q3", ALICE, submission), "queue", "two slots, both held");
    now += 1200;
    await a.sweep();
    assert.equal(a.maxRunning, 1, "b's lease unchanged for longer than cluster.lease");
    await b.stop();
  } finally {
    await a.stop();
    await one.close();
    await two.close();
  }
});

Deno.test("pg: a sweep that counts more slots returns once the look under way has given its queued query one", async () => {
  await using pg = await startPostgres();
  const url = await pg.newDatabase();
  const one = await openPgStorage(url, { connections: 2 });
  const two = await openPgStorage(url, { connections: 2 });
  const options = { ...sharedTestOptions, maxRunningPerServer: true, now: () => 0 };
  const a = new SharedQueries(one, { ...options, serverId: "a" });
  const b = new SharedQueries(two, { ...options, serverId: "b" });
  try {
    await a.start({ send: () => {} });
    const submission = { shareResult: true } as const;
    assert.equal(await a.admit("q1", ALICE, submission), "run");
    assert.equal(await a.admit("q2", ALICE, submission), "queue");
    await b.start({ send: () => {} });
    // A look of a's is under way and held: the slots' table is locked by another transaction.
    const locked = Promise.withResolvers<void>();
    const release = Promise.withResolvers<void>();
    const hold = two.sql.begin(async (tx) => {
      await tx`LOCK TABLE trawl_run_slots IN EXCLUSIVE MODE`;
      locked.resolve();
      await release.promise;
    });
    await locked.promise;
    const polling = a.poll();
    for (let waiting = 0; waiting === 0;) {
      [{ waiting }] = await one.sql<[{ waiting: number }]>`
        SELECT count(*)::int AS waiting FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      if (waiting === 0) await sleep(5);
    }
    // The sweep counts b (a second slot) and asks for a look while that one is held.
    const sweeping = a.sweep();
    while (a.maxRunning < 2) await sleep(5);
    release.resolve();
    await hold;
    await sweeping;
    assert.equal(a.mayRun("q2"), true, "the sweep returned before its look");
    await polling;
  } finally {
    await a.stop();
    await b.stop();
    await one.close();
    await two.close();
  }
});
