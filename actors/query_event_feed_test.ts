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
  type StatusFeed,
} from "./query_event_feed.ts";
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
