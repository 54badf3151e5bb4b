/**
 * No door answers differently for what exists and what does not, where the caller may not see
 * it: writes into another user's folder (PUT, DELETE, moveTo, save), datastores outside one's
 * acl (file://, cloudapi://, azblob://), stored scripts named by scriptPath. And no message
 * names a host path: a corrupt stored table is told by its tree path, as corrupt. Each against
 * a real server.
 */

import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "../api/server.ts";
import { SCRIPT_TYPE } from "../api/client.ts";

const R = "/API/v1.0/resources";

/** Status, code and message of an answer (the body read). */
async function answer(res: Response): Promise<{ status: number; code: string; message: string }> {
  const text = await res.text();
  let body: { code?: string; message?: string; error?: { code: string; message: string } } = {};
  try {
    body = JSON.parse(text);
  } catch { /* not JSON: compared as text */ }
  const error = body.error ?? body;
  return { status: res.status, code: String(error.code), message: String(error.message ?? text) };
}

/** The two answers, with the names asked for taken out, must be the same. */
function assertAlike(
  a: { status: number; code: string; message: string },
  nameA: string,
  b: { status: number; code: string; message: string },
  nameB: string,
): void {
  const neutral = (x: typeof a, name: string) => ({
    ...x,
    message: x.message.replaceAll(name, "<name>"),
  });
  assert.deepEqual(neutral(a, nameA), neutral(b, nameB));
}

function script(s: TestServer, user: string, body: string, workDir = "/user"): Promise<Response> {
  return s.fetch(user, `/API/v1.0/?scriptPath=${workDir}`, {
    method: "POST",
    headers: SCRIPT_TYPE,
    body,
  });
}

Deno.test("a write into a folder one may not list answers the same whether the name exists or not", async () => {
  await using s = await startTestServer();
  await s.write("/users/admin/t2.sxt", "kept");
  await s.write("/users/admin/sub/a.log", "kept");
  await s.write("/users/bob/mine.txt", "mine");
  const put = (path: string) => s.fetch("bob", `${R}${path}`, { method: "PUT", body: "x" });
  const del = (path: string) => s.fetch("bob", `${R}${path}`, { method: "DELETE" });
  const move = (to: string) =>
    s.fetch("bob", `${R}/user/mine.txt?moveTo=${to}`, { method: "POST" });

  const pairs: [string, string, (p: string) => Promise<Response>][] = [
    ["/users/admin/t2.sxt", "/users/admin/none.sxt", put], // a file, and no file
    ["/users/admin/sub", "/users/admin/nosub", put], // a folder, and none
    ["/users/admin", "/users/nobody", put], // a user's folder, and none
    ["/users/admin/sub/x.log", "/users/nobody/sub/x.log", put], // in a folder, and in none
    ["/users/admin/sub/new/", "/users/nobody/sub/new/", put], // a new folder
    ["/users/admin/t2.sxt", "/users/admin/none.sxt", del],
    ["/users/admin/sub", "/users/admin/nosub", del],
    ["/users/admin/t2.sxt", "/users/admin/none.sxt", move],
    ["/users/admin/sub/x.txt", "/users/nobody/x.txt", move],
  ];
  for (const [there, absent, write] of pairs) {
    const a = await answer(await write(there));
    const b = await answer(await write(absent));
    assert.equal(
      a.status,
      404,
      `${write === put ? "PUT" : write === del ? "DELETE" : "move"} ${there}: ${a.message}`,
    );
    assertAlike(a, there.replace(/\/$/, ""), b, absent.replace(/\/$/, ""));
    // As a read of it answers; the folder that exists is never said not to.
    assert.equal(a.message, `no such resource: ${there.replace(/\/$/, "")}`);
    assert.ok(!/no such folder/.test(a.message), a.message);
  }
  const read = await answer(await s.fetch("bob", `${R}/users/admin/t2.sxt`));
  assert.equal(read.message, "no such resource: /users/admin/t2.sxt");

  // save() from a script: the same answer for a table that is there and one that is not.
  const save = (path: string) => script(s, "bob", `VALUES((a: 1)) | save('${path}')`);
  for (
    const [there, absent] of [
      ["/users/admin/t2.sxt", "/users/admin/none.sxt"],
      ["/users/admin/sub/t.sxt", "/users/nobody/t.sxt"],
    ]
  ) {
    const a = await answer(await save(there!));
    const b = await answer(await save(absent!));
    assert.equal(a.status, 404, a.message);
    assertAlike(a, there!, b, absent!);
    assert.match(a.message, new RegExp(`no such resource: ${there}`));
  }
  // Nothing was written or removed; bob's own folder works as before.
  assert.equal(await Deno.readTextFile(`${s.home}/data/users/admin/t2.sxt`), "kept");
  assert.equal(await Deno.readTextFile(`${s.home}/data/users/admin/sub/a.log`), "kept");
  const own = await s.fetch("bob", `${R}/user/new.txt`, { method: "PUT", body: "x" });
  assert.equal(own.status, 201);
  await own.body?.cancel();
  const saved = await script(s, "bob", "VALUES((a: 1)) | save('/user/t.sxt')");
  assert.equal(saved.status, 200, await saved.text());
});

