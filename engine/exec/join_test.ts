import assert from "node:assert/strict";
import { engineHome } from "../../tests/support/engine_home.ts";

const LEFT = "@l = VALUES((k: null, a: 1), (k: 1, a: 2), (k: null, a: 3));";
const RIGHT = "@r = VALUES((k: null, b: 'x'), (k: 1, b: 'y'), (k: null, b: 'z'));";

Deno.test("join() never matches a null key with a null key", async () => {
  await using home = await engineHome();
  const { rows } = await home.run(
    `${LEFT} ${RIGHT} @l | join(@r on left.k = right.k) | select(a, b) | sort(a)`,
  );
  assert.deepEqual(rows, [{ a: 2, b: "y" }]);
});

Deno.test("leftjoin() keeps a left row with a null key, unmatched, its right fields null", async () => {
  await using home = await engineHome();
  const { rows } = await home.run(
    `${LEFT} ${RIGHT} @l | leftjoin(@r on left.k = right.k) | select(a, b) | sort(a)`,
  );
  assert.deepEqual(rows, [{ a: 1, b: null }, { a: 2, b: "y" }, { a: 3, b: null }]);
});

Deno.test("join() on two keys matches nothing where either key is null", async () => {
  await using home = await engineHome();
  const { rows } = await home.run(
    "@l = VALUES((h: 'a', p: null, n: 1), (h: 'a', p: 80, n: 2));" +
      "@r = VALUES((h: 'a', p: null, m: 'x'), (h: 'a', p: 80, m: 'y'));" +
      "@l | join(@r on left.h = right.h and left.p = right.p) | select(n, m)",
  );
  assert.deepEqual(rows, [{ n: 2, m: "y" }]);
});
