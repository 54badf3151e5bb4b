import assert from "node:assert/strict";
import { engineHome } from "../../../tests/support/engine_home.ts";
import type { ScanWorkers } from "../../contracts/scan_workers.ts";
import { compile } from "../../engine.ts";
import { type CompiledPlan, type PlanNode, printPlan } from "../../plan/plan.ts";
import { buildPart, describePart } from "./part_description.ts";
import { parseIp } from "../../values/ip.ts";

const LOG = "10.0.0.1 200 512 /a\n10.0.0.2 404 128 /b\n";
const PARSE = `PARSE(pattern: '''IPADDR:ip ' ' INT:status ' ' INT:bytes ' ' NSPACE:path''',
  src: '/shared/*.log')`;

/** Workers that compiling never starts: the split is decided before anything runs. */
const WORKERS: ScanWorkers = {
  count: 2,
  minShareBytes: 0,
  start() {
    throw new Error("compile() started a worker");
  },
};

/** Scripts whose parts hold every kind of node and literal a description carries. */
const SCRIPTS = [
  `${PARSE} | filter(status = 200 and ip != 10.9.9.9) | select(ip, count(*) as n,
     sum(bytes) as b, max(path) as p) | group(ip)`,
  `$prefix = '/a'; ${PARSE} | filter(starts_with(path, $prefix)) | sort(bytes desc) | limit(2)`,
  `${PARSE} | filter_out(1h > 30m and status >= 400) | select(*)`,
  `READ_JSON(src: '/shared/*.jsonl') | filter(s.code = 500) | unnest(tags as t)
     | select(t, s.code as c)`,
  `@[/shared/v.sx](code: 404) | select(path, count(*) as n) | group(path)`,
];

async function planned(text: string): Promise<CompiledPlan> {
  await using home = await engineHome();
  await home.write("/shared/a.log", LOG);
  await home.write("/shared/e.jsonl", `{"s": {"code": 500}, "tags": ["x"]}\n`);
  await home.write("/shared/v.sx", `init(code::INTEGER);\n${PARSE} | filter(status = $code)`);
  const compiled = await compile({ text }, home.context({ scanWorkers: WORKERS }));
  assert.ok(compiled.ok, JSON.stringify(!compiled.ok && compiled.diagnostics));
  return compiled.plan as CompiledPlan;
}

Deno.test("a part's description survives a structured clone and builds the part the server planned", async () => {
  for (const script of SCRIPTS) {
    const plan = await planned(script);
    assert.ok(plan.split, script);
    plan.split.nodes.forEach((node, i) => {
      const part = plan.split!.parts[i];
      const sent = structuredClone(part);
      // Plain data only: a class instance (an address, an interval) would lose its prototype.
      assert.deepStrictEqual(sent, part, script);
      const built = buildPart(sent!, {
        timeZone: plan.timeZone,
        now: plan.now,
        list: () => () => {
          throw new Error("not listed here");
        },
      });
      assert.equal(
        printPlan(built, { schemas: false }),
        printPlan(node, { schemas: false }),
        script,
      );
      assert.deepEqual(built.schema, node.schema, script);
    });
  }
});

Deno.test("the built part's expressions compute what the server's do, constants resolved", async () => {
  const plan = await planned(
    `$prefix = '/a'; ${PARSE} | filter(starts_with(path, $prefix) and ip != 10.9.9.9)
     | sort(bytes desc) | limit(2)`,
  );
  const node = plan.split!.nodes[0];
  const built = buildPart(structuredClone(plan.split!.parts[0]!), {
    timeZone: plan.timeZone,
    now: plan.now,
    list: () => () => {
      throw new Error("not listed here");
    },
  });
  const sourceOf = (n: PlanNode): PlanNode & { kind: "source" } => {
    while (n.kind !== "source") n = (n as { input: PlanNode }).input;
    return n;
  };
  const ours = sourceOf(node!).filter!, theirs = sourceOf(built).filter!;
  const row = (path: string, ip: string) => ({ path, ip: parseIp(ip) });
  const rows = [row("/a/x", "10.0.0.1"), row("/b", "10.0.0.1"), row("/a", "10.9.9.9")];
  assert.deepEqual(rows.map((r) => theirs.keep(r)), [true, false, false]);
  assert.deepEqual(rows.map((r) => theirs.keep(r)), rows.map((r) => ours.keep(r)));
});

Deno.test("a part made without the planner's origins is not described, and stays in the query's thread", () => {
  assert.equal(
    describePart({
      kind: "filter",
      schema: [],
      input: { kind: "values", schema: [], rows: [] },
      condition: { fn: () => true, label: "true" },
      negated: false,
      reads: new Set(),
    }),
    undefined,
  );
});