Deno.test("a write where one may list but not write is refused as such (no oracle to hide)", async () => {
  await using s = await startTestServer({}, {
    grants: [{ path: "/users/admin/views", user: "bob", rights: ["list"] }],
  });
  await s.write("/users/admin/views/v.sx", "VALUES((a: 1))");
  const put = await answer(
    await s.fetch("bob", `${R}/users/admin/views/v.sx`, { method: "PUT", body: "x" }),
  );
  assert.equal(put.status, 403, put.message);
  assert.match(put.message, /write right on \/users\/admin\/views\/v\.sx/);
  const create = await answer(
    await s.fetch("bob", `${R}/users/admin/views/w.sx`, { method: "PUT", body: "x" }),
  );
  assert.equal(create.status, 403, create.message);
  assert.match(create.message, /create right on \/users\/admin\/views/);
  // A right given on the file itself still lets bob replace it without seeing the folder.
  await using t = await startTestServer({}, {
    grants: [{ path: "/users/admin/drop.txt", user: "bob", rights: ["write"] }],
  });
  await t.write("/users/admin/drop.txt", "old");
  const replaced = await t.fetch("bob", `${R}/users/admin/drop.txt`, {
    method: "PUT",
    body: "new",
  });
  assert.equal(replaced.status, 200, await replaced.text());
  assert.equal(await Deno.readTextFile(`${t.home}/data/users/admin/drop.txt`), "new");
});

