// deno-lint-ignore-file no-console
/**
 * The cloud connector against the emulator, with limits low enough to bind:
 *
 * 1. a day of each family alone, paced by the store's own limit: achieved rate against the
 *    configured limit (target >= 0.95), throttling answers (target 0);
 * 2. directory and activity logs of one tenant at once, which share the tenant's one Graph
 *    budget: busiest window within the limit, throttling answers (target 0);
 * 3. the same with the emulator's real Graph limit below the configured one (the adaptive
 *    rate must find it): requests, throttling answers, achieved share of the real limit once
 *    settled (target >= 0.9), hours lost (target 0) and the time to settle.
 *
 * `deno run -A bench/cloudapi_bench.ts [--limit 40] [--unit-ms 1000] [--real 10] [--adaptive-only]`
 */

import { baseStore, harness, HOUR, NOW, TENANT } from "../tests/cloudapi/harness.ts";
import { tenantKey } from "../actors/connector_pool.ts";
import type { RequestRecord } from "../tests/emulator/emulator.ts";

const arg = (name: string, fallback: number) => {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
};

/** Requests per second over the whole windows from `start`, and the busiest window. */
function rate(times: number[], unitMs: number, start = times[0]) {
  const from = times.filter((t) => t >= start!);
  const windows = Math.max(1, Math.floor((from[from.length - 1]! - start!) / unitMs));
  const inWindows = from.filter((t) => t < start! + windows * unitMs).length;
  let busiest = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= unitMs) j++;
    busiest = Math.max(busiest, i - j + 1);
  }
  return { perSecond: inWindows / (windows * unitMs / 1000), windows, busiest };
}

const sorted = (rs: RequestRecord[]) => rs.map((r) => r.at).sort((a, b) => a - b);

/** Each family alone, paced by the store's own limit. */
async function familiesAlone(limit: number, unitMs: number): Promise<void> {
  for (
    const [family, uri, api] of [
      ["directory", "directory_service/**", "graph"],
      ["activity", "cloud_activity/**", "graph"],
      ["suite", "productivity_suite/**", "manage"],
    ] as const
  ) {
    const h = await harness({
      seed: { from: NOW - 26 * HOUR, to: NOW, perHour: 20 },
      graphLimit: { limit, unitMs },
      manageLimit: { limit, unitMs },
    });
    try {
      await h.writeDefinition(
        "bench",
        baseStore({
          [`${family}RateLimit`]: limit,
          [`${family}RateTimeunit`]: `${unitMs} ms`,
          suiteLogs: "exchange:Audit.Mail|2 h|15 min, general:Audit.General|2 h|15 min",
        }),
      );
      const started = performance.now();
      await h.list(`cloudapi://bench/${uri}`, { from: NOW - 24 * HOUR, to: NOW });
      const seconds = (performance.now() - started) / 1000;
      const times = sorted(h.emulator.requests.filter((r) => r.api === api));
      const configured = limit / (unitMs / 1000);
      // count/elapsed overstates a pacer that sends whole bursts: the achieved rate counts the
      // requests of the whole windows from the first request.
      const r = rate(times, unitMs);
      console.log(
        `${family.padEnd(9)} ${times.length} requests, the day in ${seconds.toFixed(2)} s; ` +
          `achieved ${r.perSecond.toFixed(1)}/s of ${configured}/s = ${
            (r.perSecond / configured).toFixed(3)
          } over ${r.windows} whole windows; busiest ${unitMs} ms window ${r.busiest} of ${limit}; ` +
          `throttled ${h.emulator.throttledCount()}`,
      );
    } finally {
      await h.close();
    }
  }
}

/**
 * Directory and activity logs of one tenant at once against a real Graph limit of `real` per
 * unit, with `configured` in the settings.
 */
async function sharedGraph(configured: number, real: number, unitMs: number): Promise<void> {
  const h = await harness(
    { seed: { from: NOW - 26 * HOUR, to: NOW, perHour: 20 }, graphLimit: { limit: real, unitMs } },
    "enterprise",
    () => ({ graphRateLimit: configured, graphRateTimeunit: `${unitMs} ms` }),
  );
  try {
    await h.writeDefinition(
      "bench",
      baseStore({ activityLogs: "ni:ni-signins|2 h|15 min, sp:sp-signins|2 h|15 min" }),
    );
    const started = performance.now();
    const samples: number[] = [];
    const sampler = setInterval(
      () => samples.push(h.pool.limitOf(tenantKey(h.emulator.guidOf(TENANT), "graph"))?.limit ?? 0),
      unitMs,
    );
    const runs = await Promise.all(
      ["directory_service/**", "cloud_activity/**"].map((uri) =>
        h.list(`cloudapi://bench/${uri}`, { from: NOW - 24 * HOUR, to: NOW })
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    if (Deno.args.includes("--trace")) console.log(`rate per unit: ${samples.join(" ")}`);
    const graph = h.emulator.requests.filter((r) => r.api === "graph");
    const times = sorted(graph);
    const throttles = sorted(graph.filter((r) => r.status === 429));
    // Settled: after the last window holding two or more throttling answers, they come singly
    // (the adaptive rate's occasional probe above the limit).
    let settledAt = times[0]!;
    for (let i = 1; i < throttles.length; i++) {
      if (throttles[i]! - throttles[i - 1]! < unitMs) settledAt = throttles[i]!;
    }
    const admitted = sorted(graph.filter((r) => r.status === 200));
    const whole = rate(admitted, unitMs);
    const settled = rate(admitted, unitMs, settledAt);
    const warnings = runs.flatMap((r) => r.warnings);
    const perSecond = real / (unitMs / 1000);
    console.log(
      `graph, directory + activity at once, configured ${configured} and real limit ${real} per ${unitMs} ms: ` +
        `${graph.length} requests (v1.0 ${
          graph.filter((r) => r.path.startsWith("/v1.0/")).length
        }, beta ${graph.filter((r) => r.path.startsWith("/beta/")).length}) in ${
          seconds.toFixed(2)
        } s; throttled ${throttles.length} (${
          throttles.filter((t) => t > settledAt).length
        } after settling); settled after ${((settledAt - times[0]!) / 1000).toFixed(1)} s; ` +
        `achieved ${whole.perSecond.toFixed(2)}/s = ${
          (whole.perSecond / perSecond).toFixed(3)
        } of the real limit over the run, ${settled.perSecond.toFixed(2)}/s = ${
          (settled.perSecond / perSecond).toFixed(3)
        } once settled; busiest window ${whole.busiest} answered of ${real}; ` +
        `hours lost ${h.stats.lostHours ?? 0}, warnings ${warnings.length}`,
    );
  } finally {
    await h.close();
  }
}

if (import.meta.main) {
  const limit = arg("limit", 40);
  const unitMs = arg("unit-ms", 1_000);
  const real = arg("real", 10);
  const only = Deno.args.includes("--adaptive-only");
  if (!only) {
    await familiesAlone(limit, unitMs);
    await sharedGraph(limit, limit, unitMs);
  }
  await sharedGraph(limit, real, unitMs);
}
