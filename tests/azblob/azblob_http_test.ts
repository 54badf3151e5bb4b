/**
 * The `azblob://` datastore through the HTTP API, against Azurite: an admin defines the store
 * over /datastores (the key never shown, kept when a PUT leaves it out), a year of archived
 * sign-ins is queried with READ_JSON and path times, and a wrong key fails the query with
 * BAD_DATASTORE without the key in any answer or log line.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { DEV_ACCOUNT, DEV_KEY, startAzurite } from "../support/azurite.ts";
import { startTestServer, type TestServer } from "../api/server.ts";
import { finished, SCRIPT_TYPE, startQuery } from "../api/client.ts";

const D = "/API/v1.0/datastores";
const SIGNINS = "insights-logs-signinlogs";
const TENANT = "tenantId=0f1e2d3c-0000-4000-8000-123456789abc";
const SCRIPT = `READ_JSON(src: 'azblob://arch/${SIGNINS}/**/y=$yyyy$/m=$MM$/d=$dd$/h=$HH$/m=00/` +
  `PT1H.json', from: T('2024-05-01 13:00:00'), to: T('2024-05-01 15:00:00'))
| select(properties.userPrincipalName as user, time)
| sort(user)`;

async function asAdmin(s: TestServer) {
  const token = await s.deps.users.add("root", { admin: true });
  return (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set("Authorization", `Bearer ${token}`);
    return fetch(s.url + path, { ...init, headers });
  };
}

const put = (body: unknown): RequestInit => ({
  method: "PUT",
  body: JSON.stringify(body),
  headers: { "Content-Type": "application/json" },
});

function store(endpoint: string, extra: Record<string, unknown> = {}) {
  return {
    type: "AZBLOB",
    azblobStore: {
      endpoint,
      accountName: DEV_ACCOUNT,
      accountKey: DEV_KEY,
      acl: { users: { alice: ["read", "list"] }, groups: {} },
      ...extra,
    },
  };
}

function sync(s: TestServer, user: string, script: string): Promise<Response> {
  return s.fetch(user, "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { ...SCRIPT_TYPE, Accept: "application/json" },
    body: script,
  });
}

Deno.test("an AZBLOB store defined over /datastores hides its key, keeps it on PUT, and READ_JSON reads archived sign-ins by path time", async () => {
  await using az = await startAzurite();
  for (
    const [d, h, who] of [[1, 12, "early"], [1, 13, "carol"], [1, 14, "dave"], [1, 15, "late"]]
  ) {
    const line = JSON.stringify({
      time: `2024-05-0${d}T${h}:05:00Z`,
      properties: {
        userPrincipalName: `${who}@contoso.com`,
        status: { errorCode: Number(h) % 2 ? 50126 : 0 },
      },
    });
    await az.upload(SIGNINS, `${TENANT}/y=2024/m=05/d=0${d}/h=${h}/m=00/PT1H.json`, line + "\n");
  }
  await using s = await startTestServer();
  const admin = await asAdmin(s);
  const created = await admin(`${D}/arch`, put(store(az.endpoint)));
  const shown = await created.json();
  assert.equal(created.status, 201, JSON.stringify(shown));
  assert.equal(shown.azblobStore.accountKeySet, true);
  assert.equal(shown.azblobStore.sasTokenSet, false);
  assert.equal("accountKey" in shown.azblobStore, false);
  assert.ok(!JSON.stringify(shown).includes(DEV_KEY));
  const got = await (await admin(`${D}/arch`)).json();
  assert.deepEqual(got, shown);
  // What GET shows goes back as is: the key stays.
  const again = await admin(`${D}/arch`, put(shown));
  assert.equal(again.status, 200, await again.text());
  const file = join(s.home, "data", "system", "datastores", "arch.json");
  const stored = JSON.parse(await Deno.readTextFile(file));
  assert.equal(stored.azblobStore.accountKey, DEV_KEY);
  assert.equal("accountKeySet" in stored.azblobStore, false);
  // A credential given replaces the stored one, of either kind.
  const withSas = await admin(
    `${D}/sas`,
    put(store(az.endpoint, { accountKey: undefined, sasToken: "sv=2021-12-02&sig=abc" })),
  );
  assert.equal(withSas.status, 201, await withSas.text());
  const switched = await admin(`${D}/sas`, put(store(az.endpoint)));
  assert.equal(switched.status, 200, await switched.text());
  const sasFile = JSON.parse(await Deno.readTextFile(join(file, "..", "sas.json")));
  assert.equal(sasFile.azblobStore.accountKey, DEV_KEY);
  assert.equal("sasToken" in sasFile.azblobStore, false);
  assert.equal((await admin(`${D}/sas`, { method: "DELETE" })).status, 204);
  assert.deepEqual(await (await admin(D)).json(), [
    { name: "arch", type: "AZBLOB", families: [], logs: [] },
  ]);

  const res = await sync(s, "alice", SCRIPT);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.deepEqual(JSON.parse(text), [
    { user: "carol@contoso.com", time: "2024-05-01T13:05:00Z" },
    { user: "dave@contoso.com", time: "2024-05-01T14:05:00Z" },
  ]);
  // The example of docs/datastores.md.
  const failures = await sync(
    s,
    "alice",
    `READ_JSON(src: 'azblob://arch/${SIGNINS}/**/y=$yyyy$/m=$MM$/d=$dd$/h=$HH$/m=00/PT1H.json',
          from: T('2024-05-01 00:00:00'), to: T('2024-06-01 00:00:00'))
