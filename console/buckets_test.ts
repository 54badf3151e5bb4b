import assert from "node:assert/strict";
import { withEmptyBuckets } from "./buckets.ts";

const MIN5 = 300_000;
const at = (hhmm: string) => Date.parse(`2024-05-01T${hhmm}:00Z`);

Deno.test("empty buckets between two given ones become zeros, in order, each one bucket wide", () => {
  const filled = withEmptyBuckets(
    [{ t: at("15:00"), n: 2 }, { t: at("13:00"), n: 3 }, { t: at("13:20"), n: 1 }],
    MIN5,
  );
  assert.equal(filled.length, 25); // 13:00 .. 15:00 in 5-minute steps
  assert.deepEqual(filled.slice(0, 5).map((b) => b.n), [3, 0, 0, 0, 1]);
  assert.deepEqual(filled.at(-1), { t: at("15:00"), n: 2 });
  for (let i = 1; i < filled.length; i++) assert.equal(filled[i]!.t - filled[i - 1]!.t, MIN5);
  assert.equal(filled.reduce((sum, b) => sum + b.n, 0), 6);
});

Deno.test("a day of 23 or 25 hours (daylight saving) is no gap; neighbours and one bucket add nothing", () => {
  const day = 86_400_000;
  const days = [0, day, 2 * day - 3_600_000, 3 * day - 3_600_000].map((t) => ({ t, n: 1 }));
  assert.deepEqual(withEmptyBuckets(days, day), days);
  assert.deepEqual(withEmptyBuckets([{ t: 0, n: 4 }], MIN5), [{ t: 0, n: 4 }]);
  assert.deepEqual(withEmptyBuckets([], MIN5), []);
});

Deno.test("at most `limit` zeros are added", () => {
  const filled = withEmptyBuckets([{ t: 0, n: 1 }, { t: 1_000 * MIN5, n: 1 }], MIN5, 10);
  assert.equal(filled.length, 12);
});
