/**
 * Scripts long enough to overflow the stack of the recursive passes (checker, planner, compiled
 * expressions) are refused with a diagnostic naming the limit and the place; scripts just within
 * the limits compile and run.
 */

import assert from "node:assert/strict";
import { engineHome } from "../tests/support/engine_home.ts";
import { MAX_EXPR_OPERATORS } from "./front/parser.ts";
import { MAX_PIPELINE_OPERATORS } from "./front/checker.ts";
import { MAX_VIEW_DEPTH } from "./planning/views.ts";

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

/** Views w0.sx … w<levels>.sx, each reading the next twice: w0 runs 2^levels rows. */
async function doublingViews(home: { write(p: string, s: string): Promise<void> }, levels: number) {
  for (let i = 0; i < levels; i++) {
    await home.write(`/user/w${i}.sx`, `@x = @[w${i + 1}.sx];\n@x | union(@x)`);
  }
  await home.write(`/user/w${levels}.sx`, "VALUES((a: 1))");
}

Deno.test("a view reading a view twice counts its operators at every use: 20 levels are refused, naming the view past the limit", async () => {
  await using home = await engineHome();
  await doublingViews(home, 20);
  const diagnostics = await home.diagnose("@[w0.sx]");
  assert.equal(diagnostics.length, 1, JSON.stringify(diagnostics));
  const [d] = diagnostics;
  assert.equal(d!.code, "SYNTAX_ERROR");
  // w11 reads 2 × 511 operators of w12 and adds a union: the first level past 1000.
  assert.match(
    d!.message,
    /^pipeline too long: 1023 operators, counting those of the streams and stored scripts it reads, more than 1000/,
  );
  assert.equal(d!.script, "/users/alice/w11.sx");
  assert.deepEqual([d!.line, d!.column], [2, 1]);
});

Deno.test("views within the operator limit run: 8 doublings are 511 operators and 256 rows", async () => {
  await using home = await engineHome();
  await doublingViews(home, 8);
  const { rows } = await home.run("@[w0.sx]");
  assert.equal(rows.length, 256);
  // One more operator in the caller is still within the limit; a view of 1023 is not.
  assert.equal((await home.run("@[w0.sx] | filter(a = 1)")).rows.length, 256);
  await doublingViews(home, 9);
  const [d] = await home.diagnose("@[w0.sx]");
  assert.match(d!.message, /pipeline too long: 1023 operators/);
});

Deno.test("a view's operators count in the pipeline that calls it", async () => {
  await using home = await engineHome();
  await home.write("/user/long.sx", `VALUES((a: 1))${" | filter(true)".repeat(600)}`);
  assert.equal((await home.run("@[long.sx]")).rows.length, 1);
  const [d] = await home.diagnose("@[long.sx] | union(@[long.sx])");
  assert.equal(d!.code, "SYNTAX_ERROR");
  assert.equal(d!.script, undefined);
  assert.match(d!.message, /^pipeline too long: 1203 operators/);
});

Deno.test("3000 views each calling the next are refused at the nesting limit, naming it", async () => {
  await using home = await engineHome();
  for (let i = 0; i < 3000; i++) await home.write(`/user/c${i}.sx`, `@[c${i + 1}.sx]`);
  await home.write("/user/c3000.sx", "VALUES((a: 1))");
  const diagnostics = await home.diagnose("@[c0.sx]");
  assert.equal(diagnostics.length, 1, JSON.stringify(diagnostics));
  const [d] = diagnostics;
  assert.equal(d!.code, "RECURSION");
  assert.equal(
    d!.message,
    `stored scripts nested too deeply: calling /users/alice/c${MAX_VIEW_DEPTH}.sx here makes ` +
      `${MAX_VIEW_DEPTH + 1} stored scripts called one inside another (from /users/alice/c0.sx), ` +
      `more than ${MAX_VIEW_DEPTH}`,
  );
  assert.equal(d!.script, `/users/alice/c${MAX_VIEW_DEPTH - 1}.sx`);
  // Run by its path, the script run is the first of the nesting.
  const [byPath] = await home.diagnose({ path: "/user/c0.sx" });
  assert.match(byPath!.message, new RegExp(`calling /users/alice/c${MAX_VIEW_DEPTH}\\.sx`));
  // At the limit, the nesting runs.
  await home.write(`/user/c${MAX_VIEW_DEPTH - 1}.sx`, "VALUES((a: 1))");
  assert.deepEqual((await home.run("@[c0.sx]")).rows, [{ a: 1 }]);
  assert.deepEqual((await home.run({ path: "/user/c0.sx" })).rows, [{ a: 1 }]);
});

Deno.test("query.maxScriptBytes counts a view's text at every call", async () => {
  await using home = await engineHome();
  const view = `// ${"x".repeat(300)}\nVALUES((a: 1))`;
  await home.write("/user/v.sx", view);
  const script = "@[v.sx] | union(@[v.sx], @[v.sx])";
  const within = script.length + 3 * view.length;
  assert.equal(
    (await home.run(script, { limits: { memoryLimit: 256 * 1024 * 1024, maxScriptBytes: within } }))
      .rows.length,
    3,
  );
  const [d] = await home.diagnose(script, {
    limits: { memoryLimit: 256 * 1024 * 1024, maxScriptBytes: within - 1 },
  });
  assert.equal(d!.code, "BAD_ARGUMENT");
  assert.match(d!.message, /query\.maxScriptBytes/);
});
