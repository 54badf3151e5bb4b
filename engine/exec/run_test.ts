import assert from "node:assert/strict";
import { openNode, runPlan } from "./run.ts";
import { type CompiledPlan, type PlanNode, printPlan, type SourceRead } from "../plan/plan.ts";
import { type ExecContext, MemoryBudget, ProgressMeter } from "../plan/context.ts";
import { scalar, schemaToJson } from "../values/types.ts";
import type { Row } from "../values/values.ts";

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

/** A source that takes fields and filters, and records what it was opened with. */
function recordingSource(rows: Row[], open = false) {
  const seen: { read: SourceRead | null; closed: boolean; count: number } = {
    read: null,
    closed: false,
    count: 0,
  };
  const node: PlanNode & { kind: "source" } = {
    kind: "source",
    label: "test",
    open,
    schema: open ? [] : [
      { name: "a", type: INTEGER, nullable: false },
      { name: "b", type: INTEGER, nullable: false },
      { name: "c", type: INTEGER, nullable: false },
    ],
    takes: { fields: true, filter: true },
    fields: null,
    filter: null,
    start: async function* (_ctx, read) {
      seen.read = read;
      try {
        for (const r of rows) {
          if (read.filter && !read.filter.keep(r)) continue;
          seen.count++;
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

const bIsTwo = { fn: (r: Row) => r.b === 2, label: "(b = 2)" };

Deno.test("openNode() opens a source with the fields and the filter its node shows", async () => {
  const { node: bare, seen } = recordingSource([{ a: 1, b: 2, c: 3 }, { a: 4, b: 5, c: 6 }]);
  const node: PlanNode = {
    ...bare,
    fields: ["a", "b"],
    filter: {
      condition: bIsTwo,
      negated: false,
      reads: new Set(["b"]),
      keep: (r) => r.b === 2,
    },
  };
  assert.equal(printPlan(node, { schemas: false }), "source test filter (b = 2) reads(a, b)");
  assert.deepEqual(await drain(openNode(node, context())), [{ a: 1, b: 2, c: 3 }]);
  assert.equal(seen.read?.fields, node.fields);
  assert.equal(seen.read?.filter, node.filter);
});

Deno.test("openNode() rewrites nothing: a filter above a source stays a filter, and the source reads all", async () => {
  const { node, seen } = recordingSource([{ a: 1, b: 2, c: 3 }, { a: 4, b: 5, c: 6 }]);
  const filter: PlanNode = {
    kind: "filter",
    schema: node.schema,
    input: node,
    condition: bIsTwo,
    negated: false,
    reads: new Set(["b"]),
  };
  const project: PlanNode = {
    kind: "project",
    schema: [node.schema[0]!],
    input: filter,
    columns: [{ name: "a", label: "a", fn: (r) => r.a! }],
    copyInput: false,
    reads: new Set(["a"]),
  };
  assert.deepEqual(await drain(openNode(project, context())), [{ a: 1 }]);
  assert.deepEqual(seen.read, node, "the source was opened as planned: every field, no filter");
  assert.equal(seen.count, 2);
});

Deno.test("openNode() holds every row of a sort under a limit unless the sort node says top-N", async () => {
  const rows = Array.from({ length: 2000 }, (_, i) => ({ a: i, b: 0, c: 0 }));
  const { node } = recordingSource(rows);
  const sort = (top: number | null): PlanNode => ({
    kind: "sort",
    schema: node.schema,
    input: node,
    keys: [{ fn: (r) => r.a!, label: "a", descending: true }],
    reads: new Set(["a"]),
    top,
  });
  const limit = (top: number | null): PlanNode => ({
    kind: "limit",
    schema: node.schema,
    input: sort(top),
    count: 1,
    offset: 0,
  });
  const small = () => ({ ...context(), memory: new MemoryBudget(16 * 1024) });
  assert.deepEqual((await drain(openNode(limit(1), small()))).map((r) => r.a), [1999]);
  await assert.rejects(() => drain(openNode(limit(null), small())), /memory limit/);
});

Deno.test("limit closes its source as soon as it has its rows", async () => {
  const rows = Array.from({ length: 100 }, (_, i) => ({ a: i, b: 0, c: 0 }));
  const { node, seen } = recordingSource(rows);
  const limit: PlanNode = { kind: "limit", schema: node.schema, input: node, count: 2, offset: 1 };
  assert.deepEqual((await drain(openNode(limit, context()))).map((r) => r.a), [1, 2]);
  assert.equal(seen.count, 3);
  assert.ok(seen.closed);
});

Deno.test("runPlan() resolves ANY and the fields of an open schema from the data", async () => {
  const { node } = recordingSource([{ x: 1 }, { x: 5_000_000_000, y: "s" }, { x: null }], true);
  const plan: CompiledPlan = {
    kind: "plan",
    root: node,
    timeZone: "UTC",
    now: 0,
    limits: { memoryLimit: 1 << 20 },
  };
  const run = runPlan(plan, { signal: new AbortController().signal });
  assert.equal((await drain(run.batches)).length, 3);
  assert.deepEqual(schemaToJson(run.schema()), { x: "?LONG", y: "?STRING" });
});