| filter(LONG(properties.status.errorCode) != 0)
| select(properties.userPrincipalName as user, count(*) as failures)
| group(user)
| sort(user)`,
  );
  const failed = await failures.text();
  assert.equal(failures.status, 200, failed);
  assert.deepEqual(JSON.parse(failed), [
    { user: "carol@contoso.com", failures: 1 },
    { user: "late@contoso.com", failures: 1 },
  ]);
  // Where each row came from: `path_field` gives each sign-in its blob.
  const perBlob = await sync(
    s,
    "alice",
    SCRIPT.replace("15:00:00'))", "15:00:00'), path_field: '_path')")
      .replace(
        "select(properties.userPrincipalName as user, time)",
        "select(properties.userPrincipalName as user, _path)",
      ),
  );
  const blobs = await perBlob.text();
  assert.equal(perBlob.status, 200, blobs);
  const rows = JSON.parse(blobs) as { user: string; _path: string }[];
  assert.deepEqual(rows.map((r) => r.user), ["carol@contoso.com", "dave@contoso.com"]);
  for (const [r, hour] of [[rows[0]!, "13"], [rows[1]!, "14"]] as const) {
    assert.match(
      r._path,
      new RegExp(`^azblob://arch/${SIGNINS}/.*/y=2024/m=05/d=01/h=${hour}/m=00/PT1H\\.json$`),
      r._path,
    );
  }
  // And the line each record starts on in its blob: Entra ID exports, JSON arrays over many lines.
  for (const day of ["2024-05-01", "2024-05-02"]) {
    const sample = new URL(`../samples/entra/signins_${day}.json`, import.meta.url);
    await az.upload("exports", `signins_${day}.json`, await Deno.readTextFile(sample));
  }
  const perLine = await sync(
    s,
    "alice",
    `READ_JSON(src: 'azblob://arch/exports/*.json', path_field: '_path', line_field: '_line')
| filter(status.errorCode != 0)
| select(_path, _line, userPrincipalName as user)`,
  );
  const lined = await perLine.text();
  assert.equal(perLine.status, 200, lined);
  assert.deepEqual(JSON.parse(lined), [
    { _path: "azblob://arch/exports/signins_2024-05-01.json", _line: 21, user: "bob@contoso.com" },
    { _path: "azblob://arch/exports/signins_2024-05-02.json", _line: 2, user: "carol@contoso.com" },
  ]);
  const refused = await sync(s, "bob", SCRIPT);
  const body = await refused.json();
  // Outside the acl the store is as one that does not exist.
  assert.equal(refused.status, 404, JSON.stringify(body));
  assert.equal(body.code, "NOT_FOUND");
  assert.match(body.message, /there is no datastore 'arch' that you may read/);
});

