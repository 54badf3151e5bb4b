import assert from "node:assert/strict";
import {
  admitSlot,
  allSlots,
  NO_SLOTS,
  promotable,
  promoted,
  type Slot,
  SlotBook,
  type Slots,
  storing,
  withNext,
  without,
} from "./slots.ts";
import { memoryStorage } from "../test_support.ts";
import { encodeJson } from "./keys.ts";

const slot = (id: string, server = "a", at = 0): Slot => ({ id, server, at });
const ids = (list: readonly Slot[] | undefined) => (list ?? []).map((s) => s.id);
const LIMITS = { maxRunning: 2, maxQueued: 2 };

Deno.test("admitSlot runs a query on a free slot, queues it when the slots are taken, refuses it when the queue is full", () => {
  const one = admitSlot(NO_SLOTS, slot("q1"), LIMITS);
  assert.equal(one.decision, "run");
  const two = admitSlot(one.slots, slot("q2"), LIMITS);
  assert.equal(two.decision, "run");
  assert.deepEqual(ids(two.slots.running), ["q1", "q2"]);
  // maxRunning running: the next ones wait, up to maxQueued.
  const three = admitSlot(two.slots, slot("q3"), LIMITS);
  assert.equal(three.decision, "queue");
  const four = admitSlot(three.slots, slot("q4"), LIMITS);
  assert.equal(four.decision, "queue");
  assert.deepEqual(ids(four.slots.queued), ["q3", "q4"]);
  const five = admitSlot(four.slots, slot("q5"), LIMITS);
  assert.equal(five.decision, "full");
  assert.equal(five.slots, four.slots);
});

Deno.test("admitSlot never gives a free slot to a new query while others wait: it queues behind them", () => {
  const waiting: Slots = { running: [slot("r1")], queued: [slot("w1", "b")] };
  const admitted = admitSlot(waiting, slot("new", "c"), LIMITS);
  assert.equal(admitted.decision, "queue");
  assert.deepEqual(ids(admitted.slots.running), ["r1"]);
  assert.deepEqual(ids(admitted.slots.queued), ["w1", "new"]);
  // A free slot still lets a query wait when the queue itself is full (it is next to run).
  const full: Slots = { running: [], queued: [slot("w1"), slot("w2")] };
  assert.equal(admitSlot(full, slot("x"), LIMITS).decision, "queue");
  assert.equal(admitSlot(full, slot("x"), { maxRunning: 0, maxQueued: 2 }).decision, "full");
});

Deno.test("promotable takes only the heads of the shared queue: a server's own queries never go ahead of other servers' older ones", () => {
  const slots: Slots = {
    running: [slot("r1")],
    queued: [slot("b1", "b"), slot("a1", "a"), slot("a2", "a")],
  };
  // One slot free, and b's query is first: a's wait.
  assert.deepEqual(promotable(slots, new Set(["a1", "a2"]), 2), []);
  assert.deepEqual(ids(promotable(slots, new Set(["b1"]), 2)), ["b1"]);
  // Two free: b1 and a1 may run; a2 waits.
  assert.deepEqual(ids(promotable(slots, new Set(["a1", "a2"]), 3)), ["a1"]);
  assert.deepEqual(ids(promotable(slots, new Set(["a1", "a2"]), 4)), ["a1", "a2"]);
  // None free, or nothing of its own: nothing.
  assert.deepEqual(promotable(slots, new Set(["b1"]), 1), []);
  assert.deepEqual(promotable(slots, new Set(), 4), []);
});

Deno.test("promoted moves queued slots into running, keeping the others' order", () => {
  const slots: Slots = { running: [slot("r1")], queued: [slot("b1"), slot("a1"), slot("a2")] };
  const next = promoted(slots, [slot("a1")]);
  assert.deepEqual(ids(next.running), ["r1", "a1"]);
  assert.deepEqual(ids(next.queued), ["b1", "a2"]);
});

