import assert from "node:assert/strict";
import { findCycles, findProblems, importGraph } from "./check_layers.ts";

Deno.test("findProblems() refuses an engine file importing a route", () => {
  const graph = new Map([["engine/values.ts", ["routes/app.ts"]], ["routes/app.ts", []]]);
  const problems = findProblems(graph);
  assert.deepEqual(problems.map((p) => p.kind), ["layer"]);
  assert.match(problems[0]!.message, /engine\/values\.ts imports routes\/app\.ts/);
});

Deno.test("findProblems() lets a layer import what it stands on, and tests import anything", () => {
  const graph = new Map([
    ["routes/a.ts", ["actors/b.ts", "engine/c.ts", "home/d.ts"]],
    ["actors/b.ts", ["engine/c.ts", "connectors/e.ts", "home/d.ts"]],
    ["connectors/e.ts", ["engine/c.ts"]],
    ["home/d.ts", ["engine/c.ts"]],
    ["engine/c.ts", []],
    ["engine/c_test.ts", ["tests/support/x.ts"]],
    ["tests/x_test.ts", ["routes/a.ts", "main.ts"]],
  ]);
  assert.deepEqual(findProblems(graph), []);
});

Deno.test("findProblems() refuses connectors importing actors or the home, and a unit test reaching past tests/support", () => {
  const graph = new Map([
    ["connectors/e.ts", ["actors/b.ts", "home/d.ts"]],
    ["engine/c_test.ts", ["connectors/e.ts"]],
    ["actors/b.ts", []],
    ["home/d.ts", []],
  ]);
  assert.equal(findProblems(graph).filter((p) => p.kind === "layer").length, 3);
});

Deno.test("findCycles() names each cycle once, type imports included", () => {
  const graph = new Map([
    ["engine/a.ts", ["engine/b.ts"]],
    ["engine/b.ts", ["engine/c.ts"]],
    ["engine/c.ts", ["engine/a.ts"]],
    ["engine/d.ts", ["engine/a.ts"]],
  ]);
  assert.deepEqual(findCycles(graph), [["engine/a.ts", "engine/b.ts", "engine/c.ts"]]);
});

Deno.test("the repository itself has no layer problem", async () => {
  const problems = findProblems(await importGraph(Deno.cwd()));
  assert.deepEqual(problems.map((p) => p.message), []);
});
