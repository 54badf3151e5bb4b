import assert from "node:assert/strict";
import { contentRange, parseRange, resolveRange } from "./range.ts";

Deno.test("parseRange() reads closed and open-ended item ranges", () => {
  assert.deepEqual(parseRange(null), { ok: true, range: null });
  assert.deepEqual(parseRange("items=0-9"), { ok: true, range: { first: 0, last: 9 } });
  assert.deepEqual(parseRange("items=5-"), { ok: true, range: { first: 5, last: undefined } });
});

Deno.test("a one-item range items=n-n asks for exactly that item", () => {
  assert.deepEqual(parseRange("items=0-0"), { ok: true, range: { first: 0, last: 0 } });
  assert.deepEqual(parseRange("items=7-7"), { ok: true, range: { first: 7, last: 7 } });
  assert.deepEqual(resolveRange({ first: 0, last: 0 }, 1), { ok: true, first: 0, last: 0 });
  assert.deepEqual(resolveRange({ first: 0, last: 0 }, 10), { ok: true, first: 0, last: 0 });
  assert.deepEqual(resolveRange({ first: 9, last: 9 }, 10), { ok: true, first: 9, last: 9 });
  assert.equal(contentRange(0, 0, 10), "items 0-0/10");
});

Deno.test("a huge last item is clipped and a huge first item is past the end, not malformed", () => {
  for (const h of ["items=0-9007199254740991", "items=1-99999999999999999999"]) {
    const r = parseRange(h);
    assert.ok(r.ok, h);
    assert.deepEqual(resolveRange(r.range!, 10), {
      ok: true,
      first: h.endsWith("991") ? 0 : 1,
      last: 9,
    });
  }
  const far = parseRange("items=99999999999999999999-");
  assert.ok(far.ok);
  assert.equal(resolveRange(far.range!, 10).ok, false);
});

Deno.test("parseRange() refuses malformed ranges", () => {
  for (const h of ["bytes=0-9", "items=9-3", "items=-5", "items=a-b", "items=1-2,4-5", "items="]) {
    const r = parseRange(h);
    assert.ok(!r.ok, h);
  }
});

Deno.test("resolveRange() clips the last item and refuses a first item past the end", () => {
  assert.deepEqual(resolveRange({ first: 2, last: 100 }, 10), { ok: true, first: 2, last: 9 });
  assert.deepEqual(resolveRange({ first: 2 }, 10), { ok: true, first: 2, last: 9 });
  assert.equal(resolveRange({ first: 10 }, 10).ok, false);
  assert.equal(resolveRange({ first: 0 }, 0).ok, false);
  assert.equal(contentRange(0, 9, 120), "items 0-9/120");
});
