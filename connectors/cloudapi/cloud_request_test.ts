import assert from "node:assert/strict";
import {
  cloudRequest,
  CloudRequestError,
  errorText,
  proxyFor,
  redactUrl,
  type RequestContext,
  type RequestStats,
  timeoutPlan,
} from "./cloud_request.ts";

/** A local server answering every request with `status`, counting the requests. */
function failingServer(status: number) {
  let requests = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => {
      requests++;
      return new Response(JSON.stringify({ error: { code: "Boom" } }), { status });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1.0/auditLogs/directoryAudits`,
    get requests() {
      return requests;
    },
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

function context(maxErrorRetries: number, stats: RequestStats): RequestContext {
  return {
    store: "corp",
    signal: AbortSignal.timeout(10_000),
    connectTimeoutMs: 1000,
    readTimeoutMs: 1000,
    maxErrorRetries,
    userAgent: "trawl-test",
    acquire: () => Promise.resolve(() => {}),
    throttled: () => {},
    onWarning: () => {},
    now: () => Date.now(),
    backoffMs: 1,
    stats,
  };
}

Deno.test("redactUrl() hides skip tokens and next-page addresses in messages", () => {
  assert.equal(
    redactUrl("https://g/v1.0/auditLogs/signIns?$top=1000&$skiptoken=abc123&x=1"),
    "https://g/v1.0/auditLogs/signIns?$top=1000&$skiptoken=…&x=1",
  );
  assert.equal(redactUrl("https://m/x?nextpage=zz"), "https://m/x?nextpage=…");
});

Deno.test("errorText() redacts the URLs that network errors quote", () => {
  const e = new TypeError(
    "error sending request for url (https://graph/v1.0/auditLogs/directoryAudits?$skiptoken=SECRETISH): connection refused",
  );
  const text = errorText(e);
  assert.ok(!text.includes("SECRETISH"), text);
  assert.match(text, /connection refused/);
  assert.match(text, /directoryAudits\?\$skiptoken=…\)/);
});

Deno.test("timeoutPlan() gives the headers both budgets when both timeouts are set", () => {
  const plan = timeoutPlan(1_000, 2_000);
  assert.equal(plan.probe, false);
  assert.equal(plan.headersBudget(0), 3_000);
  assert.equal(plan.bodyBudgetMs, 2_000);
});

Deno.test("timeoutPlan() keeps the connect timeout when the read timeout is 0", () => {
  const plan = timeoutPlan(1_000, 0);
  assert.equal(plan.probe, true);
  assert.equal(plan.probeLimitMs, 1_000);
  assert.equal(plan.headersBudget(5), 0);
  assert.equal(plan.bodyBudgetMs, 0);
});

Deno.test("timeoutPlan() keeps the read timeout when the connect timeout is 0", () => {
  const plan = timeoutPlan(0, 1_000);
  assert.equal(plan.probe, true);
  assert.equal(plan.probeLimitMs, 0);
  // The connect time the probe measured is not counted against the read timeout.
  assert.ok(plan.headersBudget(10) >= 1_010 && plan.headersBudget(10) < 1_500);
  assert.equal(plan.bodyBudgetMs, 1_000);
});

Deno.test("timeoutPlan() waits forever when both timeouts are 0", () => {
  const plan = timeoutPlan(0, 0);
  assert.equal(plan.probe, false);
  assert.equal(plan.headersBudget(0), 0);
  assert.equal(plan.bodyBudgetMs, 0);
});

Deno.test("proxyFor() names the proxy fetch would use, so the connect probe times that", () => {
  const saved = ["HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"].map((k) =>
    [k, Deno.env.get(k)] as const
  );
  try {
    for (const [k] of saved) Deno.env.delete(k);
    assert.equal(proxyFor(new URL("https://graph.microsoft.com/v1.0")), undefined);
    Deno.env.set("HTTPS_PROXY", "proxy.corp:3128");
    assert.equal(proxyFor(new URL("https://graph.microsoft.com/v1.0"))?.host, "proxy.corp:3128");
    Deno.env.set("NO_PROXY", "localhost,.microsoft.com");
    assert.equal(proxyFor(new URL("https://graph.microsoft.com/v1.0")), undefined);
    assert.equal(proxyFor(new URL("https://manage.office.com/api"))?.host, "proxy.corp:3128");
  } finally {
    for (const [k, v] of saved) v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
  }
});

for (const retries of [0, 1, 3]) {
  Deno.test(`cloudRequest() with maxErrorRetries ${retries} gives up after ${retries + 1} attempts and says ${retries} retries`, async () => {
    await using server = failingServer(503);
    const stats: RequestStats = { requests: 0, throttled: 0, retries: 0 };
    const error = await cloudRequest(context(retries, stats), { method: "GET", url: server.url })
      .then(() => undefined, (e) => e);
    assert.ok(error instanceof CloudRequestError, String(error));
    assert.equal(server.requests, retries + 1);
    assert.deepEqual(stats, { requests: retries + 1, throttled: 0, retries });
    assert.match(
      error.message,
      new RegExp(`given up after ${retries} retries; last: the server answered 503`),
    );
  });
}
