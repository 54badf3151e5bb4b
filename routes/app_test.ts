import assert from "node:assert/strict";
import { ensureHome } from "../home/layout.ts";
import { memoryLogger } from "../home/log.ts";
import { FsResourceTree } from "../home/resource_tree.ts";
import { PathError } from "../engine/mod.ts";
import { loadSettings } from "../home/settings.ts";
import { UserStore } from "../home/user_store.ts";
import { createApp } from "./app.ts";
import { ApiError } from "./errors.ts";

async function setup(overrides: Record<string, string> = {}) {
  const dir = await Deno.makeTempDir({ prefix: "trawl-app-" });
  const home = await ensureHome(dir);
  const users = UserStore.forHome(home);
  const log = memoryLogger();
  const app = createApp({
    home,
    settings: loadSettings(null, overrides).settings,
    users,
    tree: new FsResourceTree(home.dataDir),
    log,
  });
  const token = await users.add("alice", { groups: ["sec"] });
  const bearer = { Authorization: `Bearer ${token}` };
  return {
    app,
    users,
    log,
    token,
    bearer,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

async function errorOf(res: Response, status: number, code: string) {
  assert.equal(res.status, status);
  assert.equal(res.headers.get("Content-Type"), "application/json; charset=UTF-8");
  const body = await res.json();
  assert.equal(body.code, code);
  assert.equal(typeof body.message, "string");
  return body;
}

Deno.test("GET /healthz answers ok without a token", async () => {
  await using t = await setup();
  const res = await t.app.request("/healthz");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("Content-Type"), "application/json; charset=UTF-8");
  assert.deepEqual(await res.json(), { status: "ok" });
});

Deno.test("GET /API/v1.0/whoami answers the token's user", async () => {
  await using t = await setup({ "server.timeZone": "Europe/Paris" });
  const res = await t.app.request("/API/v1.0/whoami", { headers: t.bearer });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), {
    name: "alice",
    groups: ["sec"],
    admin: false,
    timeZone: "Europe/Paris",
  });
});

Deno.test("the API refuses a missing, malformed or unknown token with 401", async () => {
  await using t = await setup();
  const attempts: (Record<string, string> | undefined)[] = [
    undefined,
    { Authorization: "" },
    { Authorization: t.token },
    { Authorization: `Basic ${btoa("alice:x")}` },
    { Authorization: "Bearer trawl_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
    { Authorization: `Bearer ${t.token}x` },
  ];
  for (const headers of attempts) {
    for (const path of ["/API/v1.0/whoami", "/API/v1.0/", "/API/v1.0/no-such-thing"]) {
      const res = await t.app.request(path, { headers: headers ?? {} });
      await errorOf(res, 401, "UNAUTHENTICATED");
      assert.match(res.headers.get("WWW-Authenticate") ?? "", /^Bearer/);
    }
  }
  const lower = await t.app.request("/API/v1.0/whoami", {
    headers: { Authorization: `bearer ${t.token}` },
  });
  assert.equal(lower.status, 200);
});

Deno.test("unknown routes get a JSON 404", async () => {
  await using t = await setup();
  await errorOf(await t.app.request("/nope"), 404, "NOT_FOUND");
  await errorOf(await t.app.request("/API/v1.0/nope", { headers: t.bearer }), 404, "NOT_FOUND");
});

Deno.test("errors become the documented body; a bug becomes a 500 without details", async () => {
  await using t = await setup();
  t.app.get("/API/v1.0/test/api-error", () => {
    throw new ApiError(409, "QUERY_NOT_FINISHED", "not yet", {
      extra: { state: "RUNNING", code: "ignored" },
      headers: { "Retry-After": "1" },
    });
  });
  t.app.get("/API/v1.0/test/path", () => {
    throw new PathError("path '..' is refused");
  });
  t.app.get("/API/v1.0/test/bug", () => {
    throw new Error(`secret ${t.token} at /internal/file.ts`);
  });

  const api = await t.app.request("/API/v1.0/test/api-error", { headers: t.bearer });
  assert.deepEqual(await errorOf(api, 409, "QUERY_NOT_FINISHED"), {
    state: "RUNNING",
    code: "QUERY_NOT_FINISHED",
    message: "not yet",
  });
  assert.equal(api.headers.get("Retry-After"), "1");

  await errorOf(
    await t.app.request("/API/v1.0/test/path", { headers: t.bearer }),
    400,
    "BAD_PARAMETER",
  );

  const bug = await t.app.request("/API/v1.0/test/bug", { headers: t.bearer });
  const text = JSON.stringify(await errorOf(bug, 500, "INTERNAL"));
  assert.ok(!text.includes("secret") && !text.includes(t.token) && !text.includes(".ts"), text);
  assert.ok(
    t.log.lines.some((l) => l.includes("ERROR unexpected error in GET /API/v1.0/test/bug")),
  );
});

Deno.test("each request is logged in one line without token or query string", async () => {
  await using t = await setup();
  await t.app.request("/API/v1.0/whoami?secret=s3cret", { headers: t.bearer });
  await t.app.request("/API/v1.0/whoami");
  const requests = t.log.lines.filter((l) => l.includes(" INFO "));
  assert.equal(requests.length, 2);
  assert.match(requests[0]!, /INFO GET \/API\/v1\.0\/whoami 200 \d+ms alice -$/);
  assert.match(requests[1]!, /INFO GET \/API\/v1\.0\/whoami 401 \d+ms - -$/);
  assert.ok(t.log.lines.every((l) => !l.includes(t.token) && !l.includes("s3cret")));
});

Deno.test("log.requests = false turns the request log off", async () => {
  await using t = await setup({ "log.requests": "false" });
  await t.app.request("/healthz");
  assert.deepEqual(t.log.lines, []);
});
