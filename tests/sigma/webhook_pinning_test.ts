/**
 * A webhook's host name is resolved once per delivery; the address checked is the one connected
 * to (actors/alert_outbox.ts `postPinned`), with the URL's host in `Host` and, for https, as the
 * TLS server name the certificate is checked against. The resolvers here are the tests' own, so
 * their names exist for no one else: a request that arrives was sent to the address they gave.
 *
 * `webhook_tls/`: a test CA and a certificate for `hooks.example` it signed (2020–2120).
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { alertKey, AlertOutbox, encodeAlert } from "../../actors/alert_outbox.ts";
import type { Alert } from "../../actors/alert_outbox.ts";
import { memoryStorage } from "../../actors/test_support.ts";
import { parseAllowList, type Resolver } from "../../home/private_targets.ts";

const tls = (name: string) =>
  Deno.readTextFileSync(fileURLToPath(new URL(`webhook_tls/${name}`, import.meta.url)));
const SECRET = "whsec-0123456789abcdef-pinning";

function pending(id: string): Alert {
  return {
    id,
    key: `s1|rule|${id}`,
    schedule: "s1",
    rule: "rule",
    created: 0,
    payload: { key: `s1|rule|${id}`, record: { id } },
    state: "pending",
    attempts: 0,
    nextAt: 0,
  };
}

/** A receiver on loopback (https with the test certificate when `secure`). */
function receiver(secure = false) {
  const received: { host: string | null; key: string | null }[] = [];
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen() {},
    ...(secure ? { cert: tls("hooks.pem"), key: tls("hooks.key") } : {}),
  }, async (req) => {
    await req.body?.cancel();
    received.push({ host: req.headers.get("Host"), key: req.headers.get("Idempotency-Key") });
    return new Response("ok");
  });
  return { port: server.addr.port, received, [Symbol.asyncDispose]: () => server.shutdown() };
}

/** Answers `first` at the first lookup, `then` at every later one; counts the lookups. */
function resolver(first: string[], then: string[]) {
  const lookups: string[] = [];
  const resolve: Resolver = (host) => {
    lookups.push(host);
    return Promise.resolve(lookups.length === 1 ? first : then);
  };
  return { resolve, lookups };
}

async function deliver(
  url: string,
  resolve: Resolver,
  options: { allow?: string; caCerts?: string[]; timeoutMs?: number } = {},
): Promise<Alert> {
  await using storage = await memoryStorage();
  const allow = options.allow === undefined ? [] : parseAllowList(options.allow);
  assert.ok(typeof allow !== "string");
  const outbox = new AlertOutbox({
    storage,
    clock: () => 0,
    webhookOf: () => Promise.resolve({ url, secret: SECRET }),
    allowPrivateTargets: allow,
    resolve,
    timeoutMs: options.timeoutMs ?? 10_000,
    ...(options.caCerts ? { caCerts: options.caCerts } : {}),
  });
  await storage.put(alertKey("a1"), encodeAlert(pending("a1")));
  assert.equal(await outbox.deliverDue(), 1);
  return (await outbox.get("a1"))!;
}

Deno.test("DNS rebinding: a name public at the check and 127.0.0.1 after is never connected to on loopback", async () => {
  await using hook = receiver();
  // 192.0.2.10 (TEST-NET-1) is public and answers nothing here: the attempt times out.
  const dns = resolver(["192.0.2.10"], ["127.0.0.1"]);
  const alert = await deliver(`http://rebind.example:${hook.port}/hook`, dns.resolve, {
    timeoutMs: 300,
  });
  assert.deepEqual(hook.received, [], "the loopback receiver got no request");
  assert.deepEqual(dns.lookups, ["rebind.example"], "resolved once, for the check");
  assert.equal(alert.state, "pending");
  assert.match(alert.lastError!, /did not answer|could not be reached/);
  // The next attempt's lookup answers 127.0.0.1: refused before any connection.
  const again = resolver(["127.0.0.1"], ["127.0.0.1"]);
  const refused = await deliver(`http://rebind.example:${hook.port}/hook`, again.resolve);
  assert.match(refused.lastError!, /resolves to 127\.0\.0\.1, a loopback address/);
  assert.deepEqual(hook.received, []);
});

Deno.test("the connection goes to the address checked, with the URL's host in Host", async () => {
  await using hook = receiver();
  // hooks.example exists only for this resolver: the request arrives because the connection
  // went to the address it gave (allowed by address, not by name).
  const dns = resolver(["127.0.0.1"], ["192.0.2.10"]);
  const alert = await deliver(`http://hooks.example:${hook.port}/hook?x=1`, dns.resolve, {
    allow: "127.0.0.0/8",
  });
  assert.equal(alert.state, "delivered", alert.lastError);
  assert.deepEqual(hook.received, [{ host: `hooks.example:${hook.port}`, key: "s1|rule|a1" }]);
  assert.deepEqual(dns.lookups, ["hooks.example"]);
});

Deno.test("https to the address checked: the server name and the certificate are the URL's host", async () => {
  await using hook = receiver(true);
  const caCerts = [tls("ca.pem")];
  const dns = () => resolver(["127.0.0.1"], ["127.0.0.1"]).resolve;
  const ok = await deliver(`https://hooks.example:${hook.port}/hook`, dns(), {
    allow: "127.0.0.0/8",
    caCerts,
  });
  assert.equal(ok.state, "delivered", ok.lastError);
  assert.deepEqual(hook.received, [{ host: `hooks.example:${hook.port}`, key: "s1|rule|a1" }]);
  // Another name at the same address: its certificate does not name it, nothing is sent.
  const wrong = await deliver(`https://other.example:${hook.port}/hook`, dns(), {
    allow: "127.0.0.0/8",
    caCerts,
  });
  assert.equal(wrong.state, "pending");
  assert.match(wrong.lastError!, /could not be reached/);
  // Nor without the test CA: the system's roots do not trust it.
  const untrusted = await deliver(`https://hooks.example:${hook.port}/hook`, dns(), {
    allow: "127.0.0.0/8",
  });
  assert.equal(untrusted.state, "pending");
  assert.equal(hook.received.length, 1);
});
