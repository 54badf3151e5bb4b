/**
 * A folder of many files listed through `/resources` takes turns with other requests: the
 * rights of each entry are checked in slices, and the answer is written as the entries come,
 * so the server's thread never stays in one long synchronous step (it was seconds for 100 000
 * files, others stalled up to 2.7 s).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startTestServer } from "./server.ts";
import { watchLoopGaps } from "../support/loop_gaps.ts";

const FILES = 20_000;

Deno.test("listing a folder of 20 000 files leaves the event loop free for other requests", async () => {
  // Many grants make each entry's rights cost what a real rights file does.
  const grants = Array.from({ length: 1000 }, (_, i) => ({
    path: `/shared/team${i}`,
    user: "alice",
    rights: ["read", "list"] as const,
  }));
  await using s = await startTestServer({}, {
    grants: [...grants, { path: "/shared/many", user: "alice", rights: ["list", "read"] }],
  });
  const dir = join(s.home, "data", "shared", "many");
  await Deno.mkdir(dir, { recursive: true });
  for (let i = 0; i < FILES; i += 500) {
    await Promise.all(
      Array.from({ length: 500 }, (_, j) => Deno.writeTextFile(join(dir, `f${i + j}.log`), "x")),
    );
  }

  const list = async () => {
    const gaps = watchLoopGaps(2);
    const started = performance.now();
    // Another request while the listing runs: it is answered before the listing ends.
    const listing = s.fetch("alice", "/API/v1.0/resources/shared/many/");
    const health = fetch(`${s.url}/healthz`).then(async (res) => {
      await res.body?.cancel();
      return { status: res.status, at: performance.now() };
    });
    const res = await listing;
    const body = await res.json();
    const ended = performance.now();
    gaps.stop();
    return { res, body, ms: ended - started, longest: gaps.longestCpu, health: await health };
  };
  await list(); // the first run compiles the code it runs
  const { res, body, ms, longest, health } = await list();
  assert.equal(res.status, 200);
  assert.equal(body.length, FILES);
  assert.deepEqual(Object.keys(body[0]), ["name", "kind", "size", "modified", "rights"]);
  assert.equal(health.status, 200);
  // Relative to the listing's own time (a loaded machine stretches both): a synchronous loop
  // over the entries was about a third of it; in slices the longest stretch is a few percent.
  assert.ok(
    longest < Math.max(150, ms / 5),
    `the loop was held ${longest.toFixed(0)} ms of CPU in one stretch of a ${
      ms.toFixed(0)
    } ms listing`,
  );
});
