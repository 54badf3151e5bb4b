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
    ["routes/a.ts", ["actors/b.ts", "engine/mod.ts", "home/d.ts"]],
    ["actors/b.ts", ["engine/mod.ts", "connectors/e.ts", "home/d.ts"]],
    ["connectors/e.ts", ["engine/contracts/c.ts"]],
    ["home/d.ts", ["engine/contracts/c.ts"]],
    ["engine/mod.ts", ["engine/contracts/c.ts"]],
    ["engine/contracts/c.ts", []],
    ["engine/contracts/c_test.ts", ["tests/support/x.ts"]],
    ["tests/x_test.ts", ["routes/a.ts", "main.ts"]],
  ]);
  assert.deepEqual(findProblems(graph), []);
});

Deno.test("findProblems() refuses connectors importing actors or the home, and a unit test reaching past tests/support", () => {
  const graph = new Map([
    ["connectors/e.ts", ["actors/b.ts", "home/d.ts"]],
    ["engine/contracts/c_test.ts", ["connectors/e.ts"]],
    ["actors/b.ts", []],
    ["home/d.ts", []],
  ]);
  assert.equal(findProblems(graph).filter((p) => p.kind === "layer").length, 3);
});

Deno.test("findProblems() refuses an engine file importing a sub-layer above its own", () => {
  const graph = new Map([
    // The plan under the execution; the patterns under the operators.
    ["engine/plan/plan.ts", ["engine/exec/context.ts", "engine/values/values.ts"]],
    ["engine/pattern/byte_scanner.ts", ["engine/exec/group_table.ts"]],
    // The one exception is of one file: its neighbour may not do the same.
    ["engine/front/checker_catalog.ts", ["engine/functions/f.ts"]],
    ["engine/front/checker.ts", ["engine/functions/f.ts"]],
    ["engine/functions/f.ts", []],
    ["engine/exec/context.ts", ["engine/values/values.ts"]],
    ["engine/exec/group_table.ts", []],
    ["engine/values/values.ts", []],
  ]);
  const problems = findProblems(graph);
  assert.deepEqual(problems.map((p) => [p.kind, p.message.split(":")[0]]), [
    ["engine", "engine/plan/plan.ts imports engine/exec/context.ts"],
    ["engine", "engine/pattern/byte_scanner.ts imports engine/exec/group_table.ts"],
    ["engine", "engine/front/checker.ts imports engine/functions/f.ts"],
  ]);
  assert.match(problems[0]!.message, /engine\/plan\/ may not import engine\/exec/);
});

Deno.test("findProblems() lets a sub-layer import those below and a test beside the code anything", () => {
  const graph = new Map([
    ["engine/engine.ts", ["engine/planning/planner.ts", "engine/exec/run.ts"]],
    ["engine/planning/planner.ts", ["engine/exec/run.ts", "engine/front/ast.ts"]],
    ["engine/exec/run.ts", ["engine/plan/plan.ts", "engine/pattern/p.ts"]],
    ["engine/pattern/p.ts", ["engine/functions/f.ts", "engine/plan/plan.ts"]],
    ["engine/functions/f.ts", ["engine/expr/e.ts"]],
    ["engine/expr/e.ts", ["engine/values/values.ts"]],
    ["engine/plan/plan.ts", ["engine/values/values.ts"]],
    ["engine/values/values.ts", []],
    ["engine/front/ast.ts", []],
    ["engine/exec/run_test.ts", ["engine/engine.ts"]],
  ]);
  assert.deepEqual(findProblems(graph), []);
});

Deno.test("findProblems() keeps routes and actors at the engine's door, connectors at its contracts", () => {
  const graph = new Map([
    ["routes/a.ts", ["engine/front/lexer.ts"]],
    ["actors/b.ts", ["engine/exec/run.ts", "engine/mod.ts"]],
    ["connectors/e.ts", ["engine/exec/run.ts", "engine/contracts/datastore.ts"]],
    ["home/d.ts", ["engine/engine.ts"]],
    ["engine/front/lexer.ts", []],
    ["engine/exec/run.ts", []],
    ["engine/contracts/datastore.ts", []],
    ["engine/mod.ts", []],
    ["engine/engine.ts", []],
  ]);
  assert.deepEqual(findProblems(graph).map((p) => p.message.split(":")[0]), [
    "routes/a.ts imports engine/front/lexer.ts",
    "actors/b.ts imports engine/exec/run.ts",
    "connectors/e.ts imports engine/exec/run.ts",
    "home/d.ts imports engine/engine.ts",
  ]);
});

Deno.test("findProblems() names an engine folder that is in no sub-layer", () => {
  const graph = new Map([["engine/exec/a.ts", ["engine/cache/b.ts"]], ["engine/cache/b.ts", []]]);
  assert.deepEqual(findProblems(graph).map((p) => p.kind), ["unknown"]);
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
