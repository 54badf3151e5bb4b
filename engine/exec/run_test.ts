import assert from "node:assert/strict";
import { openNode, runPlan } from "./run.ts";
import type { CompiledPlan, PlanNode } from "../plan.ts";
import { type ExecContext, MemoryBudget, ProgressMeter } from "./context.ts";
import { scalar, schemaToJson } from "../types.ts";
import type { Row } from "../values.ts";

const INTEGER = scalar("INTEGER");

function context(): ExecContext {
  return {
    signal: new AbortController().signal,
    timeZone: "UTC",
    now: 0,
    warn: () => {},
    progress: new ProgressMeter(),
    memory: new MemoryBudget(1 << 20),
  };
}

/** A source that records what it was asked for and whether it was closed. */
function recordingSource(rows: Row[], open = false) {
  const seen: { needed: ReadonlySet<string> | null; closed: boolean; read: number } = {
    needed: null,
    closed: false,
    read: 0,
  };
  const node: PlanNode = {
    kind: "source",
    label: "test",
    open,
    schema: open ? [] : [
      { name: "a", type: INTEGER, nullable: false },
      { name: "b", type: INTEGER, nullable: false },
      { name: "c", type: INTEGER, nullable: false },
    ],
    start: async function* (_ctx, needed) {
      seen.needed = needed;
      try {
        for (const r of rows) {
          seen.read++;
          yield [r];
        }
      } finally {
        seen.closed = true;
      }
    },
  };
  return { node, seen };
}

async function drain(stream: AsyncIterable<readonly Row[]>): Promise<Row[]> {
  const out: Row[] = [];
  for await (const b of stream) out.push(...b);
  return out;
}

Deno.test("openNode() tells a source only the fields the plan reads", async () => {
  const { node, seen } = recordingSource([{ a: 1, b: 2, c: 3 }]);
  const filter: PlanNode = {
    kind: "filter",
    schema: node.schema,
    input: node,
    condition: { fn: (r) => r.b === 2, label: "b = 2" },
    negated: false,
    reads: new Set(["b"]),
  };
  const project: PlanNode = {
    kind: "project",
    schema: [node.schema[0]],
    input: filter,
    columns: [{ name: "a", label: "a", fn: (r) => r.a }],
    copyInput: false,
    reads: new Set(["a"]),
  };
  assert.deepEqual(await drain(openNode(project, context(), null)), [{ a: 1 }]);
  assert.deepEqual([...seen.needed!].sort(), ["a", "b"]);
});

Deno.test("limit closes its source as soon as it has its rows", async () => {
  const rows = Array.from({ length: 100 }, (_, i) => ({ a: i, b: 0, c: 0 }));
  const { node, seen } = recordingSource(rows);
  const limit: PlanNode = { kind: "limit", schema: node.schema, input: node, count: 2, offset: 1 };
  assert.deepEqual((await drain(openNode(limit, context(), null))).map((r) => r.a), [1, 2]);
  assert.equal(seen.read, 3);
  assert.ok(seen.closed);
});

Deno.test("runPlan() resolves ANY and the fields of an open schema from the data", async () => {
  const { node } = recordingSource([{ x: 1 }, { x: 5_000_000_000, y: "s" }, { x: null }], true);
  const plan: CompiledPlan = {
    kind: "plan",
    root: node,
    timeZone: "UTC",
    now: 0,
    memoryLimit: 1 << 20,
  };
  const run = runPlan(plan, { signal: new AbortController().signal });
  assert.equal((await drain(run.batches)).length, 3);
  assert.deepEqual(schemaToJson(run.schema()), { x: "?LONG", y: "?STRING" });
});
