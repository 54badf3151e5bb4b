/**
 * Scripts long enough to overflow the stack of the recursive passes (checker, planner, compiled
 * expressions) are refused with a diagnostic naming the limit and the place; scripts just within
 * the limits compile and run.
 */

import assert from "node:assert/strict";
import { engineHome } from "../tests/support/engine_home.ts";
import { MAX_EXPR_OPERATORS } from "./front/parser.ts";
import { MAX_PIPELINE_OPERATORS } from "./front/checker.ts";

function chainOfStreams(n: number): string {
  const lines = ["@s0 = VALUES((a: 1));"];
  for (let i = 1; i <= n; i++) lines.push(`@s${i} = @s${i - 1} | filter(true);`);
  return `${lines.join("\n")}\n@s${n}`;
}

Deno.test("10 000-term chains and 5 000-command pipelines are refused with the limit named", async () => {
  await using home = await engineHome();
  const cases: [string, RegExp][] = [
    [
      `VALUES((a: 1)) | select(${Array(10_000).fill("1").join(" + ")} as x)`,
      /expression too long: more than 1000 operators .*'\+'/,
    ],
    [
      `VALUES((a: 1)) | filter(${Array(10_000).fill("a = 1").join(" or ")})`,
      /expression too long: more than 1000 operators .*'or'/,
    ],
    [`VALUES((a: 1))${" | filter(true)".repeat(5000)}`, /pipeline too long: 5001 operators/],
    [chainOfStreams(5000), /pipeline too long: 1001 operators, counting those of the streams/],
  ];
  for (const [text, message] of cases) {
    const diagnostics = await home.diagnose(text);
    assert.equal(diagnostics.length, 1, `${text.slice(0, 60)}: ${JSON.stringify(diagnostics)}`);
    assert.equal(diagnostics[0]!.code, "SYNTAX_ERROR");
    assert.match(diagnostics[0]!.message, message);
  }
});

Deno.test("the diagnostic points at the operator or command past the limit", async () => {
  await using home = await engineHome();
  const prefix = "VALUES((a: 1)) | select(";
  const [d] = await home.diagnose(`${prefix}${Array(1100).fill("1").join(" + ")} as x)`);
  // Terms are "1 + ": the 1001st '+' follows 1001 terms.
  assert.deepEqual([d!.line, d!.column], [1, prefix.length + 1001 * 4 - 1]);
  const [p] = await home.diagnose(chainOfStreams(1200));
  assert.equal(p!.line, MAX_PIPELINE_OPERATORS + 1);
});

Deno.test("scripts at the limits compile and run", async () => {
  await using home = await engineHome();
  const plus = await home.run(
    `VALUES((a: 1)) | select(${Array(MAX_EXPR_OPERATORS + 1).fill("1").join(" + ")} as x)`,
  );
  assert.deepEqual(plus.rows, [{ x: MAX_EXPR_OPERATORS + 1 }]);
  const terms = [...Array(MAX_EXPR_OPERATORS).fill("a = 2"), "a = 1"];
  const or = await home.run(`VALUES((a: 1)) | filter(${terms.join(" or ")})`);
  assert.equal(or.rows.length, 1);
  const filters = await home.run(
    `VALUES((a: 1))${" | filter(true)".repeat(MAX_PIPELINE_OPERATORS - 1)}`,
  );
  assert.equal(filters.rows.length, 1);
  const streams = await home.run(chainOfStreams(MAX_PIPELINE_OPERATORS - 1));
  assert.equal(streams.rows.length, 1);
});
