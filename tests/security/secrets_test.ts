/**
 * Secrets never reach the log or an answer: not the bearer token, not the query string (which
 * may carry script arguments), not other headers, not a datastore's client secret.
 */

import assert from "node:assert/strict";
import { ensureHome } from "../../home/layout.ts";
import { memoryLogger } from "../../home/log.ts";
import { FsResourceTree } from "../../home/resource_tree.ts";
import { loadSettings } from "../../home/settings.ts";
import { UserStore } from "../../home/user_store.ts";
import { createApp } from "../../routes/app.ts";
import { parseDefinition } from "../../connectors/cloudapi/definition.ts";

const QUERY_SECRET = "qs-s3cr3t-7f1c";
const HEADER_SECRET = "hdr-s3cr3t-9a2b";
const WRONG_TOKEN = "wrong-t0ken-4d5e";

Deno.test("the request log and the answers carry no token, query string or header", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-secrets-" });
  try {
    const home = await ensureHome(dir);
    const users = UserStore.forHome(home);
    const log = memoryLogger();
    const app = createApp({
      home,
      settings: loadSettings(null, {}).settings,
      users,
      tree: new FsResourceTree(home.dataDir),
      log,
    });
    const token = await users.add("alice", {});
    const headers = { "X-Api-Key": HEADER_SECRET, Cookie: `s=${HEADER_SECRET}` };
    const bodies: string[] = [];
    for (
      const [path, auth] of [
        [`/API/v1.0/whoami?password=${QUERY_SECRET}`, `Bearer ${token}`],
        [`/API/v1.0/whoami?password=${QUERY_SECRET}`, `Bearer ${WRONG_TOKEN}`],
        [`/API/v1.0/whoami?password=${QUERY_SECRET}`, `Basic ${WRONG_TOKEN}`],
        [`/API/v1.0/nowhere?password=${QUERY_SECRET}`, `Bearer ${token}`],
        [`/healthz?password=${QUERY_SECRET}`, `Bearer ${token}`],
      ] as const
    ) {
      const res = await app.request(path, { headers: { ...headers, Authorization: auth } });
      bodies.push(await res.text());
      for (const [name, value] of res.headers) bodies.push(`${name}: ${value}`);
    }
    const logged = log.lines.join("\n");
    assert.match(logged, /GET \/API\/v1\.0\/whoami 200 .* alice/);
    assert.match(logged, /GET \/API\/v1\.0\/whoami 401/);
    for (const secret of [token, WRONG_TOKEN, QUERY_SECRET, HEADER_SECRET, "password="]) {
      assert.ok(!logged.includes(secret), `the log carries ${secret}`);
      assert.ok(!bodies.join("\n").includes(secret), `an answer carries ${secret}`);
    }
    assert.ok(!/authorization|cookie|x-api-key/i.test(logged), logged);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a cloudapi definition's problems never show its client secret", () => {
  const secret = "cl13nt-s3cr3t-value";
  for (
    const store of [
      { clientId: "c", tenantId: "common", secret },
      { clientId: "", tenantId: "x.onmicrosoft.com", secret, connectTimeout: "soon" },
      { clientId: "c", tenantId: "x.onmicrosoft.com", secret: [secret] },
      { clientId: "c", tenantId: "x.onmicrosoft.com", secret: { value: secret } },
      { clientId: "c", tenantId: "x.onmicrosoft.com", secret, sceret: secret },
      { clientId: "c", tenantId: "x.onmicrosoft.com", secret, acl: { users: { a: ["all"] } } },
    ]
  ) {
    const r = parseDefinition("s", { type: "CLOUDAPI", cloudapiStore: store });
    assert.equal(r.ok, false, JSON.stringify(store));
    if (!r.ok) {
      const text = r.problems.join("\n");
      assert.ok(!text.includes(secret), text);
    }
  }
});
