import assert from "node:assert/strict";
import { join } from "node:path";
import { startTestServer, type TestServer } from "./server.ts";

const D = "/API/v1.0/datastores";
const SECRET = "Sup3r.S3cret~Value-for-the-test";

const cloudStore = (extra: Record<string, unknown> = {}) => ({
  type: "CLOUDAPI",
  cloudapiStore: {
    clientId: "11111111-2222-3333-4444-555555555555",
    tenantId: "contoso.onmicrosoft.com",
    secret: SECRET,
    directoryLogs: "audits:audits|2 h|15 min",
    suiteLogs: "exchange:Audit.Mail|24 h|1 h",
    acl: { users: { alice: ["read"] }, groups: {} },
    ...extra,
  },
});

async function asAdmin(s: TestServer) {
  const token = await s.deps.users.add("root", { admin: true });
  return (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set("Authorization", `Bearer ${token}`);
    return fetch(s.url + path, { ...init, headers });
  };
}

function put(body: unknown): RequestInit {
  return {
    method: "PUT",
    body: JSON.stringify(body),
    headers: { "Content-Type": "application/json" },
  };
}

Deno.test("an admin defines a CLOUDAPI store; GET shows it without the secret and a PUT without secret keeps it", async () => {
  await using s = await startTestServer();
  const admin = await asAdmin(s);
  const created = await admin(`${D}/corp`, put(cloudStore()));
  assert.equal(created.status, 201);
  const shown = await created.json();
  assert.equal(shown.cloudapiStore.secretSet, true);
  assert.equal("secret" in shown.cloudapiStore, false);
  assert.ok(!JSON.stringify(shown).includes(SECRET));
  // Round trip: what GET shows goes back as is, and the secret stays.
  const again = await admin(
    `${D}/corp`,
    put({ ...shown, cloudapiStore: { ...shown.cloudapiStore, suiteTimeWindow: "3 days" } }),
  );
  assert.equal(again.status, 200);
  await again.body?.cancel();
  const stored = JSON.parse(
    await Deno.readTextFile(join(s.home, "data", "system", "datastores", "corp.json")),
  );
  assert.equal(stored.cloudapiStore.secret, SECRET);
  assert.equal(stored.cloudapiStore.suiteTimeWindow, "3 days");
  assert.equal("secretSet" in stored.cloudapiStore, false);
  const list = await (await admin(D)).json();
  assert.deepEqual(list, [{
    name: "corp",
    type: "CLOUDAPI",
    families: ["directory", "suite"],
    logs: ["directory_service/audits", "productivity_suite/exchange"],
  }]);
});

Deno.test("a kept secret is bound to its tenant, client and plan: changing one without the secret is 400 naming the key, and nothing is stored", async () => {
  await using s = await startTestServer();
  const admin = await asAdmin(s);
  assert.equal((await admin(`${D}/corp`, put(cloudStore()))).status, 201);
  const file = join(s.home, "data", "system", "datastores", "corp.json");
  const before = await Deno.readTextFile(file);
  const shown = await (await admin(`${D}/corp`)).json();
  for (
    const [key, value] of [
      ["tenantId", "fabrikam.onmicrosoft.com"],
      ["clientId", "99999999-2222-3333-4444-555555555555"],
      ["suitePlan", "gcc_high"],
    ]
  ) {
    const res = await admin(
      `${D}/corp`,
      put({ ...shown, cloudapiStore: { ...shown.cloudapiStore, [key!]: value } }),
    );
    assert.equal(res.status, 400, key);
    const body = await res.json();
    assert.equal(body.code, "BAD_DATASTORE");
    assert.equal(body.problems.length, 1);
    assert.match(body.problems[0], new RegExp(`key '${key}' changed: give 'secret' again`));
    assert.ok(!JSON.stringify(body).includes(SECRET));
    assert.equal(await Deno.readTextFile(file), before, "nothing is stored");
  }
  // With the secret given again, the same change is stored.
  const moved = await admin(
    `${D}/corp`,
    put(cloudStore({ tenantId: "fabrikam.onmicrosoft.com", secret: SECRET + "-2" })),
  );
  assert.equal(moved.status, 200);
  await moved.body?.cancel();
  const stored = JSON.parse(await Deno.readTextFile(file));
  assert.equal(stored.cloudapiStore.tenantId, "fabrikam.onmicrosoft.com");
  assert.equal(stored.cloudapiStore.secret, SECRET + "-2");
});

