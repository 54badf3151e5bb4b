/**
 * `GET /metrics` (outside /API/v1.0): the Prometheus text format (version 0.0.4), written by
 * hand. An admin's token is needed unless `metrics.public = true`.
 *
 * Why not prom-client: its counters are objects with label maps looked up on every `inc`, and
 * the engine's hot path (per chunk, per record) would pay for them. Here nothing is counted on
 * the hot path for /metrics: queries add their totals once when they finish (actors/
 * query_metrics.ts), the connector pool counts per request (actors/connector_pool.ts), and the
 * gauges are read from the supervisor when scraped. The format is a few lines of text.
 */

import { Hono } from "hono";
import type { FamilyCounters } from "../actors/connector_pool.ts";
import type { QueryMetrics } from "../actors/query_metrics.ts";
import { heldQueries } from "../actors/supervisor_numbers.ts";
import type { SupervisorRef } from "../actors/supervisor.ts";
import type { QueryState } from "../actors/query_machine.ts";
import type { UserStore } from "../home/user_store.ts";
import type { AppEnv } from "./env.ts";
import { requireUser } from "./auth.ts";
import { forbidden } from "./errors.ts";

export interface MetricsDeps {
  readonly users: UserStore;
  /** `metrics.public`: no token needed. */
  readonly public: boolean;
  readonly supervisor?: SupervisorRef | undefined;
  readonly queries?: QueryMetrics | undefined;
  /** Per family counters of cloud requests (the connector pool's). */
  readonly cloud?: ReadonlyMap<string, FamilyCounters> | undefined;
}

const STATES: readonly QueryState[] = [
  "QUEUED",
  "SCHEDULED",
  "RUNNING",
  "SUCCEEDED",
  "FAILED",
  "CANCELLED",
];

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export function metricsRoutes(deps: MetricsDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  if (!deps.public) {
    app.use("/metrics", requireUser(deps.users), async (c, next) => {
      if (!c.get("user").admin) throw forbidden("/metrics needs an admin's token");
      await next();
    });
  }
  app.get(
    "/metrics",
    (c) => c.body(metricsText(deps), 200, { "Content-Type": METRICS_CONTENT_TYPE }),
  );
  return app;
}

/** The exposition text of everything counted. */
export function metricsText(deps: MetricsDeps): string {
  const out: string[] = [];
  const metric = (name: string, type: string, help: string) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  };
  if (deps.supervisor) {
    const held = heldQueries(deps.supervisor);
    const bytes = held.resultBytes;
    metric("trawl_queries", "gauge", "Queries held by the server, by state.");
    for (const state of STATES) {
      out.push(`trawl_queries{state="${state}"} ${held.byState.get(state) ?? 0}`);
    }
    metric("trawl_retained_queries", "gauge", "Queries held (running or keeping a result).");
    out.push(`trawl_retained_queries ${held.held}`);
    metric(
      "trawl_retained_result_bytes",
      "gauge",
      "Bytes the held results take (memory and disk).",
    );
    out.push(`trawl_retained_result_bytes ${bytes}`);
  }
  if (deps.queries) {
    const m = deps.queries.snapshot();
    metric("trawl_queries_finished_total", "counter", "Queries finished, by final state.");
    for (const [state, n] of Object.entries(m.finished)) {
      out.push(`trawl_queries_finished_total{state="${state}"} ${n}`);
    }
    metric(
      "trawl_query_duration_seconds",
      "histogram",
      "Time from SCHEDULED to the finished state.",
    );
    for (const b of m.buckets) {
      const le = b.le === Infinity ? "+Inf" : String(b.le);
      out.push(`trawl_query_duration_seconds_bucket{le="${le}"} ${b.count}`);
    }
    out.push(`trawl_query_duration_seconds_sum ${m.durationSum}`);
    out.push(`trawl_query_duration_seconds_count ${m.durationCount}`);
    metric("trawl_read_bytes_total", "counter", "Bytes read by finished queries.");
    out.push(`trawl_read_bytes_total ${m.bytesRead}`);
    metric("trawl_read_records_total", "counter", "Records read by finished queries.");
    out.push(`trawl_read_records_total ${m.recordsRead}`);
    metric("trawl_results_spilled_total", "counter", "Results that spilled to disk.");
    out.push(`trawl_results_spilled_total ${m.spilled}`);
  }
  if (deps.cloud) {
    const families = [...deps.cloud.entries()];
    const each = (
      name: string,
      type: string,
      help: string,
      pick: (c: FamilyCounters) => number,
    ) => {
      metric(name, type, help);
      for (const [family, c] of families) out.push(`${name}{family="${family}"} ${pick(c)}`);
    };
    each("trawl_cloud_requests_total", "counter", "Requests to cloud APIs.", (c) => c.requests);
    each(
      "trawl_cloud_throttled_total",
      "counter",
      "Throttling answers from cloud APIs.",
      (c) => c.throttled,
    );
    each(
      "trawl_token_bucket_waits_total",
      "counter",
      "Requests that waited for a token.",
      (c) => c.waits,
    );
    each(
      "trawl_token_bucket_wait_seconds_total",
      "counter",
      "Seconds requests waited for tokens.",
      (c) => c.waitSeconds,
    );
  }
  return out.join("\n") + "\n";
}