Deno.test("a wrong account key fails the query with BAD_DATASTORE naming the store, and the key is in no answer or log line", async () => {
  await using az = await startAzurite();
  await az.upload(SIGNINS, `${TENANT}/y=2024/m=05/d=01/h=13/m=00/PT1H.json`, "{}\n");
  const lines: string[] = [];
  await using s = await startTestServer({}, { logLine: (l) => lines.push(l) });
  const admin = await asAdmin(s);
  const wrong = crypto.getRandomValues(new Uint8Array(64)).toBase64();
  const answers: string[] = [];
  const created = await admin(`${D}/arch`, put(store(az.endpoint, { accountKey: wrong })));
  answers.push(await created.text());
  assert.equal(created.status, 201);

  const res = await sync(s, "alice", SCRIPT);
  const text = await res.text();
  answers.push(text);
  assert.equal(res.status, 409, text);
  const error = JSON.parse(text).error;
  assert.equal(error.code, "BAD_DATASTORE");
  assert.match(error.message, /datastore 'arch': the storage account 'devstoreaccount1' refused/);
  const id = await startQuery(s, SCRIPT);
  const st = await finished(s, id);
  answers.push(JSON.stringify(st));
  assert.equal(st.state, "FAILED");
  // A definition with mistakes names the keys, never the values given.
  const bad = await admin(
    `${D}/other`,
    put(store(az.endpoint, { sasToken: wrong, accountName: "X" })),
  );
  const badText = await bad.text();
  answers.push(badText);
  assert.equal(bad.status, 400, badText);
  assert.match(badText, /accountName/);
  assert.match(badText, /'accountKey' and 'sasToken': give exactly one/);
  for (const seen of [...answers, ...lines]) {
    assert.ok(!seen.includes(wrong), `the key leaked: ${seen}`);
  }
  assert.ok(lines.length > 0);
});

Deno.test("a kept account key is bound to its endpoint and account: moving either without the key is 400, and the other host hears nothing", async () => {
  await using az = await startAzurite();
  await az.upload(SIGNINS, `${TENANT}/y=2024/m=05/d=01/h=13/m=00/PT1H.json`, "{}\n");
  // Another host on loopback, as an attacker's would be: it notes every request it gets.
  const heard: string[] = [];
  await using other = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    heard.push(`${req.method} ${req.url} ${req.headers.get("authorization") ?? ""}`);
    return new Response("<EnumerationResults/>", { status: 200 });
  });
  const elsewhere = `http://127.0.0.1:${other.addr.port}/${DEV_ACCOUNT}`;
  await using s = await startTestServer();
  const admin = await asAdmin(s);
  assert.equal((await admin(`${D}/arch`, put(store(az.endpoint)))).status, 201);
  const file = join(s.home, "data", "system", "datastores", "arch.json");
  const before = await Deno.readTextFile(file);
  const shown = await (await admin(`${D}/arch`)).json();
  for (
    const [key, value] of [["endpoint", elsewhere], ["accountName", "otheraccount"]]
  ) {
    const res = await admin(
      `${D}/arch`,
      put({ ...shown, azblobStore: { ...shown.azblobStore, [key!]: value } }),
    );
    const body = await res.json();
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.code, "BAD_DATASTORE");
    assert.deepEqual(body.problems, [
      `datastore 'arch': key '${key}' changed: give 'accountKey' or 'sasToken' again (a stored ` +
      `credential is only sent where it was entered for; its value is not shown)`,
    ]);
    assert.equal(await Deno.readTextFile(file), before, "nothing is stored");
  }
  // The store still reads where it was defined for; the other host heard nothing.
  const res = await sync(s, "alice", `LIST(src: 'azblob://arch/${SIGNINS}/**')`);
  const listed = await res.text();
  assert.equal(res.status, 200, listed);
  assert.equal(JSON.parse(listed).length, 1);
  assert.deepEqual(heard, []);
  // With a credential given again the move is the admin's to make.
  const moved = await admin(
    `${D}/arch`,
    put(store(elsewhere, { accountKey: undefined, sasToken: "sv=2021-12-02&sig=other" })),
  );
  assert.equal(moved.status, 200, await moved.text());
});

Deno.test("an AZBLOB endpoint on a link-local address (a cloud's metadata service) is refused", async () => {
  await using s = await startTestServer();
  const admin = await asAdmin(s);
  for (
    const endpoint of [
      "http://169.254.169.254/devstoreaccount1",
      "http://2852039166/x", // 169.254.169.254 as one number
      "http://[fe80::1]/x",
      "http://[::ffff:169.254.169.254]/x",
    ]
  ) {
    const res = await admin(`${D}/meta`, put(store(endpoint)));
    const body = await res.json();
    assert.equal(res.status, 400, endpoint);
    assert.match(body.message, /key 'endpoint' .*link-local/, endpoint);
    assert.ok(!JSON.stringify(body).includes(DEV_KEY));
  }
  assert.deepEqual(await (await admin(D)).json(), []);
});
