import assert from "node:assert/strict";
import { startTestServer } from "./server.ts";
import { expectError, finished, SCRIPT_TYPE, startQuery } from "./client.ts";

interface Case {
  readonly name: string;
  readonly path: string;
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Uint8Array<ArrayBuffer>;
  readonly user?: string;
  readonly status: number;
  readonly code: string;
}

Deno.test("bad requests get the documented status and code, and the server stays healthy", async () => {
  await using s = await startTestServer({ "query.maxScriptBytes": "1 KiB" });
  await s.write("/users/alice/view.sx", "init(ip::IPADDR);\nVALUES((ip: $ip))");
  await s.write("/users/alice/notes.txt", "x");
  const done = await startQuery(s, "VALUES((a: 1))");
  await finished(s, done);
  const Q = "/API/v1.0/queries";
  const script = { method: "POST", headers: SCRIPT_TYPE, body: "VALUES((a: 1))" };
  const cases: Case[] = [
    {
      name: "no token",
      path: `${Q}/${done}`,
      user: "nobody",
      status: 401,
      code: "UNAUTHENTICATED",
    },
    {
      name: "unknown token",
      path: `${Q}/${done}`,
      headers: { Authorization: "Bearer nope" },
      status: 401,
      code: "UNAUTHENTICATED",
    },
    { name: "malformed id", path: `${Q}/not-an-id`, status: 404, code: "NOT_FOUND" },
    {
      name: "id with bad characters",
      path: `${Q}/${"%2e".repeat(8)}`,
      status: 404,
      code: "NOT_FOUND",
    },
    {
      name: "unknown well-formed id",
      path: `${Q}/${"A".repeat(24)}`,
      status: 404,
      code: "NOT_FOUND",
    },
    {
      name: "unknown id result",
      path: `${Q}/${"B".repeat(24)}/result`,
      status: 404,
      code: "NOT_FOUND",
    },
    {
      name: "unknown id delete",
      path: `${Q}/${"C".repeat(24)}`,
      method: "DELETE",
      status: 404,
      code: "NOT_FOUND",
    },
    {
      name: "another user's id",
      path: `${Q}/${done}`,
      user: "bob",
      status: 404,
      code: "NOT_FOUND",
    },
    {
      name: "another user's result",
      path: `${Q}/${done}/result`,
      user: "bob",
      status: 404,
      code: "NOT_FOUND",
    },
    { name: "no scriptPath", path: Q, ...script, status: 400, code: "BAD_PARAMETER" },
    {
      name: "empty scriptPath",
      path: `${Q}?scriptPath=`,
      ...script,
      status: 400,
      code: "BAD_PARAMETER",
    },
    {
      name: "traversal in scriptPath",
      path: `${Q}?scriptPath=/user/../../etc`,
      ...script,
      status: 400,
      code: "BAD_PARAMETER",
    },
    {
      name: "missing folder",
      path: `${Q}?scriptPath=/user/nope`,
      ...script,
      status: 404,
      code: "NOT_FOUND",
    },
    {
      name: "a file as working directory",
      path: `${Q}?scriptPath=/user/notes.txt`,
      ...script,
      status: 404,
      code: "NOT_FOUND",
    },
    {
      name: "another user's folder",
      path: `${Q}?scriptPath=/users/bob`,
      ...script,
      status: 404,
      code: "NOT_FOUND",
    },
    {
      name: "wrong content type",
      path: `${Q}?scriptPath=/user`,
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
      status: 400,
      code: "BAD_PARAMETER",
    },
    {
      name: "no content type",
      path: `${Q}?scriptPath=/user`,
      method: "POST",
      // Bytes, not a string: fetch gives a string body `text/plain`, which is a script type.
      body: new TextEncoder().encode("VALUES((a: 1))"),
      status: 400,
      code: "BAD_PARAMETER",
    },
    {
      name: "huge body",
      path: `${Q}?scriptPath=/user`,
      method: "POST",
      headers: SCRIPT_TYPE,
      body: "VALUES((a: 1))" + " ".repeat(2000),
      status: 413,
      code: "PAYLOAD_TOO_LARGE",
    },
    {
      name: "syntax error",
      path: `${Q}?scriptPath=/user`,
      method: "POST",
      headers: SCRIPT_TYPE,
      body: "VALUES((a: 1)",
      status: 400,
      code: "SYNTAX_ERROR",
    },
    {
      name: "unknown command (a static check)",
      path: `${Q}?scriptPath=/user`,
      method: "POST",
      headers: SCRIPT_TYPE,
      body: "VALUES((a: 1))\n| fliter(a > 0)",
      status: 400,
      code: "SYNTAX_ERROR",
    },
    {
      name: "unknown field (a planning check)",
      path: `${Q}?scriptPath=/user`,
      method: "POST",
      headers: SCRIPT_TYPE,
      body: "VALUES((a: 1)) | filter(b > 0)",
      status: 400,
      code: "SYNTAX_ERROR",
    },
    {
      name: "arguments with a body script",
      path: `${Q}?scriptPath=/user&x=1`,
      ...script,
      status: 400,
      code: "BAD_PARAMETER",
    },
    {
      name: "unknown opt",
      path: `${Q}?scriptPath=/user&opt.colour=red`,
      ...script,
      status: 400,
      code: "BAD_PARAMETER",
    },
    {
      name: "bad opt.timezone",
      path: `${Q}?scriptPath=/user&opt.timezone=Mars/Base`,
      ...script,
      status: 400,
      code: "BAD_PARAMETER",
    },
    {
      name: "bad opt.timestampFormat",
      path: `${Q}?scriptPath=/user&opt.timestampFormat=QQQ`,
      ...script,
      status: 400,
      code: "BAD_PARAMETER",
    },
    {
      name: "bad opt.omitHeader",
      path: `${Q}?scriptPath=/user&opt.omitHeader=maybe`,
      ...script,
      status: 400,
      code: "BAD_PARAMETER",
    },
    {
      name: "format not offered (Accept)",
      path: `${Q}?scriptPath=/user`,
      method: "POST",
      headers: { ...SCRIPT_TYPE, Accept: "text/html" },
      body: "VALUES((a: 1))",
      status: 406,
      code: "NOT_ACCEPTABLE",
    },
    {
      name: "format not offered (param)",
      path: `${Q}?scriptPath=/user&acceptContentType=text/xml`,
      ...script,
      status: 406,
      code: "NOT_ACCEPTABLE",
    },
    {
      name: "result format not offered",
      path: `${Q}/${done}/result`,
      headers: { Accept: "image/png" },
      status: 406,
      code: "NOT_ACCEPTABLE",
    },
    {
      name: "malformed Range",
      path: `${Q}/${done}/result`,
      headers: { Range: "bytes=0-1" },
      status: 400,
      code: "BAD_PARAMETER",
    },
    {
      name: "Range past the end",
      path: `${Q}/${done}/result`,
      headers: { Range: "items=5-9" },
      status: 416,
      code: "RANGE_NOT_SATISFIABLE",
    },
    {
      name: "missing view argument",
      path: "/API/v1.0/?scriptPath=/user/view.sx",
      method: "POST",
      status: 400,
      code: "BAD_ARGUMENT",
    },
    {
      name: "missing stored script",
      path: "/API/v1.0/?scriptPath=/user/nope.sx",
      method: "POST",
      status: 404,
      code: "NOT_FOUND",
    },
    {
      name: "missing table",
      path: "/API/v1.0/tables/user/nope.sxt",
      status: 404,
      code: "NOT_FOUND",
    },
    {
      name: "not a table",
      path: "/API/v1.0/tables/user/notes.txt",
      status: 404,
      code: "NOT_FOUND",
    },
    {
      name: "another user's table",
      path: "/API/v1.0/tables/users/bob/t.sxt",
      status: 404,
      code: "NOT_FOUND",
    },
    { name: "unknown resource", path: "/API/v1.0/nothing", status: 404, code: "NOT_FOUND" },
  ];
  assert.ok(cases.length >= 30);
  for (const c of cases) {
    const headers = new Headers(c.headers);
    if (c.user === "nobody") headers.set("Authorization", "");
    const res = c.user === "nobody"
      ? await fetch(s.url + c.path, { method: c.method ?? "GET", body: c.body ?? null })
      : await s.fetch(c.user ?? "alice", c.path, {
        method: c.method ?? "GET",
        headers,
        body: c.body ?? null,
      });
    try {
      await expectError(res, c.status, c.code);
    } catch (e) {
      throw new Error(`case '${c.name}': ${(e as Error).message}`);
    }
  }
  const health = await fetch(`${s.url}/healthz`);
  assert.equal(health.status, 200);
  await health.body?.cancel();
  const after = await startQuery(s, "VALUES((a: 2))");
  assert.equal((await finished(s, after)).state, "SUCCEEDED");
});
