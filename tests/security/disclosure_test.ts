/**
 * What a user may not read never shows through another door: a stored "script" that is some
 * other file, the existence of a file one may not see, a datastore definition outside its acl,
 * a forged line in the server log. Each against a real server, which answers /healthz after.
 */

import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "../api/server.ts";
import { expectError, SCRIPT_TYPE } from "../api/client.ts";
import { sleep } from "../../engine/util/sleep.ts";

const TOKEN_TEXT = "api-token-7Hq2ZpX9";

async function assertHealthy(s: TestServer): Promise<void> {
  const res = await fetch(`${s.url}/healthz`);
  assert.equal(res.status, 200);
  await res.body?.cancel();
}

Deno.test("a stored script needs read as well as execute, and only .sx files are scripts", async () => {
  await using s = await startTestServer({}, {
    grants: [
      { path: "/system", user: "bob", rights: ["execute"] },
      { path: "/shared/run", user: "bob", rights: ["execute", "read"] },
    ],
  });
  await s.write("/system/keys/api_token.txt", `${TOKEN_TEXT} not a script {`);
  await s.write("/system/views/broken.sx", `VALUES((a: '${TOKEN_TEXT}')) |||`);
  await s.write("/shared/run/notes.txt", `${TOKEN_TEXT}`);
  await s.write("/shared/run/ok.sx", "VALUES((a: 1))");
  const run = (path: string) => s.fetch("bob", `/API/v1.0/?scriptPath=${path}`, { method: "POST" });

  const bodies: string[] = [];
  const txt = await expectError(await run("/system/keys/api_token.txt"), 400, "BAD_PARAMETER");
  assert.match(String(txt.message), /stored scripts are '\.sx' files/);
  bodies.push(JSON.stringify(txt));
  // The same answer for a name that does not exist: the check is on the name alone.
  const missing = await expectError(await run("/system/keys/nothing.txt"), 400, "BAD_PARAMETER");
  assert.equal(missing.message, String(txt.message).replace("api_token.txt", "nothing.txt"));
  // Execute without read: refused before the file is parsed, so nothing of it is quoted.
  const noRead = await expectError(await run("/system/views/broken.sx"), 403, "FORBIDDEN");
  assert.match(String(noRead.message), /execute and read rights/);
  bodies.push(JSON.stringify(noRead));
  // Readable, but not a script by name.
  bodies.push(
    JSON.stringify(await expectError(await run("/shared/run/notes.txt"), 400, "BAD_PARAMETER")),
  );
  for (const body of bodies) assert.ok(!body.includes(TOKEN_TEXT), body);

  const ok = await run("/shared/run/ok.sx");
  assert.equal(ok.status, 200);
  assert.equal(await ok.text(), '[{"a":1}]');
  await assertHealthy(s);
});

Deno.test("a stored script called from another script needs read as well, and is not quoted without it", async () => {
  await using s = await startTestServer({}, {
    grants: [
      { path: "/system", user: "bob", rights: ["execute", "list"] },
      { path: "/shared/run", user: "bob", rights: ["execute", "read"] },
    ],
  });
  await s.write("/system/views/broken.sx", `VALUES((a: '${TOKEN_TEXT}')) |||`);
  await s.write("/system/views/fine.sx", `VALUES((a: '${TOKEN_TEXT}'))`);
  await s.write("/shared/run/inner.sx", "VALUES((a: 2))");
  const run = (body: string) =>
    s.fetch("bob", "/API/v1.0/?scriptPath=/shared/run", {
      method: "POST",
      headers: SCRIPT_TYPE,
      body,
    });
  for (const called of ["/system/views/broken.sx", "/system/views/fine.sx"]) {
    const res = await run(`@[${called}]`);
    const text = await res.text();
    assert.equal(res.status, 403, text);
    assert.match(text, /you need the execute and read rights on the stored script/);
    assert.ok(!text.includes(TOKEN_TEXT), text);
  }
  // POST /check plans the call the same way: refused, nothing quoted.
  const checked = await s.fetch("bob", "/API/v1.0/check?scriptPath=/shared/run", {
    method: "POST",
    headers: SCRIPT_TYPE,
    body: "@[/system/views/broken.sx]",
  });
  const checkedText = await checked.text();
  assert.equal(checked.status, 200, checkedText);
  assert.match(checkedText, /you need the execute and read rights on the stored script/);
  assert.ok(!checkedText.includes(TOKEN_TEXT), checkedText);
  // The same call from a stored script bob may run, and a script he may read as well runs.
  await s.write("/shared/run/caller.sx", "@[/system/views/broken.sx]");
  const stored = await s.fetch("bob", "/API/v1.0/?scriptPath=/shared/run/caller.sx", {
    method: "POST",
  });
  const storedText = await stored.text();
  assert.equal(stored.status, 403, storedText);
  assert.ok(!storedText.includes(TOKEN_TEXT), storedText);
  const ok = await run("@[/shared/run/inner.sx]");
  assert.equal(ok.status, 200);
  assert.equal(await ok.text(), '[{"a":2}]');
  await assertHealthy(s);
});

