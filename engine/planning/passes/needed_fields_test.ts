import assert from "node:assert/strict";
import { engineHome } from "../../../tests/support/engine_home.ts";
import { compile, explain } from "../../engine.ts";

const LOG = "200 512 /a\n404 128 /b\n200 2048 /c\n";
const PATTERN = `'''INT:status ' ' INT:bytes ' ' NSPACE:path'''`;
const PARSE = `PARSE(pattern: ${PATTERN}, src: '/shared/a.log')`;

async function logHome() {
  const home = await engineHome();
  await home.write("/shared/a.log", LOG);
  await home.write("/shared/a.json", '{"status": 200, "path": "/a", "agent": "x"}\n');
  return home;
}

/** The plan's lines without their schemas. */
async function explained(home: Awaited<ReturnType<typeof logHome>>, text: string) {
  const compiled = await compile({ text }, home.context());
  assert.ok(compiled.ok, JSON.stringify(!compiled.ok && compiled.diagnostics));
  return explain(compiled.plan).split("\n").map((line) => line.replace(/ {2}\[.*\]$/, ""));
}

Deno.test("explain() shows each source reading what the plan above reads, and its filter", async () => {
  await using home = await logHome();
  const text = `${PARSE} | filter(status = 200) | select(path)`;
  assert.deepEqual(await explained(home, text), [
    "project path as path",
    "  source PARSE(src: '/shared/a.log') filter (status = 200) reads(path, status)",
  ]);
  assert.deepEqual((await home.run(text)).rows, [{ path: "/a" }, { path: "/c" }]);
  assert.deepEqual(
    await explained(home, "READ_JSON(src: '/shared/a.json') | select(count(*) as n) | group(path)"),
    [
      "aggregate keys(path) aggs(count(*))",
      "  source READ_JSON(src: '/shared/a.json') reads(path)",
    ],
  );
});

Deno.test("a source under nothing that narrows its fields reads them all", async () => {
  await using home = await logHome();
  assert.deepEqual(await explained(home, `${PARSE} | sort(bytes) | limit(1)`), [
    "limit 1",
    "  sort bytes (top 1)",
    "    source PARSE(src: '/shared/a.log')",
  ]);
  const saved = await explained(home, `${PARSE} | save('/user/t.sxt') | select(path)`);
  assert.equal(saved.at(-1), "    source PARSE(src: '/shared/a.log')", saved.join("\n"));
  const listed = await explained(home, "LIST(src: '/shared/*.log') | select(uri)");
  assert.equal(listed.at(-1), "  source LIST(src: '/shared/*.log')", "LIST builds every field");
});

Deno.test("a join asks each side for its own fields, and a union each input for those it has", async () => {
  await using home = await logHome();
  const joined = await explained(
    home,
    `@j = READ_JSON(src: '/shared/a.json') | select(path as p, agent);
     ${PARSE} | join(@j on left.path = right.p) | select(bytes, agent)`,
  );
  assert.deepEqual(joined.slice(2), [
    "    source PARSE(src: '/shared/a.log') reads(bytes, path)",
    "    project path as p, agent as agent",
    "      source READ_JSON(src: '/shared/a.json') reads(path, agent)",
  ]);
  const unioned = await explained(
    home,
    `${PARSE} | union(VALUES((path: 'x', extra: 1))) | select(path, extra)`,
  );
  assert.equal(unioned[2], "    source PARSE(src: '/shared/a.log') reads(path)");
  const { rows } = await home.run(
    `${PARSE} | union(VALUES((path: 'x', extra: 1))) | select(path, extra) | sort(path)`,
  );
  assert.deepEqual(rows.map((r) => [r.path, r.extra]), [["/a", null], ["/b", null], [
    "/c",
    null,
  ], ["x", 1]]);
});

Deno.test("READ_JSON fields read only through members read just those members, with the same rows", async () => {
  await using home = await logHome();
  const lines = [
    { status: { errorCode: 1, reason: "x" }, loc: { geo: { lat: 1.5, lon: 2 }, c: "FI" }, z: 1 },
    { status: { errorCode: 0 }, loc: { geo: null, c: "SE" } },
    { status: "not an object", loc: { geo: { lat: -0.5 }, c: null } },
    { status: null, loc: [] },
    { status: { errorCode: 2, errorCode2: 3, "__proto__": { errorCode: 9 } }, loc: { c: "é" } },
    { loc: { geo: { lat: 3, lat2: [1, { lat: 4 }] }, c: "JP", "c\u00e9": 1 } },
  ];
  let text = lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
  // Keys repeated: the last counts.
  text += '{"status":{"errorCode":5},"status":{"errorCode":6},"loc":{"c":"a","c":"b"}}\n';
  text += '{"status":{"errorCode":7,"errorCode":8}}\n';
  await home.write("/shared/n.json", text);
  const query =
    `READ_JSON(src: '/shared/n.json') | filter(status.errorCode != 1 or status.errorCode is null)
    | select(status.errorCode as code, loc.geo.lat as lat, loc.c as c, loc.geo as geo)`;
  assert.deepEqual(await explained(home, query), [
    "project status.errorCode as code, loc.geo.lat as lat, loc.c as c, loc.geo as geo",
    "  source READ_JSON(src: '/shared/n.json') filter ((status.errorCode != 1) or status.errorCode is null) " +
    "reads(status.errorCode, loc.geo.lat, loc.c, loc.geo)",
  ]);
  // The same query reading the fields whole (a whole read of each through `len`) gives the
  // same rows: what the members are is JSON.parse's.
  const whole =
    `READ_JSON(src: '/shared/n.json') | filter(status.errorCode != 1 or status.errorCode is null)
    | select(status.errorCode as code, loc.geo.lat as lat, loc.c as c, loc.geo as geo,
             len(STRING(status)) + len(STRING(loc)) as w) | select(code, lat, c, geo)`;
  const rows = (await home.run(query)).rows;
  assert.deepEqual(rows, (await home.run(whole)).rows);
  assert.deepEqual(rows.map((r) => r.code), [0, null, null, 2, null, 6, 8]);
  assert.deepEqual(rows[0]!.geo, null);
  assert.deepEqual(rows[4]!.geo, { lat: 3, lat2: [1, { lat: 4 }] });
  assert.equal(rows[5]!.c, "b");
});
