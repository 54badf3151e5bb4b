/**
 * The Management Activity API as a real tenant answers it: the tenant's GUID in every URL (a
 * domain is refused with AF20013), PublisherIdentifier a tenant GUID, and subscriptions started
 * once (Microsoft asks for 15 minutes between start requests).
 */

import assert from "node:assert/strict";
import { allRecords, baseStore, harness, HOUR, NOW, TENANT } from "./harness.ts";

const FROM = NOW - 3 * HOUR;
const TO = NOW - HOUR;

Deno.test("a tenant given as a domain reads the suite through its GUID, the PublisherIdentifier too", async () => {
  const h = await harness();
  try {
    assert.match(TENANT, /\.onmicrosoft\.com$/, "the store names its tenant by domain");
    await h.writeDefinition("corp", baseStore());
    const { files, warnings } = await h.list("cloudapi://corp/productivity_suite/exchange/**", {
      from: FROM,
      to: TO,
    });
    assert.deepEqual(warnings, []);
    const { ids } = await allRecords(h, files, "Id");
    assert.ok(ids.length > 0);
    const guid = h.emulator.guidOf(TENANT);
    const manage = h.emulator.requests.filter((r) => r.api === "manage");
    assert.ok(manage.length > 0);
    for (const r of manage) {
      assert.ok(r.path.includes(`/${guid}/`), r.path);
      assert.equal(r.publisher, guid, r.url);
    }
    assert.ok(manage.every((r) => r.status === 200), "no AF20013");
  } finally {
    await h.close();
  }
});

Deno.test("without a tid claim in the token, a domain's GUID comes from its OpenID configuration", async () => {
  const h = await harness({ opaqueTokens: true });
  try {
    await h.writeDefinition("corp", baseStore());
    const { files, warnings } = await h.list("cloudapi://corp/productivity_suite/exchange/**", {
      from: FROM,
      to: TO,
    });
    assert.deepEqual(warnings, []);
    assert.ok((await allRecords(h, files, "Id")).ids.length > 0);
    assert.ok(h.emulator.requests.some((r) => r.path.endsWith("/openid-configuration")));
    const manage = h.emulator.requests.filter((r) => r.api === "manage");
    assert.ok(manage.every((r) => r.path.includes(`/${h.emulator.guidOf(TENANT)}/`)));
  } finally {
    await h.close();
  }
});

Deno.test("cloudapi.publisherIdentifier is sent as the PublisherIdentifier of every suite call", async () => {
  const publisher = "0b8e6f1c-2d3a-4b5c-8d7e-9f0a1b2c3d4e";
  const h = await harness({}, "enterprise", () => ({ publisherIdentifier: publisher }));
  try {
    await h.writeDefinition("corp", baseStore());
    const { warnings } = await h.list("cloudapi://corp/productivity_suite/exchange/**", {
      from: FROM,
      to: TO,
    });
    assert.deepEqual(warnings, []);
    const manage = h.emulator.requests.filter((r) => r.api === "manage");
    assert.ok(manage.length > 0 && manage.every((r) => r.publisher === publisher));
  } finally {
    await h.close();
  }
});

Deno.test("a suite subscription is started once and remembered, not on every fetch", async () => {
  const h = await harness();
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    for (let i = 0; i < 3; i++) {
      // Past the update frequency each time, so every query fetches again.
      h.clock.now = NOW + i * HOUR;
      const { warnings } = await h.list("cloudapi://corp/productivity_suite/exchange/**", {
        from: FROM,
        to: TO,
      });
      assert.deepEqual(warnings, [], `query ${i}`);
    }
    const starts = h.emulator.requests.filter((r) => r.path.endsWith("/subscriptions/start"));
    assert.equal(starts.length, 1);
    const lists = h.emulator.requests.filter((r) => r.path.endsWith("/subscriptions/list"));
    assert.equal(lists.length, 1, "the enabled subscription is remembered");
  } finally {
    await h.close();
  }
});

Deno.test("a subscription already enabled is listed, not started again", async () => {
  const h = await harness();
  try {
    await h.writeDefinition("corp", baseStore());
    await h.list("cloudapi://corp/productivity_suite/exchange/**", { from: FROM, to: TO });
    // Another process (a restart): it knows nothing, the tenant still has the subscription.
    await h.writeDefinition("corp2", baseStore());
    const before = h.emulator.requests.length;
    const { warnings } = await h.list("cloudapi://corp2/productivity_suite/exchange/**", {
      from: FROM,
      to: TO,
    });
    assert.deepEqual(warnings, []);
    const later = h.emulator.requests.slice(before);
    assert.ok(later.some((r) => r.path.endsWith("/subscriptions/list")));
    assert.ok(!later.some((r) => r.path.endsWith("/subscriptions/start")));
  } finally {
    await h.close();
  }
});

Deno.test("a start that failed is not sent again within 15 minutes; its reason is repeated", async () => {
  const h = await harness({ faults: [{ kind: "tenant-not-found", match: "subscriptions/start" }] });
  try {
    await h.writeDefinition("corp", baseStore({ fileNameIncludesHour: true }));
    const messages: string[] = [];
    for (let i = 0; i < 2; i++) {
      h.clock.now = NOW + i * HOUR;
      const { warnings } = await h.list("cloudapi://corp/productivity_suite/exchange/**", {
        from: FROM,
        to: TO,
      });
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      messages.push(warnings[0]!.message);
    }
    const starts = h.emulator.requests.filter((r) => r.path.endsWith("/subscriptions/start"));
    assert.equal(starts.length, 1, "one start request");
    for (const m of messages) assert.match(m, /unified audit logging turned off/);
  } finally {
    await h.close();
  }
});
