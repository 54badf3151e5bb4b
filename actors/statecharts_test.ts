import assert from "node:assert/strict";
import { MACHINES, renderStatechart, STATECHARTS_DIR } from "./statecharts.ts";

Deno.test("the committed statecharts match the machines (run `deno task statecharts`)", async () => {
  for (const [name, machine] of Object.entries(MACHINES)) {
    const committed = await Deno.readTextFile(new URL(`${name}.md`, STATECHARTS_DIR));
    assert.equal(
      committed,
      renderStatechart(name, machine),
      `docs/statecharts/${name}.md is stale`,
    );
  }
});

Deno.test("the query statechart shows every state and the CANCEL paths", () => {
  const text = renderStatechart("query", MACHINES.query!);
  for (const s of ["NEW", "QUEUED", "SCHEDULED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"]) {
    assert.match(text, new RegExp(`\\b${s}\\b`));
  }
  assert.match(text, /NEW --> CANCELLED : CANCEL/);
  assert.match(text, /QUEUED --> CANCELLED : CANCEL/);
  assert.match(text, /SCHEDULED --> CANCELLED : CANCEL/);
  assert.match(text, /RUNNING_working --> RUNNING_cancelling : CANCEL/);
});
