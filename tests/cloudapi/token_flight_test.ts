/**
 * The token provider's single flight (connectors/cloudapi/token_provider.ts), against the cloud
 * emulator with the real msal-node: concurrent requests share one, a settled one is forgotten
 * (the next request asks again: a failure is not kept, a fresh token is a new one), and a
 * request for a fresh token never joins one for the cached token.
 */

import assert from "node:assert/strict";
import { CloudEmulator } from "../emulator/emulator.ts";
import {
  TokenError,
  TokenProvider,
  type TokenRequest,
} from "../../connectors/cloudapi/token_provider.ts";

const TENANT = "contoso.onmicrosoft.com";
const HOUR = 3_600_000;

async function withEmulator(fn: (emulator: CloudEmulator, req: TokenRequest) => Promise<void>) {
  const now = Date.now();
  const emulator = new CloudEmulator({
    tenants: [{ tenantId: TENANT, clientId: "client-1", secret: "s3cr3t-value" }],
    seed: { from: now - HOUR, to: now, perHour: 1 },
  });
  await emulator.start();
  try {
    const url = emulator.url;
    await fn(emulator, {
      store: "corp",
      tenantId: TENANT,
      clientId: "client-1",
      secret: "s3cr3t-value",
      hosts: { login: url, graph: url, manage: url.replace("127.0.0.1", "localhost") },
      maxErrorRetries: 0,
      backoffMs: 1,
    });
  } finally {
    await emulator.stop();
  }
}

const tokenRequests = (emulator: CloudEmulator) =>
  emulator.requests.filter((r) => r.api === "token").length;

Deno.test("concurrent token requests share one; a settled one is forgotten: the next asks again", async () => {
  await withEmulator(async (emulator, req) => {
    const tokens = new TokenProvider();
    const cold = await Promise.all([1, 2, 3].map(() => tokens.token(req, "graph")));
    assert.equal(new Set(cold).size, 1);
    assert.equal(tokenRequests(emulator), 1);
    // Fresh tokens, one after the other: each a new one from the endpoint.
    const a = await tokens.token(req, "graph", true);
    const b = await tokens.token(req, "graph", true);
    assert.notEqual(a, cold[0]);
    assert.notEqual(b, a);
    assert.equal(tokenRequests(emulator), 3);
    // The cached token is msal's newest.
    assert.equal(await tokens.token(req, "graph"), b);
  });
});

Deno.test("a failed token request is not kept: once the endpoint is back, the next one succeeds", async () => {
  await withEmulator(async (emulator, req) => {
    const tokens = new TokenProvider();
    emulator.inject({ kind: "token-unavailable", times: 1 });
    await assert.rejects(tokens.token(req, "manage"), (e: Error) => {
      assert.ok(e instanceof TokenError);
      assert.match(e.message, /datastore 'corp': could not get a token/);
      assert.ok(!e.message.includes("s3cr3t-value"));
      return true;
    });
    const token = await tokens.token(req, "manage");
    assert.equal(typeof token, "string");
    assert.ok(token.length > 0);
  });
});

Deno.test("a request for a fresh token does not join a request for the cached one under way", async () => {
  await withEmulator(async (emulator, req) => {
    const tokens = new TokenProvider();
    const cached = await tokens.token(req, "graph");
    // The API said the cached token expired: the fresh request must not get it back, even
    // while a request for the cached token is under way.
    const [again, fresh] = await Promise.all([
      tokens.token(req, "graph"),
      tokens.token(req, "graph", true),
    ]);
    assert.equal(again, cached);
    assert.notEqual(fresh, cached);
    assert.equal(tokenRequests(emulator), 2);
  });
});