Deno.test("a file one may not see is refused the same way whether it exists or not", async () => {
  await using s = await startTestServer();
  await s.write("/users/alice/secret.log", "1 x\n");
  await s.write("/users/alice/sub/a.log", "1 x\n");
  const warningsOf = async (src: string) => {
    const res = await s.fetch("bob", "/API/v1.0/queries?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT_TYPE,
      body: `PARSE(pattern: '''INT:n LD:x EOL''', src: '${src}')`,
    });
    const { queryId } = await res.json();
    for (;;) {
      const st = await (await s.fetch("bob", `/API/v1.0/queries/${queryId}`)).json();
      if (["SUCCEEDED", "FAILED", "CANCELLED"].includes(st.state)) {
        return (st.warnings as { message: string }[]).map((w) => w.message.replace(src, "<src>"));
      }
      await sleep(10);
    }
  };
  const existing = await warningsOf("/users/alice/secret.log");
  const missing = await warningsOf("/users/alice/nothing.log");
  assert.deepEqual(existing, missing);
  assert.ok(existing.length > 0);
  assert.ok(!existing.some((w) => /no right to read/.test(w)), existing.join("\n"));
  // The same for a folder along the way, and for alice herself nothing changes.
  assert.deepEqual(
    await warningsOf("/users/alice/sub/*.log"),
    await warningsOf("/users/alice/nosub/*.log"),
  );
  await assertHealthy(s);
});

Deno.test("a cloud definition's problems are told only to users in its acl, and never a credential", async () => {
  const SECRET = "Sw4pped.S3cret~Value";
  const TENANT = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
  await using s = await startTestServer();
  await Deno.writeTextFile(`${s.home}/conf/license`, "edition = enterprise\n");
  await s.write(
    "/system/datastores/corp.json",
    JSON.stringify({
      type: "CLOUDAPI",
      cloudapiStore: {
        clientId: "11111111-2222-3333-4444-555555555555",
        tenantId: SECRET,
        secret: TENANT,
        acl: { users: { alice: ["read"] }, groups: {} },
      },
    }),
  );
  const post = (user: string) =>
    s.fetch(user, "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT_TYPE,
      body: "READ_JSON(src: 'cloudapi://corp/directory_service/audits/**')",
    });
  const bob = await post("bob");
  const bobText = await bob.text();
  // Outside the acl the store is as one that does not exist.
  assert.equal(bob.status, 404, bobText);
  assert.match(bobText, /there is no datastore 'corp' that you may read/);
  assert.ok(!/tenantId|BAD_DATASTORE/.test(bobText), bobText);
  const alice = await post("alice");
  const aliceText = await alice.text();
  assert.equal(alice.status, 400, aliceText);
  assert.match(aliceText, /key 'tenantId' has value \(hidden\)/);
  for (const text of [bobText, aliceText]) {
    assert.ok(!text.includes(SECRET) && !text.includes(TENANT), text);
  }
  await assertHealthy(s);
});

Deno.test("a FILE datastore's definition problems are told only to users in its acl", async () => {
  await using s = await startTestServer();
  await s.write(
    "/system/datastores/web.json",
    JSON.stringify({
      type: "FILE",
      fileStore: { root: "relative/secret-root", acl: { users: { alice: ["read"] } } },
    }),
  );
  const post = (user: string) =>
    s.fetch(user, "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT_TYPE,
      body: "PARSE(pattern: '''LD:x EOL''', src: 'file://web/a.log')",
    });
  const bobText = await (await post("bob")).text();
  assert.match(bobText, /there is no FILE datastore 'web' that you may read/);
  assert.ok(!bobText.includes("secret-root"), bobText);
  assert.match(await (await post("alice")).text(), /secret-root/);
  await assertHealthy(s);
});

Deno.test("an AZBLOB datastore's definition problems are told only to users in its acl", async () => {
  const ENDPOINT = "http://internal-archive.corp.example:10000/secret-path";
  await using s = await startTestServer();
  await s.write(
    "/system/datastores/archive.json",
    JSON.stringify({
      type: "AZBLOB",
      azblobStore: {
        accountName: "contosoarchive",
        sasToken: "not-a-sas",
        endpoint: ENDPOINT,
        timeZone: "Mars/Olympus",
        acl: { users: { alice: ["read", "list"] }, groups: {} },
      },
    }),
  );
  const post = (user: string) =>
    s.fetch(user, "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT_TYPE,
      body: "READ_JSON(src: 'azblob://archive/logs/*.json')",
    });
  const bob = await post("bob");
  const bobText = await bob.text();
  assert.equal(bob.status, 404, bobText);
  assert.match(bobText, /there is no datastore 'archive' that you may read/);
  assert.ok(!/BAD_DATASTORE|sasToken|Mars|internal-archive/.test(bobText), bobText);
  const alice = await post("alice");
  const aliceText = await alice.text();
  assert.equal(alice.status, 400, aliceText);
  assert.match(aliceText, /BAD_DATASTORE/);
  assert.match(aliceText, /Mars\/Olympus/);
  assert.ok(!aliceText.includes("not-a-sas"), aliceText);
  await assertHealthy(s);
});

Deno.test("control characters in a request path cannot forge a line of the server log", async () => {
  const lines: string[] = [];
  await using s = await startTestServer({}, { logLine: (line) => lines.push(line) });
  const forged = "2026-01-01T00.00.00.000Z ERROR forged";
  const res = await fetch(`${s.url}/healthz%0A${encodeURIComponent(forged)}%1b[31m%E2%80%A8x`);
  await res.body?.cancel();
  await assertHealthy(s);
  const logged = lines.join("\n");
  assert.ok(
    lines.some((l) => l.includes(`/healthz\\n${forged}\\x1b[31m\\u2028x`)),
    logged,
  );
  for (const line of logged.split("\n")) {
    assert.match(line, /^\d{4}-\d\d-\d\dT\S+Z (INFO|WARN|ERROR) /);
    assert.ok(!line.startsWith(forged), line);
  }
  // deno-lint-ignore no-control-regex
  assert.ok(!/[\x00-\x09\x0b-\x1f\u2028]/.test(logged));
});
