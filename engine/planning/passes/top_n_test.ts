import assert from "node:assert/strict";
import { engineHome } from "../../../tests/support/engine_home.ts";
import { compile, explain } from "../../engine.ts";
import { QueryError } from "../../front/diagnostics.ts";

const ROWS = Array.from({ length: 20 }, (_, i) => `(k: ${(i * 7) % 20}, i: ${i})`).join(", ");
const DATA = `VALUES(${ROWS})`;

Deno.test("explain() shows a sort under a limit as a top-N sort holding count + offset rows", async () => {
  await using home = await engineHome();
  const text = `${DATA} | sort(k desc, i) | limit(3, 2)`;
  const compiled = await compile({ text }, home.context());
  assert.ok(compiled.ok);
  assert.equal(
    explain(compiled.plan),
    [
      "limit 3 offset 2  [k INTEGER, i INTEGER]",
      "  sort k desc, i (top 5)  [k INTEGER, i INTEGER]",
      "    values 20 rows  [k INTEGER, i INTEGER]",
    ].join("\n"),
  );
  const whole = await home.run(`${DATA} | sort(k desc, i)`);
  assert.deepEqual((await home.run(text)).rows, whole.rows.slice(2, 5));
});

Deno.test("a sort with anything between it and the limit sorts every row", async () => {
  await using home = await engineHome();
  const compiled = await compile(
    { text: `${DATA} | sort(k) | select(i) | limit(3)` },
    home.context(),
  );
  assert.ok(compiled.ok);
  assert.match(explain(compiled.plan), /\n {4}sort k {2}\[/);
});

Deno.test("a top-N sort holds only its rows, so it fits a budget the whole sort exceeds", async () => {
  await using home = await engineHome({ memoryLimit: 64 * 1024 });
  const many = Array.from({ length: 3000 }, (_, i) => `(s: 'row number ${i}')`).join(", ");
  const { rows } = await home.run(`VALUES(${many}) | sort(s desc) | limit(2)`);
  assert.deepEqual(rows, [{ s: "row number 999" }, { s: "row number 998" }]);
  await assert.rejects(
    () => home.run(`VALUES(${many}) | sort(s desc) | select(s) | limit(2)`),
    (e: unknown) => e instanceof QueryError && e.diagnostic.code === "MEMORY_LIMIT",
  );
});