Deno.test("a definition with mistakes is 400 BAD_DATASTORE naming each key, never the secret, and nothing is stored", async () => {
  await using s = await startTestServer();
  const admin = await asAdmin(s);
  const bad = cloudStore({
    tenantId: SECRET, // swapped by mistake: its value must not be echoed
    maxErrorRetries: -1,
    suitePlan: "nope",
  });
  (bad.cloudapiStore as Record<string, unknown>).secret = "contoso.onmicrosoft.com";
  const res = await admin(`${D}/corp`, put(bad));
  assert.equal(res.status, 400);
  const body = await res.json();
  assert.equal(body.code, "BAD_DATASTORE");
  assert.ok(body.problems.length >= 2, JSON.stringify(body.problems));
  assert.ok(body.problems.some((p: string) => p.includes("maxErrorRetries")));
  assert.ok(body.problems.some((p: string) => p.includes("suitePlan")));
  const semantic = await admin(
    `${D}/corp`,
    put(cloudStore({ directoryLogs: "audits:nonsense|2 h|15 min" })),
  );
  assert.match((await semantic.json()).problems.join(), /directoryLogs/);
  assert.ok(!JSON.stringify(body).includes(SECRET));
  assert.equal((await admin(`${D}/corp`)).status, 404);
  const notJson = await admin(`${D}/corp`, { method: "PUT", body: "{nope" });
  assert.equal(notJson.status, 400);
  await notJson.body?.cancel();
  const badType = await admin(`${D}/corp`, put({ type: "S3" }));
  assert.match((await badType.json()).message, /CLOUDAPI, FILE/);
});

Deno.test("only admins write stores; users see only stores their acl lets them read", async () => {
  await using s = await startTestServer();
  const admin = await asAdmin(s);
  assert.equal((await admin(`${D}/corp`, put(cloudStore()))).status, 201);
  assert.equal((await admin(`${D}/other`, put(cloudStore({ acl: undefined })))).status, 201);
  const byAlice = await s.fetch("alice", `${D}/x`, put(cloudStore()));
  assert.equal(byAlice.status, 403);
  await byAlice.body?.cancel();
  assert.deepEqual(
    (await (await s.fetch("alice", D)).json()).map((d: { name: string }) => d.name),
    [
      "corp",
    ],
  );
  assert.deepEqual(await (await s.fetch("bob", D)).json(), []);
  const aliceGets = await (await s.fetch("alice", `${D}/corp`)).json();
  assert.ok(!JSON.stringify(aliceGets).includes(SECRET));
  for (const path of [`${D}/other`, `${D}/corp`, `${D}/missing`]) {
    const res = await s.fetch("bob", path);
    assert.equal(res.status, 404, `${path} is as absent to bob`);
    await res.body?.cancel();
  }
  const del = await s.fetch("alice", `${D}/corp`, { method: "DELETE" });
  assert.equal(del.status, 403);
  await del.body?.cancel();
  assert.equal((await admin(`${D}/corp`, { method: "DELETE" })).status, 204);
  assert.equal((await admin(`${D}/corp`, { method: "DELETE" })).status, 404);
});

Deno.test("hostile store names are refused and a store defined over HTTP is used by a query", async () => {
  await using s = await startTestServer();
  const admin = await asAdmin(s);
  for (const name of ["..", "a%2Fb", "%2e%2e", ".hidden", "x".repeat(80)]) {
    const res = await admin(`${D}/${name}`, put(cloudStore()));
    assert.ok([400, 404].includes(res.status), `${name}: ${res.status}`);
    await res.body?.cancel();
  }
  const logs = await Deno.makeTempDir({ prefix: "trawl-filestore-" });
  try {
    await Deno.writeTextFile(join(logs, "a.log"), "one\ntwo\n");
    const def = {
      type: "FILE",
      fileStore: { root: logs, acl: { users: { alice: ["read", "list"] }, groups: {} } },
    };
    assert.equal((await admin(`${D}/logs`, put(def))).status, 201);
    const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: { "Content-Type": "text/vnd.engine.script" },
      body: "PARSE(pattern: 'LD:line EOL', src: 'file://logs/*.log') | select(count(*) as n)",
    });
    assert.deepEqual(await res.json(), [{ n: 2 }]);
  } finally {
    await Deno.remove(logs, { recursive: true });
  }
});

