import assert from "node:assert/strict";
import { startTestServer } from "./server.ts";
import { expectError, SCRIPT_TYPE } from "./client.ts";

const VIEW = "init(ip::IPADDR, n: 5);\nVALUES((ip: $ip, n: $n))";

Deno.test("a stored script runs synchronously with its arguments typed by init", async () => {
  await using s = await startTestServer();
  await s.write("/users/alice/view.sx", VIEW);
  const run = (args: string, headers: Record<string, string> = {}) =>
    s.fetch("alice", `/API/v1.0/?scriptPath=/user/view.sx${args}`, { method: "POST", headers });
  const ok = await run("&ip=10.0.0.1");
  assert.equal(ok.status, 200);
  assert.equal(ok.headers.get("Content-Type"), "application/json; charset=UTF-8");
  assert.equal(ok.headers.get("Accept-Ranges"), "items");
  assert.equal(await ok.text(), '[{"ip":"10.0.0.1","n":5}]');
  const csv = await run("&ip=10.0.0.2&n=7", { Accept: "application/csv" });
  assert.equal(csv.headers.get("Content-Type"), "application/csv; charset=UTF-8");
  assert.equal(await csv.text(), '"ip";"n"\n"10.0.0.2";7\n');
  for (
    const [args, name] of [["", "ip"], ["&ip=10.0.0.1&colour=red", "colour"], ["&ip=nope", "ip"], [
      "&ip=10.0.0.1&n=x",
      "n",
    ]]
  ) {
    const body = await expectError(await run(args!), 400, "BAD_ARGUMENT");
    assert.match(String(body.message), new RegExp(`'?${name}'?`), String(body.message));
  }
});

Deno.test("a script in the body runs in a working directory that needs execute and list", async () => {
  await using s = await startTestServer({}, {
    grants: [{ path: "/users/bob/listonly", user: "alice", rights: ["list"] }],
  });
  await s.write("/users/bob/listonly/x.txt", "x");
  await s.write("/users/bob/secret/x.txt", "x");
  const post = (dir: string) =>
    s.fetch("alice", `/API/v1.0/?scriptPath=${dir}`, {
      method: "POST",
      headers: SCRIPT_TYPE,
      body: "VALUES((a: 1), (a: 2))",
    });
  const ok = await post("/user");
  assert.equal(ok.status, 200);
  assert.equal(await ok.text(), '[{"a":1},{"a":2}]');
  await expectError(await post("/users/bob/listonly"), 403, "FORBIDDEN");
  await expectError(await post("/users/bob/secret"), 404, "NOT_FOUND");
  const sys = await post("/system");
  assert.equal(sys.status, 200);
  await sys.body?.cancel();
});

Deno.test("a synchronous query pages by Range and answers a failure with an error status", async () => {
  await using s = await startTestServer({ "query.memoryLimit": "1 KiB" });
  const rows = Array.from({ length: 20 }, (_, i) => `(n: ${i})`).join(", ");
  const page = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { ...SCRIPT_TYPE, Range: "items=18-", Accept: "application/x-ndjson" },
    body: `VALUES(${rows})`,
  });
  assert.equal(page.status, 206);
  assert.equal(page.headers.get("Content-Range"), "items 18-19/20");
  assert.equal(await page.text(), '{"n":18}\n{"n":19}\n');
  const big = Array.from({ length: 2000 }, (_, i) => `(n: ${i}, s: 'some text ${i}')`).join(", ");
  const failed = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: `VALUES(${big}) | sort(s desc)`,
  });
  const body = await expectError(failed, 409, "QUERY_FAILED");
  assert.equal(body.state, "FAILED");
  assert.equal((body.error as { code: string }).code, "MEMORY_LIMIT");
});

Deno.test("waitMillis is the asynchronous API's: on the synchronous one it is a view argument, or refused beside a body", async () => {
  await using s = await startTestServer();
  await s.write("/users/alice/wait.sx", "init(waitMillis: 5);\nVALUES((a: $waitMillis))");
  const view = await s.fetch("alice", "/API/v1.0/?scriptPath=/user/wait.sx&waitMillis=7", {
    method: "POST",
  });
  assert.equal(await view.text(), '[{"a":7}]');
  await expectError(
    await s.fetch("alice", "/API/v1.0/?scriptPath=/user/wait.sx&waitMillis=x", { method: "POST" }),
    400,
    "BAD_ARGUMENT",
  );
  const body = await expectError(
    await s.fetch("alice", "/API/v1.0/?scriptPath=/user&waitMillis=abc", {
      method: "POST",
      headers: SCRIPT_TYPE,
      body: "VALUES((a: 1))",
    }),
    400,
    "BAD_PARAMETER",
  );
  assert.match(String(body.message), /unknown query parameter 'waitMillis'/);
});