Deno.test("storing moves a running slot aside (no longer counted as running); without removes ids from every list", () => {
  const slots: Slots = { running: [slot("r1"), slot("r2")], queued: [slot("q1")] };
  const stored = storing(slots, "r1")!;
  assert.deepEqual(ids(stored.running), ["r2"]);
  assert.deepEqual(ids(stored.storing), ["r1"]);
  assert.equal(storing(slots, "q1"), undefined);
  assert.deepEqual(ids(allSlots(stored)), ["r2", "q1", "r1"]);
  const gone = without(stored, new Set(["r1", "q1"]))!;
  assert.deepEqual(ids(gone.running), ["r2"]);
  assert.deepEqual(ids(gone.queued), []);
  assert.deepEqual(ids(gone.storing), []);
  assert.equal(without(stored, new Set(["nope"])), undefined);
  assert.deepEqual(ids(without(stored, new Set(["r1"]))!.storing), []);
});

Deno.test("withNext hands a slot to the next query, unless that one ended meanwhile", () => {
  const slots: Slots = { running: [slot("r1")], queued: [slot("n1"), slot("n2")] };
  const handed = withNext(slots, { ...slot("n1"), ended: () => false });
  assert.deepEqual(ids(handed.running), ["r1", "n1"]);
  assert.deepEqual(ids(handed.queued), ["n2"]);
  const ended = withNext(slots, { ...slot("n1"), ended: () => true });
  assert.deepEqual(ids(ended.running), ["r1"]);
  assert.deepEqual(ids(ended.queued), ["n2"]);
  // Already moved in by a promotion: not twice.
  const twice = withNext(handed, { ...slot("n1"), ended: () => false });
  assert.deepEqual(ids(twice.running), ["r1", "n1"]);
});

Deno.test("SlotBook: changes of two servers racing for the document are all applied, none lost", async () => {
  await using storage = await memoryStorage();
  const a = new SlotBook(storage);
  const b = new SlotBook(storage);
  const add = (book: SlotBook, id: string) =>
    book.change((slots) => ({
      slots: { ...slots, running: [...slots.running, slot(id)] },
      extra: [],
    }));
  const outcomes = await Promise.all(
    Array.from({ length: 12 }, (_, i) => add(i % 2 ? a : b, `q${i}`)),
  );
  assert.ok(outcomes.every((o) => o.applied));
  const { value } = await a.read();
  assert.deepEqual(new Set(ids(value.running)), new Set(outcomes.map((_, i) => `q${i}`)));
});

Deno.test("SlotBook: an op whose own key changed is left out (applied: false), the others of its commit go", async () => {
  await using storage = await memoryStorage();
  const book = new SlotBook(storage);
  await storage.put(["queries", "q", "taken"], encodeJson({}));
  const [lost, won] = await Promise.all([
    book.change((slots) => ({
      slots: { ...slots, running: [...slots.running, slot("taken")] },
      extra: [{ key: ["queries", "q", "taken"], value: encodeJson({}), expectedVersion: null }],
    })),
    book.change((slots) => ({
      slots: { ...slots, running: [...slots.running, slot("fresh")] },
      extra: [{ key: ["queries", "q", "fresh"], value: encodeJson({}), expectedVersion: null }],
    })),
  ]);
  assert.equal(lost.applied, false);
  assert.equal(won.applied, true);
  assert.deepEqual(ids((await book.read()).value.running), ["fresh"]);
  // Nothing to do: not applied, nothing written.
  assert.equal((await book.change(() => undefined)).applied, false);
});

Deno.test("SlotBook: the rider (a server's promotion) rides on a commit that has none", async () => {
  await using storage = await memoryStorage();
  let rode = 0;
  const book = new SlotBook(storage, () => ({
    promotion: true,
    change: (slots) => ({
      slots: { ...slots, queued: [...slots.queued, slot(`p${rode}`)] },
      extra: [],
    }),
    resolve: () => void rode++,
    reject: () => {},
  }));
  await book.change((slots) => ({ slots: { ...slots, running: [slot("r")] }, extra: [] }));
  assert.equal(rode, 1);
  const { value } = await book.read();
  assert.deepEqual(ids(value.running), ["r"]);
  assert.deepEqual(ids(value.queued), ["p0"]);
});
