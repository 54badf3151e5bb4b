import assert from "node:assert/strict";
import { shareLimits } from "./engine_limits.ts";
import type { CompiledPlan } from "../plan/plan.ts";
import type { ScanWorkers, ShareTask } from "./scan_workers.ts";
import { compile, execute } from "../engine.ts";
import { engineHome } from "../../tests/support/engine_home.ts";

Deno.test("shareLimits() divides the memory among the shares and leaves the script bound out", () => {
  assert.deepEqual(shareLimits({ memoryLimit: 1000, maxScriptBytes: 64 }, 3), {
    memoryLimit: 333,
  });
  assert.deepEqual(shareLimits({ memoryLimit: 1000 }, 0), { memoryLimit: 1000 });
});

Deno.test("the limits go from the query's context to its plan and, shared, to each worker's task", async () => {
  await using home = await engineHome();
  await home.write("/shared/a.log", Array.from({ length: 200 }, (_, i) => `x${i % 7}`).join("\n"));
  const tasks: ShareTask[] = [];
  // Workers that note their task and fail at once: the test is about what they are given.
  const workers: ScanWorkers = {
    count: 2,
    minShareBytes: 1,
    isolateBytes: 1,
    start(task, listen) {
      tasks.push(task);
      queueMicrotask(() =>
        listen({ kind: "failed", code: "INTERNAL", message: "not a real worker" })
      );
      return { credit: () => {}, stop: () => {} };
    },
  };
  const limits = { memoryLimit: 8 * 1024 * 1024, maxScriptBytes: 4096 };
  const compiled = await compile(
    {
      text: "PARSE(pattern: '''LD:w EOL''', src: '/shared/a.log') | select(w, count(*)) | group(w)",
    },
    home.context({ limits, scanWorkers: workers }),
  );
  assert.ok(compiled.ok);
  const plan = compiled.plan as CompiledPlan;
  assert.deepEqual(plan.limits, limits);
  const run = execute(plan, { signal: new AbortController().signal });
  await assert.rejects(async () => {
    for await (const _ of run.batches) { /* the workers fail */ }
  });
  assert.ok(tasks.length > 0, "the scan went to the workers");
  for (const task of tasks) assert.deepEqual(task.limits, shareLimits(limits, tasks.length));
});
