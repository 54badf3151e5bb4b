import assert from "node:assert/strict";
import { engineHome } from "../../../tests/support/engine_home.ts";
import { compile, explain } from "../../engine.ts";
import { check } from "../../front/front.ts";
import { planScript } from "../planner.ts";
import { type CompiledPlan, type PlanNode, printPlan, type SourceRead } from "../../plan/plan.ts";
import { runPlan } from "../../exec/run.ts";
import type { QueryContext } from "../../contracts/query_context.ts";
import { optimizePlan, PLAN_PASSES } from "./optimize_plan.ts";
import { rewriteBottomUp } from "./rewrite_bottom_up.ts";

const LOG = "200 512 /a\n404 128 /b\n200 2048 /c\n";
const PARSE =
  `PARSE(pattern: '''INT:status ' ' INT:bytes ' ' NSPACE:path''', src: '/shared/a.log')`;
const SCRIPT = `@hits = ${PARSE} | filter(status = 200);
  @top = @hits | sort(bytes desc) | limit(1) | select(path);
  @hits | select(path, bytes) | union(@top) | filter(bytes > 0 or bytes is null)`;

/** The plan of `text` as the planner builds it, before any pass. */
async function planned(context: QueryContext, text: string): Promise<PlanNode> {
  const checked = check(text);
  assert.ok(checked.script);
  const root = await planScript(
    {
      query: context,
      workDir: context.workDir,
      now: 0,
      params: new Map(),
      streams: new Map(),
      chain: [],
      diagnostics: [],
      saved: new Map(),
      scriptBytes: { used: 0 },
    },
    checked.script,
    { args: { kind: "text", values: {} } },
  );
  assert.ok(root);
  return root;
}

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((x, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [x, ...rest])
  );
}

Deno.test("the passes give the same plan in any order, and change nothing when run again", async () => {
  await using home = await engineHome();
  await home.write("/shared/a.log", LOG);
  const root = await planned(home.context(), SCRIPT);
  const once = printPlan(optimizePlan(root));
  assert.notEqual(once, printPlan(root));
  for (const order of permutations(PLAN_PASSES)) {
    assert.equal(printPlan(optimizePlan(root, order)), once);
  }
  assert.equal(printPlan(optimizePlan(optimizePlan(root))), once);
});

Deno.test("the plan that runs is the plan explain() prints: each source opens with its node's fields and filter", async () => {
  await using home = await engineHome();
  await home.write("/shared/a.log", LOG);
  const compiled = await compile({ text: SCRIPT }, home.context());
  assert.ok(compiled.ok);
  const plan = compiled.plan as CompiledPlan;
  // Each source is wrapped to record what it is opened with; nothing else changes.
  const opened: { node: PlanNode & { kind: "source" }; read: SourceRead }[] = [];
  const root = rewriteBottomUp(plan.root, (node) => {
    if (node.kind !== "source") return node;
    const recorded: PlanNode & { kind: "source" } = {
      ...node,
      start: (ctx, read) => {
        opened.push({ node: recorded, read });
        return node.start(ctx, read);
      },
    };
    return recorded;
  });
  assert.equal(printPlan(root), explain(compiled.plan));
  const run = runPlan({ ...plan, root }, { signal: new AbortController().signal });
  const rows = [];
  for await (const batch of run.batches) rows.push(...batch);
  assert.deepEqual(rows.map((r) => r.path), ["/a", "/c", "/c"]);
  const explained = explain(compiled.plan).split("\n").map((line) => line.trim());
  assert.equal(opened.length, 2);
  for (const { node, read } of opened) {
    assert.equal(read, node, "a source opens with its own node as what to read");
    assert.ok(explained.includes(printPlan(node)), printPlan(node));
  }
  assert.deepEqual(opened.map((o) => [o.read.fields, o.node.filter?.condition.label]), [
    [["path", "bytes", "status"], "(status = 200)"],
    [["path", "bytes", "status"], "(status = 200)"],
  ]);
});
