/**
 * `query.maxScriptBytes` bounds all the script text one query compiles (the front end runs in
 * the server's thread, in one go per script): its own and every stored script it runs or calls,
 * together, not only a script in the request's body.
 */

import assert from "node:assert/strict";
import { startTestServer } from "./server.ts";
import { postQuery } from "./client.ts";

const LIMIT = 2048;

/** A stored script of about `bytes` bytes whose result is one row `{ n: <n> }`. */
function paddedView(n: number, bytes: number): string {
  const head = `VALUES((n: ${n}))\n`;
  return `// ${"x".repeat(Math.max(0, bytes - head.length - 4))}\n${head}`;
}

Deno.test("a stored script over query.maxScriptBytes, run or called, is refused naming it; under it, it runs", async () => {
  await using s = await startTestServer({ "query.maxScriptBytes": `${LIMIT} B` });
  await s.write("/users/alice/small.sx", paddedView(1, 1100));
  await s.write("/users/alice/other.sx", paddedView(2, 1100));
  await s.write("/users/alice/big.sx", paddedView(3, 3000));

  const run = (path: string) =>
    s.fetch("alice", `/API/v1.0/queries?scriptPath=${path}`, { method: "POST" });

  // Runs: one stored script under the limit.
  const ok = await run("/user/small.sx");
  assert.equal(ok.status, 201, await ok.clone().text());
  await ok.body?.cancel();

  // A stored script over the limit, run by its path: a 400 naming it and the setting.
  const big = await run("/user/big.sx");
  const bigText = await big.text();
  assert.equal(big.status, 400, bigText);
  assert.match(bigText, /\/users\/alice\/big\.sx/);
  assert.match(bigText, /query\.maxScriptBytes/);

  // Two stored scripts each under the limit, called by one script: together over it.
  const both = await postQuery(s, "@a = @[small.sx]; @b = @[other.sx]; @a | union(@b)");
  const bothText = await both.text();
  assert.equal(both.status, 400, bothText);
  assert.match(bothText, /\/users\/alice\/other\.sx.*query\.maxScriptBytes/);

  // One of them called by a short script fits.
  const one = await postQuery(s, "@[small.sx]");
  assert.equal(one.status, 201, await one.clone().text());
  await one.body?.cancel();

  // The server stays healthy.
  const health = await fetch(`${s.url}/healthz`);
  assert.equal(health.status, 200);
  await health.body?.cancel();
});
