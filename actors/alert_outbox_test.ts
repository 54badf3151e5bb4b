import assert from "node:assert/strict";
import {
  type Alert,
  alertKey,
  AlertOutbox,
  encodeAlert,
  retryAfterMs,
  signature,
} from "./alert_outbox.ts";
import { memoryStorage } from "./test_support.ts";
import type { Storage } from "../engine/mod.ts";
import { parseAllowList } from "../home/private_targets.ts";

/** The receivers of these tests are on loopback: allowed as an admin would allow them. */
const LOOPBACK = allowList("127.0.0.0/8");

function allowList(text: string) {
  const l = parseAllowList(text);
  if (typeof l === "string") throw new Error(l);
  return l;
}

const SECRET = "whsec-0123456789abcdef-never-shown";

interface Received {
  readonly body: string;
  readonly key: string | null;
  readonly signature: string | null;
}

/** A real webhook on loopback answering, in turn, each of `answers` (then 200). */
function webhook(answers: ("500" | "503-retry" | "hang" | "200")[]) {
  const received: Received[] = [];
  const hung: (() => void)[] = [];
  let n = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.text();
    received.push({
      body,
      key: req.headers.get("Idempotency-Key"),
      signature: req.headers.get("Trawl-Signature"),
    });
    const answer = answers[n++] ?? "200";
    if (answer === "hang") {
      await new Promise<void>((resolve) => hung.push(resolve));
      return new Response("late", { status: 200 });
    }
    if (answer === "503-retry") {
      return new Response("busy", { status: 503, headers: { "Retry-After": "600" } });
    }
    return new Response(answer === "200" ? "ok" : "error", { status: Number(answer) });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    received,
    async [Symbol.asyncDispose]() {
      for (const r of hung) r();
      await server.shutdown();
    },
  };
}

function pending(id: string, now: number): Alert {
  return {
    id,
    key: `sched-1|rule-1|record-${id}`,
    schedule: "sched-1",
    rule: "rule-1",
    created: now,
    payload: { schedule: "sched-1", rule: "rule-1", record: { id }, matched: ["status.errorCode"] },
    state: "pending",
    attempts: 0,
    nextAt: now,
  };
}

Deno.test("a webhook answering 500, 503 with Retry-After, no answer, then 200 gets the alert once delivered", async () => {
  await using storage = await memoryStorage();
  await using hook = webhook(["500", "503-retry", "hang", "200"]);
  let now = 1_000_000;
  const outbox = new AlertOutbox({
    allowPrivateTargets: LOOPBACK,
    storage,
    clock: () => now,
    webhookOf: (s) =>
      Promise.resolve(s === "sched-1" ? { url: hook.url, secret: SECRET } : undefined),
    baseDelayMs: 1000,
    timeoutMs: 300,
    maxAttempts: 5,
  });
  await storage.put(alertKey("a1"), encodeAlert(pending("a1", now)));

  assert.equal(await outbox.deliverDue(), 1); // 500
  let a = (await outbox.get("a1"))!;
  assert.equal(a.state, "pending");
  assert.equal(a.attempts, 1);
  assert.equal(a.nextAt, now + 1000);
  assert.equal(a.lastError, "the webhook answered 500");
  assert.equal(await outbox.deliverDue(), 0, "not due before its backoff");

  now += 1000;
  assert.equal(await outbox.deliverDue(), 1); // 503, Retry-After 600 s beats the 2 s backoff
  a = (await outbox.get("a1"))!;
  assert.equal(a.nextAt, now + 600_000);

  now += 600_000;
  assert.equal(await outbox.deliverDue(), 1); // no answer within the timeout
  a = (await outbox.get("a1"))!;
  assert.equal(a.state, "pending");
  assert.match(a.lastError!, /did not answer within 300 ms/);
  assert.equal(a.nextAt, now + 4000);

  now += 4000;
  assert.equal(await outbox.deliverDue(), 1); // 200
  a = (await outbox.get("a1"))!;
  assert.equal(a.state, "delivered");
  assert.equal(a.attempts, 4);
  assert.equal(a.lastError, undefined);
  assert.equal(await outbox.deliverDue(), 0, "a delivered alert is not sent again");

  assert.equal(hook.received.length, 4);
  for (const r of hook.received) {
    assert.equal(r.key, "sched-1|rule-1|record-a1");
    assert.equal(r.signature, `sha256=${await signature(SECRET, r.body)}`);
    assert.deepEqual(JSON.parse(r.body).record, { id: "a1" });
    assert.ok(!r.body.includes(SECRET));
  }
  // The secret is in no stored alert.
  const stored = new TextDecoder().decode((await storage.get(alertKey("a1")))!.value);
  assert.ok(!stored.includes(SECRET));
});

