/**
 * Fetches a day of each family from the emulator with limits low enough to bind, and prints
 * the achieved request rate against the configured limit (target >= 0.95), the throttling
 * answers (target 0) and the time the day took.
 * `deno run -A bench/cloudapi_bench.ts [--limit 40] [--unit-ms 1000]`
 */

import { baseStore, harness, HOUR, NOW } from "../tests/cloudapi/harness.ts";

const arg = (name: string, fallback: number) => {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
};

if (import.meta.main) {
  const limit = arg("limit", 40);
  const unitMs = arg("unit-ms", 1_000);
  const unit = `${unitMs} ms`;
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
          [`${family}RateTimeunit`]: unit,
          suiteLogs: "exchange:Audit.Mail|2 h|15 min, general:Audit.General|2 h|15 min",
        }),
      );
      const started = performance.now();
      await h.list(`cloudapi://bench/${uri}`, { from: NOW - 24 * HOUR, to: NOW });
      const seconds = (performance.now() - started) / 1000;
      const times = h.emulator.requests.filter((r) => r.api === api).map((r) => r.at)
        .sort((a, b) => a - b);
      const reqs = times.length;
      const configured = limit / (unitMs / 1000);
      // count/elapsed overstates a pacer that sends whole bursts: a run of 8.2 s touches nine
      // windows of 1 s. The achieved rate counts the requests of the whole windows from the
      // first request, and the busiest sliding window shows the limit was never passed.
      const windows = Math.max(1, Math.floor((times[times.length - 1] - times[0]) / unitMs));
      const inWindows = times.filter((t) => t < times[0] + windows * unitMs).length;
      const achieved = inWindows / (windows * unitMs / 1000);
      let busiest = 0;
      for (let i = 0, j = 0; i < times.length; i++) {
        while (times[i] - times[j] >= unitMs) j++;
        busiest = Math.max(busiest, i - j + 1);
      }
      console.log(
        `${family.padEnd(9)} ${reqs} requests, the day in ${seconds.toFixed(2)} s; ` +
          `achieved ${achieved.toFixed(1)}/s of ${configured}/s = ${
            (achieved / configured).toFixed(3)
          } over ${windows} whole windows; busiest ${unitMs} ms window ${busiest} of ${limit}; ` +
          `throttled ${h.emulator.throttledCount()}`,
      );
    } finally {
      await h.close();
    }
  }
}
