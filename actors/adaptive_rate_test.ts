import assert from "node:assert/strict";
import { AdaptiveRate, DECREASE, GROW_UNITS } from "./adaptive_rate.ts";

const CONFIGURED = { limit: 40, unitMs: 1_000 };

Deno.test("a burst of throttling answers lowers the rate once, to at most half", () => {
  const rate = new AdaptiveRate();
  assert.equal(rate.limit(CONFIGURED, 0).limit, 40);
  for (let i = 0; i < 40; i++) rate.granted(0);
  // The provider admits 10 of the 40: 30 throttling answers of one burst.
  for (let i = 0; i < 30; i++) rate.throttled(10 + i);
  assert.equal(rate.limit(CONFIGURED, 100).limit, 20, "halved, not cut to 1");
  for (let i = 0; i < 20; i++) rate.granted(2_000);
  for (let i = 0; i < 10; i++) rate.throttled(2_010 + i);
  assert.equal(rate.limit(CONFIGURED, 2_100).limit, 10, "the next episode finds what was admitted");
});

Deno.test("a single throttling answer lowers the rate by DECREASE; it grows back one step per few busy units", () => {
  const rate = new AdaptiveRate();
  const configured = { limit: 20, unitMs: 1_000 };
  rate.limit(configured, 0);
  for (let i = 0; i < 20; i++) rate.granted(0);
  rate.throttled(10);
  const lowered = Math.round(20 * DECREASE);
  assert.equal(rate.limit(configured, 20).limit, lowered, "one probe too many: DECREASE");
  /** A busy unit: the whole rate used, just before `t`. */
  const busy = (t: number) => {
    const n = rate.limit(configured, t - 1).limit;
    for (let i = 0; i < n; i++) rate.granted(t - 1);
  };
  const due = 10 + GROW_UNITS * 1_000;
  busy(due - 1);
  assert.equal(rate.limit(configured, due - 1).limit, lowered, "not yet");
  busy(due);
  assert.equal(rate.limit(configured, due).limit, lowered + 1, "one step");
  let t = due;
  for (let i = 0; i < 10; i++) busy(t += GROW_UNITS * 1_000);
  assert.equal(rate.limit(configured, t).limit, 20, "never above the configured limit");
});

Deno.test("a budget used below its rate does not grow", () => {
  const rate = new AdaptiveRate();
  const configured = { limit: 20, unitMs: 1_000 };
  rate.limit(configured, 0);
  for (let i = 0; i < 20; i++) rate.granted(0);
  rate.throttled(10);
  const lowered = rate.limit(configured, 20).limit;
  for (let t = 1_000; t < 30_000; t += 1_000) {
    rate.granted(t); // one request a unit: far below the rate
    assert.equal(rate.limit(configured, t).limit, lowered, `at ${t}`);
  }
});

Deno.test("a lowered configured limit applies at once, whatever the rate", () => {
  const rate = new AdaptiveRate();
  rate.limit(CONFIGURED, 0);
  assert.deepEqual(rate.limit({ limit: 5, unitMs: 10_000 }, 1), { limit: 5, unitMs: 10_000 });
});
