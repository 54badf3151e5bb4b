/**
 * What a killed server leaves behind is swept when the next one starts: a result spill file
 * (`engine_data/results/<queryId>`) belongs to no query of the new process.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, startServerProcess } from "../foundation/server_process.ts";

Deno.test("a result spill file left by a killed server is removed at the next start", async () => {
  const home = await Deno.makeTempDir({ prefix: "trawl-leftovers-" });
  try {
    assert.equal((await runCli(["user", "add", "alice", "--home", home])).code, 0);
    const results = join(home, "engine_data", "results");
    await Deno.mkdir(results, { recursive: true });
    const spill = join(results, "AAAAAAAAAAAAAAAAAAAAAAAA");
    await Deno.writeFile(spill, new Uint8Array(64 * 1024));
    await using server = await startServerProcess(home);
    await assert.rejects(Deno.stat(spill), Deno.errors.NotFound);
    const res = await fetch(`${server.url}/healthz`);
    assert.equal(res.status, 200);
    await res.body?.cancel();
    assert.equal(await server.stop(), 0);
    assert.ok(
      server.stderr.some((l) => /removed 1 result spill file/.test(l)),
      server.stderr.join("\n"),
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
