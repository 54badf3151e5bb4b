import assert from "node:assert/strict";
import { engineHome } from "../tests/support/engine_home.ts";
import { compile, execute, explain } from "./engine.ts";
import { schemaToJson } from "./values/types.ts";
import { formatDiagnostic } from "./front/diagnostics.ts";

Deno.test("compile() and execute() run VALUES | select | filter end to end", async () => {
  await using home = await engineHome();
  const { rows, schema } = await home.run(
    "VALUES((a: 1, b: 'x'), (a: 2, b: 'y'), (a: 3, b: null)) | select(a * 10 as ten, b) | filter(ten > 10)",
  );
  assert.deepEqual(rows, [{ ten: 20, b: "y" }, { ten: 30, b: null }]);
  assert.deepEqual(schemaToJson(schema), { ten: "LONG", b: "?STRING" });
});

Deno.test("execute() returns at once and reports progress 1 at the end", async () => {
  await using home = await engineHome();
  const compiled = await compile({ text: "VALUES((a: 1)) | select(a)" }, home.context());
  assert.ok(compiled.ok);
  const progress: number[] = [];
  const run = execute(compiled.plan, {
    signal: new AbortController().signal,
    onProgress: (f) => progress.push(f),
  });
  const batches = [];
  for await (const b of run.batches) batches.push(b);
  assert.deepEqual(batches, [[{ a: 1 }]]);
  assert.equal(progress.at(-1), 1);
});

Deno.test("select names columns by alias, by field name, else f_<position>", async () => {
  await using home = await engineHome();
  const { rows } = await home.run("VALUES((a: 1, b: 2)) | select(a, b + 1, a as c)");
  assert.deepEqual(rows, [{ a: 1, f_2: 3, c: 1 }]);
});

Deno.test("select(*) keeps all fields and may add more", async () => {
  await using home = await engineHome();
  const { rows, schema } = await home.run("VALUES((a: 1, b: 'x')) | select(*, a + 1 as n)");
  assert.deepEqual(rows, [{ a: 1, b: "x", n: 2 }]);
  assert.deepEqual(schema.map((f) => f.name), ["a", "b", "n"]);
});

Deno.test("filter_out drops rows where the condition is true and keeps those where it is null", async () => {
  await using home = await engineHome();
  const { rows } = await home.run(
    "VALUES((a: 1), (a: null), (a: 3)) | filter_out(a = 1)",
  );
  assert.deepEqual(rows, [{ a: null }, { a: 3 }]);
});

Deno.test("aggregates without group give one row, even over no input", async () => {
  await using home = await engineHome();
  const { rows, schema } = await home.run(
    "VALUES((a: 1)) | filter(a > 5) | select(count(*) as n, sum(a) as s, max(a) as m)",
  );
  assert.deepEqual(rows, [{ n: 0, s: null, m: null }]);
  assert.deepEqual(schemaToJson(schema), { n: "LONG", s: "?LONG", m: "?INTEGER" });
});

Deno.test("group computes the select's aggregates per key, by name, position or expression", async () => {
  await using home = await engineHome();
  const data = "VALUES((h: 'a', x: 1), (h: 'b', x: 2), (h: 'a', x: 5), (h: null, x: 7))";
  const byName = await home.run(
    `${data} | select(h, count(*) as n, sum(x) / count(*) as mean) | group(h) | sort(h)`,
  );
  assert.deepEqual(byName.rows, [
    { h: "a", n: 2, mean: 3 },
    { h: "b", n: 1, mean: 2 },
    { h: null, n: 1, mean: 7 },
  ]);
  const byPosition = await home.run(
    `${data} | select(upper(h) as k, max(x)) | group(@1) | sort(k)`,
  );
  assert.deepEqual(byPosition.rows, [{ k: "A", f_2: 5 }, { k: "B", f_2: 2 }, { k: null, f_2: 7 }]);
  const byExpr = await home.run(`${data} | select(count(*) as n) | group(x > 3) | sort(n)`);
  assert.deepEqual(byExpr.rows, [{ n: 2 }, { n: 2 }]);
});

Deno.test("sort is stable and puts nulls last in both directions", async () => {
  await using home = await engineHome();
  const data = "VALUES((k: 2, i: 1), (k: null, i: 2), (k: 1, i: 3), (k: 2, i: 4))";
  const asc = await home.run(`${data} | sort(k)`);
  assert.deepEqual(asc.rows.map((r) => r.i), [3, 1, 4, 2]);
  const desc = await home.run(`${data} | sort(k desc)`);
  assert.deepEqual(desc.rows.map((r) => r.i), [1, 4, 3, 2]);
});

Deno.test("limit takes n rows after the offset", async () => {
  await using home = await engineHome();
  const { rows } = await home.run("VALUES((a: 1), (a: 2), (a: 3), (a: 4)) | limit(2, 1)");
  assert.deepEqual(rows, [{ a: 2 }, { a: 3 }]);
});