Deno.test("a datastore outside one's acl answers like one that does not exist, on every scheme", async () => {
  const root = await Deno.makeTempDir({ prefix: "trawl-weblogs-" });
  await Deno.writeTextFile(`${root}/a.log`, "1 x\n");
  await using s = await startTestServer();
  await Deno.writeTextFile(`${s.home}/conf/license`, "edition = enterprise\n");
  const acl = { users: { alice: ["read", "list"] }, groups: {} };
  await s.write(
    "/system/datastores/weblogs.json",
    JSON.stringify({ type: "FILE", fileStore: { root, acl } }),
  );
  await s.write(
    "/system/datastores/corp.json",
    JSON.stringify({
      type: "CLOUDAPI",
      cloudapiStore: {
        clientId: "11111111-2222-3333-4444-555555555555",
        tenantId: "contoso.onmicrosoft.com",
        // Too short (its queries are refused for it): alice, in its acl, still sees it listed.
        secret: "s3cret",
        directoryLogs: "audits:audits|2 h|15 min",
        acl,
      },
    }),
  );
  await s.write(
    "/system/datastores/archive.json",
    JSON.stringify({
      type: "AZBLOB",
      azblobStore: { accountName: "contosoarchive", sasToken: "sv=x&sig=y", acl },
    }),
  );
  await s.write("/system/datastores/broken.json", "{ not json");
  try {
    const cases: [string, string, string][] = [
      ["LIST(src: 'file://weblogs/*.log')", "weblogs", "nostore"],
      ["LIST(src: 'file://broken/*.log')", "broken", "nostore"],
      ["READ_JSON(src: 'cloudapi://corp/directory_service/audits/**')", "corp", "nostore"],
      ["READ_JSON(src: 'azblob://archive/logs/*.json')", "archive", "nostore"],
      ["READ_JSON(src: 'azblob://broken/logs/*.json')", "broken", "nostore"],
    ];
    for (const [body, store, absent] of cases) {
      const a = await answer(await script(s, "bob", body));
      const b = await answer(await script(s, "bob", body.replace(store, absent)));
      assert.equal(a.status, 404, `${body}: ${a.message}`);
      assertAlike(a, store, b, absent);
      assert.ok(!a.message.includes("/system/datastores"), a.message);
      assert.ok(!/acl|may not/.test(a.message), a.message);
    }
    // For alice, in the acl, the store works; an admin is told which definition is missing.
    const listed = await script(s, "alice", "LIST(src: 'file://weblogs/*.log') | select(size)");
    assert.equal(await listed.text(), '[{"size":4}]');
    const root_ = await s.deps.users.add("root", { admin: true });
    const asAdmin = (path: string, init: RequestInit = {}) =>
      fetch(s.url + path, {
        ...init,
        headers: { Authorization: `Bearer ${root_}`, ...SCRIPT_TYPE },
      });
    const missing = await answer(
      await asAdmin("/API/v1.0/?scriptPath=/user", {
        method: "POST",
        body: "LIST(src: 'file://nostore/*.log')",
      }),
    );
    assert.match(missing.message, /no \/system\/datastores\/nostore\.json/);
    const broken = await answer(
      await asAdmin("/API/v1.0/?scriptPath=/user", {
        method: "POST",
        body: "READ_JSON(src: 'azblob://broken/logs/*.json')",
      }),
    );
    assert.equal(broken.code, "BAD_DATASTORE", broken.message);
    assert.match(broken.message, /is not valid JSON/);

    // Over HTTP: /datastores and the tree's listing show bob none of them, and a definition's
    // path answers the same whether it exists or not.
    for (const name of ["weblogs", "corp", "archive", "broken"]) {
      assertAlike(
        await answer(await s.fetch("bob", `/API/v1.0/datastores/${name}`)),
        name,
        await answer(await s.fetch("bob", "/API/v1.0/datastores/nostore")),
        "nostore",
      );
      assertAlike(
        await answer(await s.fetch("bob", `${R}/system/datastores/${name}.json`)),
        name,
        await answer(await s.fetch("bob", `${R}/system/datastores/nostore.json`)),
        "nostore",
      );
    }
    const names = async (user: string) =>
      (await (await s.fetch(user, `${R}/system/datastores`)).json() as { name: string }[])
        .map((e) => e.name);
    assert.deepEqual(await names("bob"), []);
    assert.deepEqual(await names("alice"), ["archive.json", "corp.json", "weblogs.json"]);
    const all = await (await asAdmin(`${R}/system/datastores`)).json() as { name: string }[];
    assert.equal(all.length, 4);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a corrupt stored table is told as corrupt, by its tree path, never a host path", async () => {
  await using s = await startTestServer();
  const put = await s.fetch("bob", `${R}/user/x.sxt`, { method: "PUT", body: "garbage" });
  assert.equal(put.status, 201);
  await put.body?.cancel();
  const listing = await (await s.fetch("bob", `${R}/user`)).json() as {
    name: string;
    kind: string;
  }[];
  assert.deepEqual(listing.map((e) => [e.name, e.kind]), [["x.sxt", "table"]]);

  const answers = [
    await answer(await script(s, "bob", "@[/user/x.sxt]")),
    await answer(await s.fetch("bob", "/API/v1.0/tables/user/x.sxt")),
    await answer(await s.fetch("bob", "/API/v1.0/tables/user/x.sxt/schema")),
  ];
  for (const a of answers) {
    assert.equal(a.status, 409, a.message);
    assert.equal(a.code, "CORRUPT_TABLE", a.message);
    assert.match(
      a.message,
      /stored table \/users\/bob\/x\.sxt is corrupt: no complete header line/,
    );
    assert.ok(!a.message.includes(s.home), a.message);
  }

  // A table whose header is whole but whose rows are torn: found while the query runs.
  const saved = await script(s, "bob", "VALUES((a: 1), (a: 2)) | save('/user/t.sxt')");
  assert.equal(saved.status, 200, await saved.text());
  const whole = await (await s.fetch("bob", `${R}/user/t.sxt`)).text();
  const torn = whole.split("\n").slice(0, 2).join("\n") + "\n";
  const replaced = await s.fetch("bob", `${R}/user/t.sxt`, { method: "PUT", body: torn });
  assert.equal(replaced.status, 200);
  await replaced.body?.cancel();
  const run = await answer(await script(s, "bob", "@[/user/t.sxt]"));
  assert.equal(run.status, 409, run.message);
  assert.equal(run.code, "CORRUPT_TABLE", run.message);
  assert.match(run.message, /stored table \/users\/bob\/t\.sxt is corrupt: no trailer/);
  assert.ok(!run.message.includes(s.home), run.message);
});

Deno.test("scriptPath answers like /resources and @[...] for a script one may list but not run", async () => {
  await using s = await startTestServer({}, {
    grants: [{ path: "/users/admin/views", user: "bob", rights: ["list"] }],
  });
  await s.write("/users/admin/views/v.sx", "init(ip::IPADDR); VALUES((a: 1))");
  await s.write("/users/admin/hidden/h.sx", "VALUES((a: 1))");
  const path = "/users/admin/views/v.sx";
  const answers = [
    await answer(await s.fetch("bob", `${R}${path}`)),
    await answer(await script(s, "bob", `@[${path}](ip: 10.0.0.1)`)),
    await answer(
      await s.fetch("bob", `/API/v1.0/?scriptPath=${path}&ip=10.0.0.1`, { method: "POST" }),
    ),
    await answer(
      await s.fetch("bob", `/API/v1.0/queries?scriptPath=${path}&ip=10.0.0.1`, { method: "POST" }),
    ),
  ];
  for (const a of answers) assert.equal(a.status, 403, a.message);
  // A script in a folder bob may not see: the same 404 whether it is there or not.
  const run = (p: string) => s.fetch("bob", `/API/v1.0/?scriptPath=${p}`, { method: "POST" });
  assertAlike(
    await answer(await run("/users/admin/hidden/h.sx")),
    "h.sx",
    await answer(await run("/users/admin/hidden/none.sx")),
    "none.sx",
  );
  const hidden = await answer(await run("/users/admin/hidden/h.sx"));
  assert.equal(hidden.status, 404, hidden.message);
});
