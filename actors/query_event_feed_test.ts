/**
 * The events of a query (actors/query_event_feed.ts): while it runs, a `stats` event comes every
 * tick even when nothing changes (the elapsed time moves on); none once it has ended. A feed of
 * the test's own stands for the query (its time is the test's to set); the tick is made short.
 */

import assert from "node:assert/strict";
import {
  type FeedState,
  type QueryEvent,
  queryEvents,
  recordFeed,
  REMOTE_READ_ATTEMPTS,
  type StatusFeed,
} from "./query_event_feed.ts";
import type { SharedRecord } from "./shared/records.ts";
import { etaMillis } from "./query_progress.ts";

function feedOf(state: { now: FeedState }): StatusFeed & { change(): void } {
  let changed = () => {};
  return {
    current: () => state.now,
    subscribe(onChange) {
      changed = onChange;
      return () => changed = () => {};
    },
    change: () => changed(),
  };
}

const running = (elapsedMillis: number, finished = false): FeedState => ({
  status: { state: finished ? "SUCCEEDED" : "RUNNING" },
  stateChanges: [],
  warnings: [],
  progress: finished ? 1 : 0,
  finished,
  stats: { rowsOut: 0, elapsedMillis, filesRead: 1, bytesRead: 10, recordsRead: 2 },
});

Deno.test("a running query's events tick: stats come with nothing else changing, and stop at the end", async () => {
  const state = { now: running(5) };
  const feed = feedOf(state);
  const reader = queryEvents(feed, undefined, { tickEveryMs: 5 }).getReader();
  const got: QueryEvent[] = [];
  while (got.filter((e) => e.event === "stats").length < 3) {
    const { value, done } = await reader.read();
    assert.ok(!done);
    got.push(value);
    // The query's clock moves on; nothing tells the feed.
    state.now = running(5 + got.length);
  }
  assert.equal(got[0]!.event, "status");
  const ticks = got.filter((e) => e.event === "stats").map((e) => e.data as FeedState["stats"]);
  // No progress or state came: the stats came by themselves, each with the time then.
  assert.deepEqual(got.filter((e) => e.event !== "stats").map((e) => e.event), ["status"]);
  for (let i = 1; i < ticks.length; i++) {
    assert.ok(ticks[i]!.elapsedMillis > ticks[i - 1]!.elapsedMillis);
  }
  state.now = running(100, true);
  feed.change();
  const rest: QueryEvent[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    rest.push(value);
  }
  // The end's progress and stats, then the stream closes: no tick after the end.
  assert.equal(rest.at(-1)!.event, "stats");
  assert.equal((rest.at(-1)!.data as FeedState["stats"]).elapsedMillis, 100);
});

Deno.test("the time left is estimated from the progress only when the input's size is known", () => {
  assert.equal(etaMillis(0.25, 3000), 9000);
  assert.equal(etaMillis(0.5, 1000), 1000);
  // Nothing consumed of a known input yet, or an input of unknown size: no estimate.
  assert.equal(etaMillis(0, 3000), undefined);
  assert.equal(etaMillis(0.001, 3000), undefined);
  // Done, or no time yet: none either.
  assert.equal(etaMillis(1, 3000), undefined);
  assert.equal(etaMillis(0.5, 0), undefined);
});

/** A record of another server's query, in `state` after `changes` (NEW → ... → state). */
function recordIn(state: string, changes: string[]): SharedRecord {
  const stateChanges = changes.map((to, i) => ({ millis: i, from: changes[i - 1] ?? "NEW", to }));
  return {
    queryId: "q1",
    owner: "alice",
    server: "a",
    submitted: 0,
    scriptPath: "/user",
    excerpt: "",
    status: { queryId: "q1", state, progress: 0, warnings: [], stateChanges, stats: {} },
  } as unknown as SharedRecord;
}

Deno.test("another server's query: reads of its record that fail for a while do not end its events before its end is told", async () => {
  const running = recordIn("RUNNING", ["QUEUED", "RUNNING"]);
  const cancelled = recordIn("CANCELLED", ["QUEUED", "RUNNING", "CANCELLED"]);
  let reads = 0;
  const shared = {
    record(): Promise<{ record: SharedRecord; version: string } | null> {
      reads++;
      // The storage fails all but once less than the feed allows, then tells the end.
      if (reads < REMOTE_READ_ATTEMPTS) return Promise.reject(new Error("database is locked"));
      return Promise.resolve({ record: cancelled, version: "2" });
    },
  };
  const told: QueryEvent[] = [];
  for await (const e of queryEvents(recordFeed(shared, running, 1), undefined)) told.push(e);
  assert.deepEqual(
    told.filter((e) => e.event === "state").map((e) => (e.data as { to: string }).to),
    ["CANCELLED"],
  );
  assert.equal(reads, REMOTE_READ_ATTEMPTS);
});

Deno.test("another server's query: a record that cannot be read at all ends its events", async () => {
  let reads = 0;
  const shared = {
    record: () => {
      reads++;
      return Promise.reject(new Error("gone"));
    },
  };
  const running = recordIn("RUNNING", ["QUEUED", "RUNNING"]);
  const told: QueryEvent[] = [];
  for await (const e of queryEvents(recordFeed(shared, running, 1), undefined)) told.push(e);
  assert.deepEqual(told.map((e) => e.event), ["status"]);
  assert.equal(reads, REMOTE_READ_ATTEMPTS);
});