Deno.test("after maxAttempts an alert is dead, listed, and delivered again on redeliver", async () => {
  await using storage = await memoryStorage();
  await using hook = webhook(["500", "500", "200"]);
  let now = 5_000;
  const outbox = new AlertOutbox({
    allowPrivateTargets: LOOPBACK,
    storage,
    clock: () => now,
    webhookOf: () => Promise.resolve({ url: hook.url, secret: SECRET }),
    baseDelayMs: 10,
    maxAttempts: 2,
  });
  await storage.put(alertKey("b1"), encodeAlert(pending("b1", now)));
  await outbox.deliverDue();
  now += 10;
  await outbox.deliverDue();
  const dead = (await outbox.get("b1"))!;
  assert.equal(dead.state, "dead");
  assert.equal(dead.attempts, 2);
  assert.deepEqual((await outbox.list({ state: "dead" })).map((x) => x.id), ["b1"]);
  now += 1_000_000;
  assert.equal(await outbox.deliverDue(), 0, "a dead alert is not retried by itself");
  assert.equal(await outbox.redeliver("b1"), true);
  assert.equal(await outbox.redeliver("nope"), false);
  assert.equal(await outbox.deliverDue(), 1);
  assert.equal((await outbox.get("b1"))!.state, "delivered");
  assert.equal(hook.received.length, 3);
});

Deno.test("an unreachable webhook is retried, and the message names no URL", async () => {
  await using storage = await memoryStorage();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close(); // nothing listens there now
  const outbox = new AlertOutbox({
    allowPrivateTargets: LOOPBACK,
    storage,
    clock: () => 0,
    webhookOf: () =>
      Promise.resolve({ url: `http://127.0.0.1:${port}/x?token=abc`, secret: SECRET }),
  });
  await storage.put(alertKey("c1"), encodeAlert(pending("c1", 0)));
  await outbox.deliverDue();
  const a = (await outbox.get("c1"))!;
  assert.equal(a.state, "pending");
  assert.match(a.lastError!, /could not be reached/);
  assert.ok(!a.lastError!.includes("token"));
});

Deno.test("Retry-After: seconds or an HTTP date", () => {
  assert.equal(retryAfterMs("120", 0), 120_000);
  assert.equal(retryAfterMs("Thu, 01 Jan 1970 00:01:00 GMT", 30_000), 30_000);
  assert.equal(retryAfterMs("soon", 0), undefined);
  assert.equal(retryAfterMs(null, 0), undefined);
});

Deno.test("a webhook of the server's own network is refused at delivery; a redirect is not followed", async () => {
  await using storage = await memoryStorage();
  const reached: string[] = [];
  const inner = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    reached.push(req.url);
    return new Response("ok");
  });
  const outer = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.body?.cancel();
    return new Response(null, {
      status: 307,
      headers: { Location: `http://127.0.0.1:${inner.addr.port}/stolen` },
    });
  });
  try {
    let url = `http://127.0.0.1:${outer.addr.port}/hook`;
    const options = {
      storage,
      clock: () => 0,
      webhookOf: () => Promise.resolve({ url, secret: SECRET }),
    };
    // Not allowed: no request leaves.
    await storage.put(alertKey("d1"), encodeAlert(pending("d1", 0)));
    await new AlertOutbox(options).deliverDue();
    const refused = (await outboxGet(storage, "d1"))!;
    assert.equal(refused.state, "pending");
    assert.match(refused.lastError!, /refused: .*127\.0\.0\.1 is a loopback address/);
    // Allowed (only the outer receiver's port): it answers a redirect to the inner one.
    const allowed = parseAllowList(`127.0.0.1:${outer.addr.port}`);
    assert.ok(typeof allowed !== "string");
    const outbox = new AlertOutbox({ ...options, allowPrivateTargets: allowed });
    await storage.put(alertKey("d2"), encodeAlert(pending("d2", 0)));
    await outbox.deliverDue();
    const redirected = (await outbox.get("d2"))!;
    assert.equal(redirected.state, "pending");
    assert.match(redirected.lastError!, /307 \(a redirect, not followed\)/);
    assert.deepEqual(reached, [], "the redirect's target got no request");
    // The metadata address is refused even when loopback is allowed.
    url = "http://169.254.169.254/latest/meta-data/";
    await storage.put(alertKey("d3"), encodeAlert(pending("d3", 0)));
    await outbox.deliverDue();
    assert.match((await outbox.get("d3"))!.lastError!, /the cloud metadata address/);
  } finally {
    await inner.shutdown();
    await outer.shutdown();
  }
});

async function outboxGet(storage: Storage, id: string): Promise<Alert | null> {
  return await new AlertOutbox({
    storage,
    clock: () => 0,
    webhookOf: () => Promise.resolve(undefined),
  }).get(id);
}
