/**
 * Stored scripts cannot make one query grow past the engine's limits: a view that reads a view
 * twice, 30 levels deep (2^29 operators once copied per use, enough to exhaust the server's
 * memory), and a chain of 3000 views (deep enough to overflow the stack of a planner pass) are
 * refused with a 400 naming the limit, by a real server that goes on answering.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startServerProcess } from "../foundation/server_process.ts";

/** Long enough for a loaded machine; a server that copies 2^29 operators dies before. */
const REQUEST_TIMEOUT_MS = 60_000;

Deno.test("views that double per level and a chain of 3000 views answer 400 naming the limit; the server goes on", async () => {
  const home = await Deno.makeTempDir({ prefix: "trawl-views-" });
  try {
    await using server = await startServerProcess(home);
    const token = server.firstToken;
    assert.ok(token, server.stdout.join("\n"));
    const folder = join(home, "data", "users", "admin");
    await Deno.mkdir(folder, { recursive: true });
    for (let i = 0; i < 30; i++) {
      await Deno.writeTextFile(join(folder, `w${i}.sx`), `@x = @[w${i + 1}.sx];\n@x | union(@x)`);
    }
    await Deno.writeTextFile(join(folder, "w30.sx"), "VALUES((a: 1))");
    for (let i = 0; i < 3000; i++) {
      await Deno.writeTextFile(join(folder, `c${i}.sx`), `@[c${i + 1}.sx]`);
    }
    await Deno.writeTextFile(join(folder, "c3000.sx"), "VALUES((a: 1))");

    const post = (script: string) =>
      fetch(`${server.url}/API/v1.0/queries?scriptPath=/user`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "text/vnd.engine.script" },
        body: script,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });

    const doubled = await post("@[w0.sx] | limit(1)");
    const doubledBody = await doubled.json();
    assert.equal(doubled.status, 400, JSON.stringify(doubledBody));
    assert.equal(doubledBody.code, "SYNTAX_ERROR");
    assert.match(
      doubledBody.message,
      /^\/users\/admin\/w\d+\.sx: line 2, column 1: pipeline too long: \d+ operators, counting those of the streams and stored scripts it reads, more than 1000/,
    );

    const chain = await post("@[c0.sx]");
    const chainBody = await chain.json();
    assert.equal(chain.status, 400, JSON.stringify(chainBody));
    assert.equal(chainBody.code, "SYNTAX_ERROR");
    assert.equal(chainBody.diagnostics[0].code, "RECURSION");
    assert.match(chainBody.message, /stored scripts nested too deeply: .* more than 50$/);

    // The same server still answers, and runs a query.
    const health = await fetch(`${server.url}/healthz`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
    const ok = await post("VALUES((a: 1))");
    assert.equal(ok.status, 201, await ok.clone().text());
    await ok.body?.cancel();
    assert.ok(!server.stderr.some((l) => /ERROR|out of memory/i.test(l)), server.stderr.join("\n"));
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
