import assert from "node:assert/strict";
import { QueryError } from "../../engine/front/diagnostics.ts";
import { openCloudApiStore } from "../../connectors/cloudapi/cloudapi_datastore.ts";
import { parseDefinition } from "../../connectors/cloudapi/definition.ts";
import { ADMIN, baseStore, harness, HOUR, NOW, SECRET } from "./harness.ts";

async function refusal(p: Promise<unknown>): Promise<QueryError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof QueryError) return e;
    throw e;
  }
  throw new Error("expected a QueryError");
}

Deno.test("cloudapi:// without the Enterprise license fails with LICENSE_REQUIRED", async () => {
  const h = await harness({}, "community");
  try {
    await h.writeDefinition("corp", baseStore());
    const e = await refusal(
      openCloudApiStore("cloudapi://corp/directory_service/audits/*", ADMIN, h.deps()),
    );
    assert.equal(e.diagnostic.code, "LICENSE_REQUIRED");
    assert.match(e.message, /Enterprise license/);
  } finally {
    await h.close();
  }
});

Deno.test("the store's acl decides who may read it; admins always may", async () => {
  const h = await harness();
  try {
    await h.writeDefinition(
      "corp",
      baseStore({ acl: { users: { bob: ["read"] }, groups: { sec: ["read", "list"] } } }),
    );
    const uri = "cloudapi://corp/directory_service/audits/*";
    await openCloudApiStore(uri, { name: "bob", groups: [], admin: false }, h.deps());
    await openCloudApiStore(uri, { name: "eve", groups: ["sec"], admin: false }, h.deps());
    await openCloudApiStore(uri, ADMIN, h.deps());
    const e = await refusal(
      openCloudApiStore(uri, { name: "mallory", groups: ["ops"], admin: false }, h.deps()),
    );
    // Outside the acl the store is as one that does not exist, in code and message.
    assert.equal(e.diagnostic.code, "NOT_FOUND");
    const absent = await refusal(
      openCloudApiStore(
        "cloudapi://nope/x",
        { name: "mallory", groups: [], admin: false },
        h.deps(),
      ),
    );
    assert.equal(e.diagnostic.message, absent.diagnostic.message.replace("nope", "corp"));
    const missing = await refusal(openCloudApiStore("cloudapi://nope/x", ADMIN, h.deps()));
    assert.equal(missing.diagnostic.code, "NOT_FOUND");
  } finally {
    await h.close();
  }
});

Deno.test("a definition that is not JSON is told to admins only, without the text around the mistake", async () => {
  const h = await harness();
  try {
    // The parser's message would quote the text near the missing quote: the secret.
    const text = JSON.stringify({ type: "CLOUDAPI", cloudapiStore: baseStore() })
      .replace(`"${SECRET}"`, `"${SECRET}`);
    await Deno.writeTextFile(`${h.home}/data/system/datastores/corp.json`, text);
    const uri = "cloudapi://corp/directory_service/audits/*";
    const admin = await refusal(openCloudApiStore(uri, ADMIN, h.deps()));
    assert.equal(admin.diagnostic.code, "BAD_DATASTORE");
    assert.match(admin.message, /\/system\/datastores\/corp\.json is not valid JSON/);
    // Its acl cannot be read, so only admins may use it: to others it is no store at all.
    const bob = { name: "bob", groups: [], admin: false };
    const other = await refusal(openCloudApiStore(uri, bob, h.deps()));
    assert.equal(other.diagnostic.code, "NOT_FOUND");
    const absent = await refusal(openCloudApiStore("cloudapi://nope/x/y/*", bob, h.deps()));
    assert.equal(other.message, absent.message.replace("nope", "corp"));
    for (const e of [admin, other]) assert.ok(!e.message.includes(SECRET), e.message);
  } finally {
    await h.close();
  }
});

Deno.test("a wrong secret fails the query naming the store and the reason, never the secret", async () => {
  const h = await harness();
  try {
    await h.writeDefinition("corp", baseStore({ secret: "wrong-" + SECRET }));
    const e = await refusal(
      h.list("cloudapi://corp/directory_service/audits/**", { from: NOW - 2 * HOUR, to: NOW }),
    );
    assert.match(e.message, /datastore 'corp'/);
    assert.match(e.message, /AADSTS7000215|Invalid client secret/);
    assert.ok(!e.message.includes(SECRET));
  } finally {
    await h.close();
  }
});

Deno.test("a wrong definition names each key, its value and what is allowed, never the secret", () => {
  const r = parseDefinition("corp", {
    type: "CLOUDAPI",
    cloudapiStore: {
      ...baseStore(),
      secret: 12345,
      tenantId: "common",
      suitePlan: "gov",
      directoryTimeWindow: "30 dayz",
      directoryLogs: "audits:audit|1 h|15 min, x:signins|1 h|2 h",
      suiteRateLimit: 5,
      maxErrorRetries: -1,
      colour: "blue",
    },
  });
  assert.equal(r.ok, false);
  const text = !r.ok ? r.problems.join("\n") : "";
  assert.match(text, /key 'secret' has value \(hidden\)/);
  assert.match(text, /key 'suitePlan' has value "gov": allowed: ent, gcc, gcc_high, dod/);
  assert.match(text, /key 'maxErrorRetries' has value -1/);
  assert.match(text, /unknown key 'colour'/);
  assert.ok(!text.includes("12345"));
  const second = parseDefinition("corp", {
    type: "CLOUDAPI",
    cloudapiStore: {
      ...baseStore(),
      tenantId: "common",
      directoryTimeWindow: "30 dayz",
      directoryLogs: "audits:audit|1 h|15 min, x:signins|1 h|2 h",
      suiteRateLimit: 5,
    },
  });
  const t2 = !second.ok ? second.problems.join("\n") : "";
  assert.match(t2, /key 'tenantId' has value "common": expected the tenant's GUID or domain/);
  assert.match(t2, /key 'directoryTimeWindow' has value "30 dayz": unknown time unit 'dayz'/);
  assert.match(
    t2,
    /log type 'audit' in 'audits:audit\|1 h\|15 min' is not allowed; allowed: audits, signins/,
  );
  assert.match(t2, /update frequency '2 h' in 'x:signins\|1 h\|2 h' exceeds the lag time '1 h'/);
  assert.match(t2, /'suiteRateLimit' and 'suiteRateTimeunit' go together/);
  assert.ok(!t2.includes(SECRET));
});

Deno.test("a definition gets the specification's defaults", () => {
  const r = parseDefinition("corp", {
    type: "CLOUDAPI",
    cloudapiStore: { clientId: "c", tenantId: "contoso.com", secret: "s3cret-of-16-chars" },
  });
  assert.ok(r.ok);
  const d = r.definition;
  assert.deepEqual(d.windowMs, {
    directory: 30 * 86_400_000,
    activity: 90 * 86_400_000,
    suite: 7 * 86_400_000,
  });
  assert.deepEqual(
    [d.fileNameIncludesApp, d.filePathIncludesApp, d.fileNameIncludesHour, d.filePathIncludesHour],
    [true, false, false, false],
  );
  assert.equal(d.suitePlan, "ent");
  assert.equal(d.connectTimeoutMs, 10_000);
  assert.equal(d.readTimeoutMs, 60_000);
  assert.equal(d.maxErrorRetries, 3);
  assert.equal(d.userAgent, "Trawl/0.1.0");
});
