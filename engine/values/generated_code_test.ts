import assert from "node:assert/strict";
import { generatedFunction, MAX_KEPT } from "./generated_code.ts";

Deno.test("generatedFunction() makes one factory per text and keeps the most recently used", () => {
  const body = "return (x) => x + k;";
  const a = generatedFunction<(k: number) => (x: number) => number>(["k"], body);
  assert.equal(generatedFunction(["k"], body), a, "the same text: the same function");
  assert.equal(a(1)(2), 3);
  assert.notEqual(generatedFunction(["k"], "return (x) => x - k;"), a);
  assert.notEqual(generatedFunction(["j"], body), a, "other parameters: another function");
  // Past MAX_KEPT others, a factory used in between stays and one left alone goes.
  const idle = generatedFunction(["k"], "return 'idle';");
  for (let i = 0; i < MAX_KEPT; i++) {
    generatedFunction(["k"], `return ${i};`);
    if (i % 16 === 0) generatedFunction(["k"], body);
  }
  assert.equal(generatedFunction(["k"], body), a);
  assert.notEqual(generatedFunction(["k"], "return 'idle';"), idle);
});