Deno.test("join and leftjoin match on equalities and prefix clashing right fields", async () => {
  await using home = await engineHome();
  const script = `
    @names = VALUES((id: 1, name: 'one'), (id: 2, name: 'two'));
    @facts = VALUES((id: 1, v: 'a'), (id: 3, v: 'c'), (id: 1, v: 'b'));
    @facts | JOINKIND(@names on left.id = right.id) | sort(v)`;
  const inner = await home.run(script.replace("JOINKIND", "join"));
  assert.deepEqual(inner.rows, [
    { id: 1, v: "a", right_id: 1, name: "one" },
    { id: 1, v: "b", right_id: 1, name: "one" },
  ]);
  const outer = await home.run(script.replace("JOINKIND", "leftjoin"));
  assert.deepEqual(outer.rows.map((r) => [r.v, r.name]), [["a", "one"], ["b", "one"], ["c", null]]);
  assert.deepEqual(schemaToJson(outer.schema), {
    id: "INTEGER",
    v: "STRING",
    right_id: "?INTEGER",
    name: "?STRING",
  });
});

Deno.test("union appends streams, matching fields by name and widening types", async () => {
  await using home = await engineHome();
  const { rows, schema } = await home.run(`
    @a = VALUES((x: 1, y: 'p'));
    @b = VALUES((x: 5000000000L));
    @a | union(@b)`);
  assert.deepEqual(rows, [{ x: 1, y: "p" }, { x: 5000000000, y: null }]);
  assert.deepEqual(schemaToJson(schema), { x: "LONG", y: "?STRING" });
});

Deno.test("a stream bound once can be used twice", async () => {
  await using home = await engineHome();
  const { rows } = await home.run(
    "@s = VALUES((a: 1), (a: 2)); @s | union(@s) | select(count(*) as n)",
  );
  assert.deepEqual(rows, [{ n: 4 }]);
});

Deno.test("constants are evaluated at compile time and read as $name", async () => {
  await using home = await engineHome();
  const { rows } = await home.run(
    "$min = 1 + 1; VALUES((a: 1), (a: 2), (a: 3)) | filter(a >= $min)",
  );
  assert.deepEqual(rows, [{ a: 2 }, { a: 3 }]);
});

Deno.test("compile() reports an unknown field with its line and column", async () => {
  await using home = await engineHome();
  const diagnostics = await home.diagnose("VALUES((a: 1))\n| filter(nope = 1)");
  assert.equal(diagnostics.length, 1);
  assert.equal(diagnostics[0]!.line, 2);
  assert.match(formatDiagnostic(diagnostics[0]!), /nope/);
});

Deno.test("compile() refuses a script without a pipeline", async () => {
  await using home = await engineHome();
  const diagnostics = await home.diagnose("$a = 1;");
  assert.ok(diagnostics.some((d) => d.code === "NO_RESULT"), JSON.stringify(diagnostics));
});

Deno.test("explain() prints one operator a line with its schema", async () => {
  await using home = await engineHome();
  const compiled = await compile(
    { text: "VALUES((a: 1, b: 'x')) | filter(a > 0) | select(a)" },
    home.context(),
  );
  assert.ok(compiled.ok);
  assert.equal(
    explain(compiled.plan),
    [
      "project a as a  [a INTEGER]",
      "  filter (a > 0)  [a INTEGER, b STRING]",
      "    values 1 row  [a INTEGER, b STRING]",
    ]
      .join("\n"),
  );
});

Deno.test("distinct counts are charged to the memory budget", async () => {
  await using home = await engineHome({ memoryLimit: 32 * 1024 });
  const rows = Array.from({ length: 2000 }, (_, i) => `(s: 'value number ${i}')`).join(", ");
  const small = await home.run(`VALUES(${rows}) | limit(10) | select(count_distinct(s) as n)`);
  assert.deepEqual(small.rows, [{ n: 10 }]);
  await assert.rejects(
    () => home.run(`VALUES(${rows}) | select(count_distinct(s) as n)`),
    /MEMORY_LIMIT|memory limit/,
  );
});

Deno.test("the same script text compiled again is planned again: a stored script it calls is read anew, and rights and limits apply", async () => {
  await using home = await engineHome();
  await home.write("/user/again.sx", "VALUES((a: 1))");
  // A text of its own (the checked texts are kept by text across tests).
  const text = "@[again.sx] | select(a) // compiled again";
  assert.deepEqual((await home.run(text)).rows, [{ a: 1 }]);
  assert.deepEqual((await home.run(text)).rows, [{ a: 1 }], "the kept syntax tree runs again");
  await home.write("/user/again.sx", "VALUES((a: 2), (a: 3))");
  assert.deepEqual((await home.run(text)).rows, [{ a: 2 }, { a: 3 }], "the new stored script");
  // Its limits are the query's: the same text over the limit is refused.
  const [d] = await home.diagnose(text, {
    limits: { memoryLimit: 256 * 1024 * 1024, maxScriptBytes: text.length },
  });
  assert.equal(d?.code, "BAD_ARGUMENT");
  // Another user resolves `again.sx` in their own folder, where there is none.
  const other = { name: "mallory", groups: [], admin: false };
  assert.ok((await home.diagnose(text, { user: other, workDir: "/users/mallory" })).length > 0);
  assert.deepEqual((await home.run(text)).rows, [{ a: 2 }, { a: 3 }]);
});
