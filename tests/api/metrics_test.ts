/**
 * `GET /metrics`: the Prometheus text format, an admin's token unless `metrics.public = true`,
 * and counters that move with what the server does.
 */

import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "./server.ts";
import { expectError, finished, startQuery } from "./client.ts";
import type { Lifetimes } from "../../main.ts";

/** The samples of an exposition, `name{labels}` → value; asserts every line is well formed. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const typed = new Set<string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const type = /^# TYPE ([a-z_:][a-z0-9_:]*) (counter|gauge|histogram)$/.exec(line);
    if (type) {
      typed.add(type[1]!);
      continue;
    }
    if (/^# HELP [a-z_:][a-z0-9_:]* .+$/.test(line)) continue;
    const m = /^([a-z_:][a-z0-9_:]*)(\{[a-z_]+="[^"]*"(?:,[a-z_]+="[^"]*")*\})? (\S+)$/.exec(line);
    assert.ok(m, `malformed line: ${line}`);
    const base = m[1]!.replace(/_(bucket|sum|count)$/, "");
    assert.ok(typed.has(m[1]!) || typed.has(base), `no # TYPE before ${m[1]}`);
    assert.ok(!Number.isNaN(Number(m[3])), line);
    out.set(m[1] + (m[2] ?? ""), Number(m[3]));
  }
  return out;
}

async function scrape(s: TestServer, user = "root"): Promise<Map<string, number>> {
  const res = await s.fetch(user, "/metrics");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  return samples(await res.text());
}

Deno.test("/metrics needs an admin's token and counts queries, reads and durations", async () => {
  await using s = await startTestServer();
  const rootToken = await s.deps.users.add("root", { admin: true });
  (s.tokens as Record<string, string>).root = rootToken;
  await expectError(await fetch(`${s.url}/metrics`), 401, "UNAUTHENTICATED");
  await expectError(await s.fetch("alice", "/metrics"), 403, "FORBIDDEN");

  const before = await scrape(s);
  assert.equal(before.get('trawl_queries{state="SUCCEEDED"}'), 0);
  assert.equal(before.get("trawl_query_duration_seconds_count"), 0);

  const log = "1 a\n2 b\nx c\n";
  await s.write("/shared/m.log", log);
  const id = await startQuery(s, "PARSE(pattern: '''INT:n LD:x EOL''', src: '/shared/m.log')");
  await finished(s, id);
  const after = await scrape(s);
  assert.equal(after.get('trawl_queries{state="SUCCEEDED"}'), 1);
  assert.equal(after.get('trawl_queries_finished_total{state="SUCCEEDED"}'), 1);
  assert.equal(after.get("trawl_retained_queries"), 1);
  assert.ok(after.get("trawl_retained_result_bytes")! > 0);
  assert.equal(after.get("trawl_read_bytes_total"), log.length);
  assert.equal(after.get("trawl_read_records_total"), 3);
  assert.equal(after.get("trawl_results_spilled_total"), 0);
  assert.equal(after.get("trawl_query_duration_seconds_count"), 1);
  assert.equal(after.get('trawl_query_duration_seconds_bucket{le="+Inf"}'), 1);

  // Cloud requests are counted by family as the connector pool paces them.
  const { pacer } = (s.deps as typeof s.deps & { lifetimes: Lifetimes }).lifetimes;
  // A bucket of one token per 300 ms: the second request waits for it.
  const keys = {
    tenant: "t1",
    family: "suite" as const,
    providerLimit: { limit: 1, unitMs: 300 },
    store: "corp",
  };
  (await pacer.acquire(keys, AbortSignal.timeout(5000)))();
  (await pacer.acquire(keys, AbortSignal.timeout(5000)))();
  pacer.throttled("t1", "suite", 1);
  const cloud = await scrape(s);
  assert.equal(cloud.get('trawl_cloud_requests_total{family="suite"}'), 2);
  assert.equal(cloud.get('trawl_cloud_throttled_total{family="suite"}'), 1);
  assert.ok(cloud.get('trawl_token_bucket_waits_total{family="suite"}')! >= 1);
  assert.ok(cloud.get('trawl_token_bucket_wait_seconds_total{family="suite"}')! >= 0.2);
});

Deno.test("/metrics answers without a token when metrics.public is true", async () => {
  await using s = await startTestServer({ "metrics.public": "true" });
  const res = await fetch(`${s.url}/metrics`);
  assert.equal(res.status, 200);
  assert.ok(samples(await res.text()).has("trawl_retained_queries"));
});
