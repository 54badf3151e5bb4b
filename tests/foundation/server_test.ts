/**
 * End to end: a real `main.ts serve` subprocess, changed by the CLI as a subprocess while it
 * runs, called over HTTP.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, startServerProcess } from "./server_process.ts";

async function tempHome(): Promise<AsyncDisposable & { dir: string }> {
  const dir = await Deno.makeTempDir({ prefix: "trawl-e2e-" });
  return { dir, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

function whoami(url: string, token?: string, raw?: string): Promise<Response> {
  const headers: Record<string, string> = {};
  if (raw !== undefined) headers.Authorization = raw;
  else if (token !== undefined) headers.Authorization = `Bearer ${token}`;
  return fetch(`${url}/API/v1.0/whoami`, { headers });
}

async function assertRefused(res: Response, what: string): Promise<void> {
  assert.equal(res.status, 401, what);
  assert.equal(res.headers.get("Content-Type"), "application/json; charset=UTF-8", what);
  assert.match(res.headers.get("WWW-Authenticate") ?? "", /^Bearer/, what);
  const body = await res.json();
  assert.equal(body.code, "UNAUTHENTICATED", what);
  assert.equal(typeof body.message, "string", what);
}

Deno.test("a first start creates the home and an admin whose printed token works", async () => {
  await using home = await tempHome();
  const dir = join(home.dir, "new-home");
  await using server = await startServerProcess(dir);
  assert.ok(server.firstToken, server.stdout.join("\n"));
  const res = await whoami(server.url, server.firstToken);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), {
    name: "admin",
    groups: [],
    admin: true,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  });
  for (const sub of ["conf", "data/users/admin", "data/shared", "data/system"]) {
    assert.ok((await Deno.stat(join(dir, sub))).isDirectory, sub);
  }
  assert.ok(!(await Deno.readTextFile(join(dir, "conf/users.json"))).includes(server.firstToken));

  const health = await fetch(`${server.url}/healthz`);
  assert.equal(health.status, 200);
  assert.deepEqual(await health.json(), { status: "ok" });
  assert.equal(await server.stop("SIGTERM"), 0);
  assert.ok(server.stderr.every((line) => !line.includes(server.firstToken!)));
});

Deno.test("CLI changes take effect in the running server without a restart", async () => {
  await using home = await tempHome();
  await using server = await startServerProcess(home.dir);

  const add = await runCli([
    "user",
    "add",
    "bob",
    "--group",
    "sec",
    "--timezone",
    "Asia/Tokyo",
    "--home",
    home.dir,
  ]);
  assert.equal(add.code, 0, add.stderr);
  const bob = add.lastLine;
  const res = await whoami(server.url, bob);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), {
    name: "bob",
    groups: ["sec"],
    admin: false,
    timeZone: "Asia/Tokyo",
  });

  await assertRefused(await whoami(server.url), "no token");
  await assertRefused(await whoami(server.url, "trawl_" + "A".repeat(43)), "a wrong token");
  await assertRefused(await whoami(server.url, undefined, `Token ${bob}`), "another scheme");

  const replaced = await runCli(["user", "token", "bob", "--home", home.dir]);
  assert.equal(replaced.code, 0, replaced.stderr);
  await assertRefused(await whoami(server.url, bob), "a replaced token");
  assert.equal((await whoami(server.url, replaced.lastLine)).status, 200);

  const list = await runCli(["user", "list", "--home", home.dir]);
  assert.match(list.stdout, /^admin\s+yes/m);
  assert.match(list.stdout, /^bob\s+no\s+sec\s+Asia\/Tokyo$/m);

  const removed = await runCli(["user", "remove", "bob", "--home", home.dir]);
  assert.equal(removed.code, 0, removed.stderr);
  await assertRefused(await whoami(server.url, replaced.lastLine), "a removed user");

  const log = server.stderr.join("\n");
  assert.match(log, /INFO GET \/API\/v1\.0\/whoami 200 \d+ms bob/);
  assert.ok(!log.includes(bob) && !log.includes(replaced.lastLine), "tokens in the log");
});

Deno.test("a corrupt users file answers 503 STORAGE_UNAVAILABLE naming it, with no host path", async () => {
  await using home = await tempHome();
  await using server = await startServerProcess(home.dir);
  // A users file broken behind the server's back: the storage failed, not the server.
  await Deno.writeTextFile(join(home.dir, "conf", "users.json"), "{ broken");
  const res = await whoami(server.url, server.firstToken);
  assert.equal(res.status, 503);
  assert.equal(res.headers.get("Content-Type"), "application/json; charset=UTF-8");
  assert.equal(res.headers.get("Retry-After"), "5");
  const body = await res.json();
  assert.deepEqual(Object.keys(body).sort(), ["code", "message"]);
  assert.equal(body.code, "STORAGE_UNAVAILABLE");
  assert.match(body.message, /^the users document conf\/users\.json is not valid JSON \(/);
  assert.ok(
    !body.message.includes(home.dir) && !/\.ts\b|\n\s+at /.test(body.message),
    body.message,
  );
  // Repaired, it answers again.
  await Deno.writeTextFile(join(home.dir, "conf", "users.json"), '{"users": []}');
  const after = await whoami(server.url, server.firstToken);
  assert.equal(after.status, 401);
  await after.body?.cancel();
});

Deno.test("a later start prints no token; a bad setting stops the start naming it", async () => {
  await using home = await tempHome();
  const first = await startServerProcess(home.dir);
  assert.ok(first.firstToken);
  assert.equal(await first.stop(), 0);

  await using second = await startServerProcess(home.dir, ["--set", "no.such=1"]);
  assert.equal(second.firstToken, undefined);
  assert.ok(second.stderr.some((l) => l.includes("unknown setting 'no.such' (--set)")));

  await Deno.writeTextFile(join(home.dir, "conf", "settings.conf"), "query.retention = soon\n");
  const bad = await runCli(["serve", "--home", home.dir, "--set", "wgui.port=0"]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /setting 'query.retention' = 'soon' \(settings.conf line 1\)/);
});

Deno.test("the CLI answers usage errors with exit code 2 and refusals with 1", async () => {
  await using home = await tempHome();
  const usage = await runCli(["user", "add"]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /Usage:/);
  assert.equal((await runCli(["frobnicate"])).code, 2);
  const missing = await runCli(["user", "remove", "nobody", "--home", home.dir]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no user 'nobody'/);
  const help = await runCli(["help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /main\.ts serve/);
});
