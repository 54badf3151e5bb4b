import assert from "node:assert/strict";
import { startTestServer } from "./server.ts";

function check(script: string, scriptPath = "/user"): RequestInit & { path: string } {
  return {
    path: `/API/v1.0/check?scriptPath=${encodeURIComponent(scriptPath)}`,
    method: "POST",
    body: script,
    headers: { "Content-Type": "text/plain" },
  };
}

async function post(s: Awaited<ReturnType<typeof startTestServer>>, script: string, dir?: string) {
  const { path, ...init } = check(script, dir);
  const res = await s.fetch("alice", path, init);
  return { status: res.status, body: await res.json() };
}

Deno.test("POST /check answers every mistake with its place, and runs nothing", async () => {
  await using s = await startTestServer();
  const { status, body } = await post(s, "VALUES((a: 1))\n| fliter(a > 0)\n| select(cunt(*))");
  assert.equal(status, 200);
  assert.equal(body.ok, false);
  assert.equal(body.schema, null);
  const where = body.diagnostics.map((d: { line: number; column: number; message: string }) =>
    `${d.line}:${d.column} ${d.message}`
  );
  assert.ok(
    where.some((w: string) => w.startsWith("2:3 unknown command 'fliter'")),
    where.join("\n"),
  );
  const listed = await (await s.fetch("alice", "/API/v1.0/queries")).text();
  assert.ok(!listed.includes("fliter"));
});

Deno.test("POST /check gives the schema of a good script, and a view's missing arguments are no mistake", async () => {
  await using s = await startTestServer();
  const good = await post(s, "VALUES((a: 1, b: 'x')) | select(a, upper(b) as B)");
  assert.deepEqual(good.body, { ok: true, diagnostics: [], schema: { a: "INTEGER", B: "STRING" } });
  const view = await post(s, "init(ip::IPADDR);\nVALUES((ip: 10.0.0.1)) | filter(ip = $ip)");
  assert.equal(view.body.ok, true, JSON.stringify(view.body));
  // The rest of such a view is checked and planned all the same: its schema, and its mistakes.
  assert.deepEqual(view.body.schema, { ip: "IPADDR" });
  const wrong = await post(s, "init(ip::IPADDR);\nVALUES((a: 1)) | select(lower(a) as l, b)");
  assert.equal(wrong.body.ok, false, JSON.stringify(wrong.body));
  assert.ok(
    wrong.body.diagnostics.some((d: { line: number; message: string }) =>
      d.line === 2 && /lower/.test(d.message)
    ),
    JSON.stringify(wrong.body.diagnostics),
  );
  // A view the script calls without its mandatory argument is a mistake, as when it runs.
  await s.write("/users/alice/v.sx", "init(ip::IPADDR);\nVALUES((ip: $ip))");
  const call = await post(s, "@[/user/v.sx]()");
  assert.equal(call.body.ok, false, JSON.stringify(call.body));
  assert.match(call.body.diagnostics[0].message, /missing mandatory argument 'ip'/);
  const missingTable = await post(s, "@[/user/none.sxt]");
  assert.equal(missingTable.body.ok, false);
  assert.equal(missingTable.body.diagnostics[0].code, "NOT_FOUND");
});

Deno.test("POST /check needs a working directory the caller may use", async () => {
  await using s = await startTestServer();
  const other = await post(s, "VALUES((a: 1))", "/users/bob");
  assert.equal(other.status, 404);
});

Deno.test("a script in the body may come as text/plain, as SpectX's clients send it", async () => {
  await using s = await startTestServer();
  const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { "Content-Type": "text/plain; charset=UTF-8" },
    body: "VALUES((a: 1))",
  });
  assert.deepEqual(await res.json(), [{ a: 1 }]);
  const json = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: "VALUES((a: 1))",
  });
  assert.equal(json.status, 400);
  assert.match((await json.json()).message, /text\/plain/);
});
