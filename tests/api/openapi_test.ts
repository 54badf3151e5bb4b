/**
 * `GET /API/v1.0/openapi.json`: an OpenAPI 3.1 document (validated by
 * @seriousme/openapi-schema-validator and by structure checks) that has every route Hono
 * serves, made from the zod schemas that validate the requests.
 */

import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import { startTestServer } from "./server.ts";
import { createApp } from "../../routes/app.ts";
import { expectError, postQuery } from "./client.ts";

type Operation = {
  operationId: string;
  summary: string;
  security?: unknown[];
  parameters?: { name: string; in: string; required: boolean; schema: unknown }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string }>;
};

/** The OpenAPI path of a Hono route (`:id` → `{id}`, `*` → `{path}`; the API's root with `/`). */
function openApiPath(honoPath: string): string {
  const path = honoPath.replace(/:(\w+)/g, "{$1}").replace(/\*$/, "{path}");
  return path === "/API/v1.0" ? "/API/v1.0/" : path;
}

Deno.test("the OpenAPI document validates and needs no token", async () => {
  await using s = await startTestServer();
  const res = await fetch(`${s.url}/API/v1.0/openapi.json`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("Content-Type"), "application/json; charset=UTF-8");
  const doc = await res.json();
  const validator = new Validator();
  const result = await validator.validate(doc);
  assert.equal(validator.version, "3.1");
  assert.deepEqual(result, { valid: true });
  // Structure: every operation has an id, a summary and answers; parameters are typed.
  const ids = new Set<string>();
  for (
    const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)
  ) {
    for (const [method, op] of Object.entries(ops)) {
      assert.ok(!ids.has(op.operationId), `duplicate ${op.operationId}`);
      ids.add(op.operationId);
      assert.ok(op.summary.length > 0, `${method} ${path}`);
      assert.ok(Object.keys(op.responses).length > 0, `${method} ${path}`);
      for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
        assert.ok(
          op.parameters?.some((p) => p.in === "path" && p.name === name),
          `${path} ${name}`,
        );
      }
      for (const p of op.parameters ?? []) assert.equal(typeof p.schema, "object");
    }
  }
  const submit = doc.paths["/API/v1.0/queries"].post as Operation;
  const scriptPath = submit.parameters!.find((p) => p.name === "scriptPath")!;
  assert.equal(scriptPath.required, true);
  const wait = submit.parameters!.find((p) => p.name === "waitMillis")!;
  assert.equal(wait.required, false);
  assert.ok(Object.keys(submit.requestBody!.content).includes("text/plain"));
  assert.deepEqual(doc.paths["/API/v1.0/openapi.json"].get.security, []);
});

Deno.test("every route the server has is in the OpenAPI document", async () => {
  await using s = await startTestServer();
  const doc = await (await fetch(`${s.url}/API/v1.0/openapi.json`)).json();
  const documented = new Set<string>();
  for (const [path, ops] of Object.entries(doc.paths as Record<string, object>)) {
    for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${path}`);
  }
  const routes = createApp(s.deps).routes.filter((r) => r.method !== "ALL");
  assert.ok(routes.length > 15);
  const missing = [...new Set(routes.map((r) => `${r.method} ${openApiPath(r.path)}`))]
    .filter((r) => !documented.has(r));
  assert.deepEqual(missing, [], "routes without a contract in routes/contract.ts");
});

Deno.test("the contract's schemas validate the requests", async () => {
  await using s = await startTestServer();
  const missing = await s.fetch("alice", "/API/v1.0/queries", {
    method: "POST",
    headers: { "Content-Type": "text/plain" },
    body: "VALUES((a: 1))",
  });
  const body = await expectError(missing, 400, "BAD_PARAMETER");
  assert.match(String(body.message), /missing query parameter 'scriptPath'/);
  const e = await expectError(
    await postQuery(s, "VALUES((a: 1))", { query: "waitMillis=99999999&opt.omitHeader=maybe" }),
    400,
    "BAD_PARAMETER",
  );
  assert.match(String(e.message), /waitMillis must be an integer/);
  assert.match(String(e.message), /opt.omitHeader must be 'true' or 'false'/);
  const move = await s.fetch("alice", "/API/v1.0/resources/user/x.sx", { method: "POST" });
  assert.match(String((await expectError(move, 400, "BAD_PARAMETER")).message), /moveTo/);
});
