/**
 * A wrong cloudapi:// datastore definition fails the query with BAD_DATASTORE and a message
 * that names the key, the value and what is allowed; and no secret (the client secret, the
 * access tokens) ever reaches a response, a warning or the server log.
 */

import assert from "node:assert/strict";
import { finished, startQuery } from "../api/client.ts";
import {
  cloudServer,
  FAMILIES,
  readScript,
  SCRIPT_HEADERS,
  storeDefinition,
} from "./http_harness.ts";
import { HOUR, NOW, SECRET } from "./harness.ts";

const AUDITS = FAMILIES[0]!;
const FROM = NOW - 2 * HOUR - 30 * 60_000;
const TO = FROM + HOUR;
const WRONG_SECRET = "Wr0ng.S3cret~Other";

interface BadCase {
  readonly title: string;
  /**
   * `plan`: the definition is read when the query is planned, so the POST itself is refused
   * (400); `run`: only the provider can tell (the token endpoint), so the query FAILS (409).
   */
  readonly found: "plan" | "run";
  /** The definition file's text. */
  readonly file: (good: Record<string, unknown>) => string;
  /** What the message must say (key, value, what is allowed). */
  readonly says: RegExp[];
}

const wrap = (store: Record<string, unknown>) =>
  JSON.stringify({ type: "CLOUDAPI", cloudapiStore: store });