Deno.test("a timeout that is no whole number of milliseconds is 400 naming the key, and nothing is stored", async () => {
  await using s = await startTestServer();
  const admin = await asAdmin(s);
  const azblob = (extra: Record<string, unknown>) => ({
    type: "AZBLOB",
    azblobStore: {
      accountName: "devstoreaccount1",
      sasToken: "sv=2022-11-02&ss=b&srt=co&sp=rl&sig=abc",
      ...extra,
    },
  });
  for (
    const [body, key] of [
      [cloudStore({ connectTimeout: "1.5 ms" }), "connectTimeout"],
      [cloudStore({ readTimeout: "2.25 ms" }), "readTimeout"],
      [cloudStore({ connectTimeout: "0.0005 s" }), "connectTimeout"],
      [cloudStore({ connectTimeout: 1.5 }), "connectTimeout"],
      [azblob({ connectTimeout: "1.5 ms" }), "connectTimeout"],
      [azblob({ readTimeout: "10.5 ms" }), "readTimeout"],
      [azblob({ readTimeout: 2.5 }), "readTimeout"],
    ] as const
  ) {
    const res = await admin(`${D}/timeouts`, put(body));
    const text = await res.text();
    assert.equal(res.status, 400, `${JSON.stringify(body)}: ${text}`);
    const answer = JSON.parse(text);
    assert.equal(answer.code, "BAD_DATASTORE");
    assert.equal(answer.problems.length, 1, text);
    assert.match(
      answer.problems[0],
      new RegExp(`key '${key}'.*: expected whole milliseconds`),
      text,
    );
    assert.equal((await admin(`${D}/timeouts`)).status, 404);
  }
  // Whole milliseconds however written are taken.
  for (const [i, t] of ["1500 ms", "1.5 s", "0.001 s", "0", "250"].entries()) {
    const value = /^\d+$/.test(t) ? Number(t) : t;
    const res = await admin(`${D}/ok${i}`, put(cloudStore({ connectTimeout: value })));
    assert.equal(res.status, 201, `${t}: ${await res.text()}`);
  }
});

Deno.test("a secret too short to keep out of messages is 400 naming the key, and the other problems read as written", async () => {
  await using s = await startTestServer();
  const admin = await asAdmin(s);
  const G = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
  // The audit's case: hiding every "e" gave "datastor(hidden) 's7': k(hidden)y 'suit(hidden)Plan'".
  const res = await admin(
    `${D}/s7`,
    put({
      type: "CLOUDAPI",
      cloudapiStore: { clientId: G, tenantId: G, secret: "e", suitePlan: "bad" },
    }),
  );
  const text = await res.text();
  assert.equal(res.status, 400, text);
  const body = JSON.parse(text);
  assert.equal(body.code, "BAD_DATASTORE");
  assert.deepEqual(body.problems.toSorted(), [
    "datastore 's7': key 'secret' has value (hidden): too short: a client secret has at least " +
    "16 characters (Azure's have about 40)",
    `datastore 's7': key 'suitePlan' has value "bad": allowed: ent, gcc, gcc_high, dod`,
  ]);
  assert.equal((await admin(`${D}/s7`)).status, 404);
  // A long secret pasted under another key is hidden there, once, and only there.
  const pasted = await admin(`${D}/s8`, put(cloudStore({ suitePlan: SECRET })));
  const pastedBody = await pasted.json();
  assert.equal(pasted.status, 400);
  assert.deepEqual(pastedBody.problems, [
    `datastore 's8': key 'suitePlan' has value "(hidden)": allowed: ent, gcc, gcc_high, dod`,
  ]);
  // A secret of 16 characters or more is taken.
  const ok = await admin(`${D}/s9`, put(cloudStore({ secret: "0123456789abcdef" })));
  assert.equal(ok.status, 201, await ok.text());
});

Deno.test("a definition that is not JSON is refused naming the store, to PUT and to a test; one past 64 KiB gets 413; nothing is saved", async () => {
  await using s = await startTestServer();
  const admin = await asAdmin(s);
  for (const [path, method] of [[`${D}/corp`, "PUT"], [`${D}/corp/test`, "POST"]] as const) {
    const res = await admin(path, { method, body: "{not json" });
    const body = await res.json();
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.code, "BAD_DATASTORE");
    assert.match(body.message, /^datastore 'corp': the body is not valid JSON/);
    const big = await admin(path, { method, body: JSON.stringify({ pad: "x".repeat(70_000) }) });
    assert.equal(big.status, 413);
    assert.match((await big.json()).message, /at most 65536 bytes/);
  }
  const gone = await admin(`${D}/corp`);
  await gone.body?.cancel();
  assert.equal(gone.status, 404);
});
