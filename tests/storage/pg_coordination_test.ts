/**
 * What only the PostgreSQL storage offers (Storage.coordination, home/storage/pg_storage.ts):
 * a locked read-modify-write that never loses an update between servers, and signals between
 * them (LISTEN/NOTIFY); the shared queries' slots (actors/shared/slots.ts) updated through it by
 * several servers at once, none lost, a freed slot signalled; a new rights document signalled.
 */

import assert from "node:assert/strict";
import { openPgStorage, type PgStorage } from "../../home/storage/pg_storage.ts";
import { sharedPostgres } from "../support/postgres.ts";
import { type Slot, SlotBook, SLOTS_CHANNEL, without } from "../../actors/shared/slots.ts";
import type { StorageCoordination } from "../../engine/contracts/storage.ts";
import { StorageRights } from "../../home/rights_file.ts";

const pg = await sharedPostgres();
const text = (s: string) => new TextEncoder().encode(s);
const read = (v: Uint8Array | undefined) => new TextDecoder().decode(v);

/** `count` storages (each its own pool: as many servers) on one fresh database. */
async function servers(count: number): Promise<PgStorage[] & AsyncDisposable> {
  const url = await pg.newDatabase();
  const list = [] as unknown as PgStorage[] & AsyncDisposable;
  for (let i = 0; i < count; i++) list.push(await openPgStorage(url));
  list[Symbol.asyncDispose] = async () => {
    for (const s of list) await s.close();
  };
  return list;
}

function coordination(s: PgStorage): StorageCoordination {
  return s.coordination;
}

Deno.test("pg coordination: concurrent read-modify-writes of one key through three pools lose none", async () => {
  await using all = await servers(3);
  const increment = (s: PgStorage) =>
    coordination(s).update(["counter"], (current) => {
      const n = current ? Number(read(current.value)) : 0;
      return [{ key: ["counter"], value: text(String(n + 1)) }];
    });
  const results = await Promise.all(
    Array.from({ length: 60 }, (_, i) => increment(all[i % 3]!)),
  );
  assert.ok(results.every((r) => r?.ok), JSON.stringify(results));
  assert.equal(read((await all[0]!.get(["counter"]))?.value), "60");
});

Deno.test("pg coordination: an update that decides nothing writes nothing; a stale extra key writes none", async () => {
  await using all = await servers(1);
  const s = all[0]!;
  assert.equal(await coordination(s).update(["doc"], () => undefined), null);
  assert.equal(await s.get(["doc"]), null);
  const other = await s.put(["other"], text("one"));
  assert.ok(other.ok);
  await s.put(["other"], text("two"));
  const stale = await coordination(s).update(["doc"], () => [
    { key: ["doc"], value: text("x") },
    { key: ["other"], value: text("three"), expectedVersion: other.version },
  ]);
  assert.deepEqual(stale, { ok: false, conflict: ["other"] });
  assert.equal(await s.get(["doc"]), null);
  assert.equal(read((await s.get(["other"]))?.value), "two");
});

Deno.test("pg coordination: a signal of one server reaches the listeners of the others", async () => {
  await using all = await servers(2);
  const a = all[0]!;
  const b = all[1]!;
  let heard = 0;
  const { promise, resolve } = Promise.withResolvers<void>();
  const stop = await coordination(b).listen("wake", () => {
    // The first call says the listening started; the signal is the next.
    if (++heard === 2) resolve();
  });
  await coordination(a).notify("wake");
  await promise;
  await stop();
  await assert.rejects(() => coordination(a).notify("Bad-Name"), /not a channel name/);
});

const slot = (id: string, server: string): Slot => ({ id, server, at: 0 });

Deno.test("pg coordination: two servers' slot books racing for the admission document lose no change, and a freed slot is signalled", async () => {
  await using all = await servers(2);
  const books = all.map((s) => new SlotBook(s));
  const add = (i: number) =>
    books[i % 2]!.change((slots) => ({
      slots: { ...slots, running: [...slots.running, slot(`q${i}`, `s${i % 2}`)] },
      extra: [{ key: ["queries", "q", `q${i}`], value: text("{}"), expectedVersion: null }],
    }));
  const outcomes = await Promise.all(Array.from({ length: 24 }, (_, i) => add(i)));
  assert.ok(outcomes.every((o) => o.applied));
  const { value } = await books[0]!.read();
  assert.deepEqual(
    new Set(value.running.map((s) => s.id)),
    new Set(outcomes.map((_, i) => `q${i}`)),
  );
  // A record taken already: that op alone is out.
  const lost = await books[1]!.change((slots) => ({
    slots: { ...slots, running: [...slots.running, slot("q0", "s1")] },
    extra: [{ key: ["queries", "q", "q0"], value: text("{}"), expectedVersion: null }],
  }));
  assert.equal(lost.applied, false);

  let signals = 0;
  const { promise, resolve } = Promise.withResolvers<void>();
  const stop = await coordination(all[1]!).listen(SLOTS_CHANNEL, () => {
    if (++signals === 2) resolve();
  });
  const freed = await books[0]!.change((slots) => {
    const next = without(slots, new Set(["q3"]));
    return next && { slots: next, extra: [] };
  });
  assert.equal(freed.applied, true);
  await promise;
  await stop();
  assert.equal((await books[1]!.read()).value.running.length, 23);
});

Deno.test("pg storage: a value past its retention is gone for readers and lists, and may be made again", async () => {
  await using all = await servers(1);
  const s = all[0]!;
  const first = await s.put(["asks", "q1"], text("cancel"), { expireInMs: 1 });
  assert.ok(first.ok);
  await s.put(["asks", "q2"], text("free"));
  // The database's clock decides: looked at until it has passed.
  while (await s.get(["asks", "q1"]) !== null) await new Promise((r) => setTimeout(r, 5));
  assert.equal(await s.version(["asks", "q1"]), null);
  assert.deepEqual(await Array.fromAsync(s.list(["asks"])), [["asks", "q2"]]);
  const again = await s.put(["asks", "q1"], text("free"), { expectedVersion: null });
  assert.ok(again.ok);
  assert.equal(read((await s.get(["asks", "q1"]))?.value), "free");
  // The sweep deletes the rows of values past their retention.
  await s.put(["asks", "q3"], text("x"), { expireInMs: 1 });
  while (await s.get(["asks", "q3"]) !== null) await new Promise((r) => setTimeout(r, 5));
  await s.sweep();
  const rows = await s.sql`SELECT count(*)::int AS n FROM trawl_heads WHERE key = ${[
    "asks",
    "q3",
  ]}`;
  assert.equal(rows[0]!.n, 0);
});

Deno.test("pg storage: a rights document written through one server is loaded by another when signalled, not by its checks", async () => {
  await using all = await servers(2);
  // Checks an hour apart: only the signal can bring the change.
  const hour = { checkEveryMs: 3_600_000 };
  const mine = new StorageRights(all[0]!, undefined, undefined, hour);
  const other = new StorageRights(all[1]!, undefined, undefined, hour);
  try {
    assert.deepEqual(await other.load(), []);
    await mine.write(JSON.stringify([{ path: "/shared/team", user: "bob", rights: ["read"] }]));
    while (other.grants().length === 0) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(other.grants().map((g) => g.path), ["/shared/team"]);
  } finally {
    mine.stop();
    other.stop();
  }
});
