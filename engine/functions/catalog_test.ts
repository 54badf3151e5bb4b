import assert from "node:assert/strict";
import { FUNCTION_CATALOG } from "../checker_catalog.ts";
import { AGGREGATES } from "./aggregates.ts";
import { functionArity, FUNCTIONS } from "./function_registry.ts";

Deno.test("every function of the checker's catalog is implemented, with the same arity", () => {
  for (const sig of FUNCTION_CATALOG) {
    if (sig.aggregate) {
      assert.ok(AGGREGATES.has(sig.name), `aggregate ${sig.name} is not implemented`);
      continue;
    }
    const def = FUNCTIONS.get(sig.name);
    assert.ok(def, `function ${sig.name} is not implemented`);
    const { min, max } = functionArity(def);
    assert.deepEqual({ min, max }, { min: sig.minArgs, max: sig.maxArgs }, sig.name);
  }
});

Deno.test("every implemented function is in the checker's catalog", () => {
  const catalog = new Map(FUNCTION_CATALOG.map((f) => [f.name, f]));
  for (const name of FUNCTIONS.keys()) {
    assert.equal(catalog.get(name)?.aggregate, false, `${name} is missing from the catalog`);
  }
  for (const name of AGGREGATES.keys()) {
    assert.equal(catalog.get(name)?.aggregate, true, `${name} is missing from the catalog`);
  }
});