const BAD: readonly BadCase[] = [
  {
    title: "an unknown suitePlan",
    found: "plan",
    file: (good) => wrap({ ...good, suitePlan: "moon" }),
    says: [/key 'suitePlan' has value "moon": allowed: ent, gcc, gcc_high, dod/],
  },
  {
    title: "a readTimeout that is no interval",
    found: "plan",
    file: (good) => wrap({ ...good, readTimeout: "soon" }),
    says: [/key 'readTimeout' has value "soon": /],
  },
  {
    title: "a log list with an unknown log type",
    found: "plan",
    file: (good) => wrap({ ...good, directoryLogs: "audits:audit|2 h|15 min" }),
    says: [/key 'directoryLogs' has value "audits:audit\|2 h\|15 min": /, /audits/],
  },
  {
    title: "a tenant given as 'common'",
    found: "plan",
    file: (good) => wrap({ ...good, tenantId: "common" }),
    says: [/key 'tenantId' has value "common": expected the tenant's GUID or domain/],
  },
  {
    title: "an unknown key",
    found: "plan",
    file: (good) => wrap({ ...good, secrett: SECRET }),
    says: [/unknown key 'secrett'; allowed keys: clientId, tenantId, secret, /],
  },
  {
    title: "a secret that is not a string",
    found: "plan",
    file: (good) => wrap({ ...good, secret: 12345 }),
    says: [/key 'secret' has value \(hidden\): expected string/],
  },
  {
    // Hidden wherever it occurred, "e" made "datastor(hidden) ..." and "invalid_cli(hidd(hidden)n)nt".
    title: "a secret too short to keep out of messages",
    found: "plan",
    file: (good) => wrap({ ...good, secret: "e", suitePlan: "bad" }),
    says: [
      /key 'secret' has value \(hidden\): too short: a client secret has at least 16 characters/,
      /key 'suitePlan' has value "bad": allowed: ent, gcc, gcc_high, dod/,
    ],
  },
  {
    title: "the secret pasted under another key as well",
    found: "plan",
    file: (good) => wrap({ ...good, suitePlan: SECRET }),
    says: [/key 'suitePlan' has value "\(hidden\)": allowed: ent, gcc, gcc_high, dod/],
  },
  // A definition that is not JSON: its acl cannot be read, so only admins are told of it
  // (tests/cloudapi/access_test.ts); alice, who runs these, finds no store.
  {
    title: "a secret the token endpoint refuses",
    found: "run",
    file: (good) => wrap({ ...good, secret: WRONG_SECRET }),
    says: [
      /invalid_client/,
      /check the keys 'tenantId', 'clientId' and 'secret' of the definition/,
    ],
  },
];

for (const bad of BAD) {
  Deno.test(`${bad.title} fails the query with BAD_DATASTORE, naming the key and never the secret`, async () => {
    await using c = await cloudServer();
    const store = await c.addStore();
    await c.s.write(`/system/datastores/${store.name}.json`, bad.file(storeDefinition()));
    const script = readScript(store.name, AUDITS, FROM, TO);

    const sync = await c.syncQuery(script);
    const text = sync.bodies[0]!;
    const body = JSON.parse(text);
    // The error as the API reports it: the answer itself, or the failed query's `error`.
    let error: { code: string; message: string };
    let statusBody: string;
    if (bad.found === "plan") {
      assert.equal(sync.status, 400, text);
      error = body;
      assert.deepEqual(body.diagnostics.map((d: { code: string }) => d.code), ["BAD_DATASTORE"]);
      const posted = await c.s.fetch("alice", "/API/v1.0/queries?scriptPath=/user", {
        method: "POST",
        headers: SCRIPT_HEADERS,
        body: script,
      });
      statusBody = await posted.text();
      assert.equal(posted.status, 400, statusBody);
      assert.equal(JSON.parse(statusBody).message, body.message);
    } else {
      assert.equal(sync.status, 409, text);
      assert.equal(body.code, "QUERY_FAILED");
      error = body.error;
      const id = await startQuery(c.s, script);
      const st = await finished(c.s, id);
      statusBody = JSON.stringify(st);
      assert.equal(st.state, "FAILED");
      assert.deepEqual((st as unknown as { error: unknown }).error, body.error);
    }
    assert.equal(error.code, "BAD_DATASTORE", text);
    assert.match(error.message, new RegExp(`datastore '${store.name}'`));
    for (const re of bad.says) assert.match(error.message, re);
    // The secret is hidden once, never inside a word nor inside a marker.
    assert.ok(!/\w\(hidden\)|\(hidden\)\w|\(hidd(?!en\))/.test(error.message), error.message);
    for (const t of [text, statusBody]) {
      assert.ok(!t.includes(SECRET) && !t.includes(WRONG_SECRET), `no secret in ${t}`);
    }
  });
}

Deno.test("neither the client secret nor an access token appears in any response, warning or log line", async () => {
  const logLines: string[] = [];
  await using c = await cloudServer({ logLine: (line) => logLines.push(line) });
  const bodies: string[] = [];
  const warnings: string[] = [];
  // Succeeds with warnings: a wrong server clock, and an hour given up after its retries.
  const good = await c.addStore({
    dateSkewMs: 10 * 60_000,
    // Four failures per query (sync, then async) give the hour 09:00 up each time.
    faults: [{ kind: "500", match: "T09%3A00", times: 8 }],
  }, storeDefinition({ maxErrorRetries: 3 }));
  // Fails: the token endpoint refuses the secret.
  const refused = await c.addStore({}, storeDefinition({ secret: WRONG_SECRET }));
  // Fails: the definition is wrong, with the secret right beside the mistake.
  const broken = await c.addStore({}, storeDefinition({ readTimeout: SECRET }));

  for (const store of [good, refused, broken]) {
    const script = readScript(store.name, AUDITS, FROM - HOUR, TO);
    const sync = await c.syncQuery(script);
    bodies.push(...sync.bodies);
    if (store === broken) {
      assert.equal(sync.status, 400, sync.bodies.join("\n"));
      continue;
    }
    const async = await c.asyncQuery(script);
    bodies.push(...async.bodies);
    warnings.push(...(async.last?.warnings ?? []).map((w) => w.message));
    if (store === good) {
      assert.equal(sync.status, 200, sync.bodies.join("\n"));
      assert.ok(sync.ids.length > 0);
    } else assert.equal(sync.status, 409, sync.bodies.join("\n"));
  }
  assert.ok(warnings.some((w) => /clock differs/.test(w)), warnings.join("\n"));
  assert.ok(warnings.some((w) => /given up after 3 retries/.test(w)), warnings.join("\n"));
  assert.ok(logLines.length > 0, "the server logged");

  const tokens = good.emulator.issuedTokens();
  assert.ok(tokens.length >= 1, "the emulator issued tokens");
  const secrets = [SECRET, WRONG_SECRET, ...tokens];
  for (const [what, texts] of [["response", bodies], ["warning", warnings], ["log", logLines]]) {
    for (const t of texts as string[]) {
      for (const secret of secrets) {
        assert.ok(!t.includes(secret), `a ${what} holds a secret: ${t}`);
      }
    }
  }
});

Deno.test("a malformed conf/license fails a cloudapi:// query with LICENSE_REQUIRED naming the file", async () => {
  await using c = await cloudServer();
  const store = await c.addStore();
  await Deno.writeTextFile(`${c.s.home}/conf/license`, "edition = enterprize\n");
  const sync = await c.syncQuery(readScript(store.name, AUDITS, FROM, TO));
  const text = sync.bodies[0]!;
  assert.equal(sync.status, 403, text);
  const body = JSON.parse(text);
  const codes = [body.code, ...(body.diagnostics ?? []).map((d: { code: string }) => d.code)];
  assert.ok(codes.includes("LICENSE_REQUIRED"), text);
  assert.match(body.message, /conf\/license/);
  assert.match(body.message, /'enterprize'/);
  assert.match(body.message, /edition = enterprise/);
  assert.ok(!text.includes(c.s.home), "no host path in the answer");
  assert.equal(store.emulator.requests.length, 0, "nothing was fetched");
});

Deno.test("an hour given up is counted in the query's stats, and a synchronous client can tell", async () => {
  await using c = await cloudServer();
  // Four failures per fetch of 09:00 (maxErrorRetries 3): that hour is given up each time.
  const store = await c.addStore({
    faults: [{ kind: "500", match: "T09%3A00", times: 12 }],
  }, storeDefinition({ maxErrorRetries: 3 }));
  const script = readScript(store.name, AUDITS, FROM - HOUR, TO);
  const id = await startQuery(c.s, script);
  const status = await finished(c.s, id);
  assert.equal(status.state, "SUCCEEDED");
  const lost = status.warnings.filter((w: { message: string }) => /given up/.test(w.message));
  assert.equal(lost.length, 1, JSON.stringify(status.warnings));
  assert.equal((status as unknown as { stats: { cloudLost: number } }).stats.cloudLost, 1);
  // Synchronously: the warning count in a header, and a 409 when the client asks for one.
  const sync = await c.s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
    method: "POST",
    headers: { "Content-Type": "text/vnd.engine.script" },
    body: script,
  });
  assert.equal(sync.status, 200);
  assert.ok(Number(sync.headers.get("Trawl-Warnings")) >= 1);
  await sync.body?.cancel();
  const strict = await c.s.fetch("alice", "/API/v1.0/?scriptPath=/user&opt.failOnWarning=true", {
    method: "POST",
    headers: { "Content-Type": "text/vnd.engine.script" },
    body: script,
  });
  assert.equal(strict.status, 409);
  assert.match(await strict.text(), /given up/);
});
