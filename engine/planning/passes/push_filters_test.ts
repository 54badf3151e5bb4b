import assert from "node:assert/strict";
import { engineHome } from "../../../tests/support/engine_home.ts";
import { compile, explain } from "../../engine.ts";

const LOG = "200 512 /a\n404 128 /b\n200 2048 /c\n500 64 /d\n";
const PARSE =
  `PARSE(pattern: '''INT:status ' ' INT:bytes ' ' NSPACE:path''', src: '/shared/a.log')`;
const SCHEMA = "[status ?INTEGER, bytes ?INTEGER, path STRING]";

async function logHome() {
  const home = await engineHome();
  await home.write("/shared/a.log", LOG);
  return home;
}

async function explained(home: Awaited<ReturnType<typeof logHome>>, text: string) {
  const compiled = await compile({ text }, home.context());
  assert.ok(compiled.ok, JSON.stringify(!compiled.ok && compiled.diagnostics));
  return explain(compiled.plan);
}

Deno.test("explain() shows a filter pushed into the PARSE source below it, and a top-10 sort", async () => {
  await using home = await logHome();
  const text = `${PARSE} | filter(status = 200) | sort(bytes desc) | limit(10)`;
  assert.equal(
    await explained(home, text),
    [
      `limit 10  ${SCHEMA}`,
      `  sort bytes desc (top 10)  ${SCHEMA}`,
      `    source PARSE(src: '/shared/a.log') filter (status = 200)  ${SCHEMA}`,
    ].join("\n"),
  );
  const { rows } = await home.run(text);
  assert.deepEqual(rows.map((r) => r.path), ["/c", "/a"]);
});

Deno.test("a pushed filter_out keeps the rows where its condition is null", async () => {
  await using home = await engineHome();
  await home.write("/shared/a.json", '{"s": 1}\n{"s": null}\n{}\n{"s": 2}\n');
  const text = "READ_JSON(src: '/shared/a.json') | filter_out(s = 1)";
  assert.equal(
    await explained(home, text),
    "source READ_JSON(src: '/shared/a.json') filter_out (s = 1)  [...]",
  );
  const { rows } = await home.run(text);
  assert.deepEqual(rows, [{ s: null }, {}, { s: 2 }]);
});

Deno.test("only the filter right above a source goes in; others stay filter nodes", async () => {
  await using home = await logHome();
  const text = `${PARSE} | filter(status = 200) | filter(bytes > 1000)`;
  assert.equal(
    await explained(home, text),
    [
      `filter (bytes > 1000)  ${SCHEMA}`,
      `  source PARSE(src: '/shared/a.log') filter (status = 200)  ${SCHEMA}`,
    ].join("\n"),
  );
  assert.deepEqual((await home.run(text)).rows.map((r) => r.path), ["/c"]);
  const overValues = await explained(home, "VALUES((a: 1), (a: 2)) | filter(a > 1)");
  assert.match(overValues, /^filter \(a > 1\) /);
  const overList = await explained(home, "LIST(src: '/shared/*.log') | filter(size > 0)");
  assert.match(overList, /^filter \(size > 0\) /, "LIST takes no filter");
});
