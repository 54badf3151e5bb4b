/**
 * One request to a cloud API, done the way good collectors do it: paced by the connector's
 * token bucket, bounded by connect and read timeouts, aborted with the query, retried with
 * backoff on network failures, 5xx and malformed bodies (up to maxErrorRetries), waiting out
 * throttling answers (`429`, or `AF429` whatever the status) for Retry-After, and comparing the
 * server's clock with ours.
 */

import type { Warning } from "../../engine/contracts/datastore.ts";
import { retryAfterMs } from "../retry_after.ts";
import { sleep } from "../../engine/util/sleep.ts";

export interface RequestContext {
  /** The store, for messages. */
  readonly store: string;
  readonly signal: AbortSignal;
  readonly connectTimeoutMs: number;
  readonly readTimeoutMs: number;
  readonly maxErrorRetries: number;
  readonly userAgent: string;
  /** Waits for the pacing to allow a request; the function returned says it completed. */
  readonly acquire: (signal: AbortSignal) => Promise<() => void>;
  /** Tells the bucket the provider throttled us, and for how long to pause. */
  readonly throttled: (pauseMs: number) => void;
  readonly onWarning: (w: Warning) => void;
  readonly now: () => number;
  /** First retry delay; doubles each time. */
  readonly backoffMs?: number | undefined;
  /** Counts throttling answers and retries, for tests and the bench. */
  readonly stats?: RequestStats | undefined;
  /** Told of each request sent (the query's own count). */
  readonly onRequest?: (() => void) | undefined;
  /** Set once a clock skew warning was given, so it is given once per query. */
  skewWarned?: boolean;
}

export interface RequestStats {
  requests: number;
  throttled: number;
  retries: number;
  /** Hours given up (each also a warning of its query). */
  lostHours?: number;
}

export interface CloudResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed body; undefined when it is empty. */
  readonly body: unknown;
}

/** A resource given up after its retries, or a refusal the caller cannot get past. */
export class CloudRequestError extends Error {
  constructor(message: string, readonly status?: number, readonly code?: string) {
    super(message);
    this.name = "CloudRequestError";
  }
}

const MAX_THROTTLE_WAITS = 12;
const SKEW_LIMIT_MS = 5 * 60_000;

/** Sends the request; answers 2xx-4xx that are not throttling are returned to the caller. */
export async function cloudRequest(
  ctx: RequestContext,
  req: {
    method: "GET" | "POST";
    url: string;
    headers?: Record<string, string>;
    body?: string | undefined;
  },
): Promise<CloudResponse> {
  let errors = 0;
  let throttles = 0;
  const backoff = ctx.backoffMs ?? 500;
  const what = `${req.method} ${redactUrl(req.url)}`;
  while (true) {
    const completed = await ctx.acquire(ctx.signal);
    if (ctx.stats) ctx.stats.requests++;
    ctx.onRequest?.();
    let problem: string;
    let waitMs: number | undefined;
    try {
      let res: CloudResponse;
      try {
        res = await attempt(ctx, req);
      } finally {
        // The token counts from here: the provider saw the request before it completed.
        completed();
      }
      checkSkew(ctx, res.headers);
      const code = errorCode(res.body);
      if (res.status === 429 || code === "AF429") {
        if (ctx.stats) ctx.stats.throttled++;
        if (++throttles > MAX_THROTTLE_WAITS) {
          throw new CloudRequestError(`${what}: still throttled after ${MAX_THROTTLE_WAITS} waits`);
        }
        const wait = retryAfterMs(res.headers, ctx.now()) ??
          backoff * 2 ** Math.min(throttles, 6);
        ctx.throttled(wait);
        continue;
      }
      if (res.status < 500 && !(code && /^AF5\d{4}$/.test(code))) {
        if (res.status < 300 && res.text !== "" && res.body === undefined) {
          problem = "the answer is not valid JSON";
        } else return res;
      } else {
        problem = `the server answered ${res.status}${code ? ` (${code})` : ""}`;
        waitMs = retryAfterMs(res.headers, ctx.now());
      }
    } catch (e) {
      if (ctx.signal.aborted) throw ctx.signal.reason ?? e;
      if (e instanceof CloudRequestError) throw e;
      problem = e instanceof TimeoutError ? e.message : `network failure: ${errorText(e)}`;
    }
    if (++errors > ctx.maxErrorRetries) {
      throw new CloudRequestError(
        `${what}: given up after ${ctx.maxErrorRetries} retries; last: ${problem}`,
      );
    }
    if (ctx.stats) ctx.stats.retries++;
    await sleep(waitMs ?? backoff * 2 ** (errors - 1), ctx.signal);
  }
}

class TimeoutError extends Error {}

/**
 * How the two timeouts are enforced around one fetch, which cannot tell connecting from
 * waiting. With both set, the wait for the headers gets both budgets. With only one set, a
 * separate TCP connection to the host (a probe) is timed first: it enforces the connect
 * timeout on its own (readTimeout 0), or measures the connect time so that the read timeout
 * does not count it (connectTimeout 0). 0 means that timeout is infinite.
 */
export interface TimeoutPlan {
  /** Probe the connection first; its limit (0: none). */
  readonly probe: boolean;
  readonly probeLimitMs: number;
  /** The headers' budget given the probe's connect time (0: none). */
  readonly headersBudget: (connectMs: number) => number;
  /** The body's budget (0: none). */
  readonly bodyBudgetMs: number;
}

/** The plan for a connect and a read timeout, each 0 for infinite. */
export function timeoutPlan(connectMs: number, readMs: number): TimeoutPlan {
  if (connectMs > 0 && readMs > 0) {
    return {
      probe: false,
      probeLimitMs: 0,
      headersBudget: () => connectMs + readMs,
      bodyBudgetMs: readMs,
    };
  }
  if (connectMs > 0) {
    return { probe: true, probeLimitMs: connectMs, headersBudget: () => 0, bodyBudgetMs: 0 };
  }
  if (readMs > 0) {
    // fetch connects again after the probe, which takes about as long (less when pooled).
    return {
      probe: true,
      probeLimitMs: 0,
      headersBudget: (c) => readMs + 2 * c + 50,
      bodyBudgetMs: readMs,
    };
  }
  return { probe: false, probeLimitMs: 0, headersBudget: () => 0, bodyBudgetMs: 0 };
}

/** Opens (and closes) a TCP connection to the URL's host; its duration in ms. */
async function probeConnect(url: string, limitMs: number, signal: AbortSignal): Promise<number> {
  // fetch goes through the proxy the environment names: then connecting means the proxy.
  const u = proxyFor(new URL(url)) ?? new URL(url);
  const port = Number(u.port || (u.protocol === "https:" ? 443 : 80));
  const started = performance.now();
  const connecting = Deno.connect({ hostname: u.hostname.replace(/^\[|\]$/g, ""), port });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const limits = new Promise<never>((_, reject) => {
    if (limitMs > 0) {
      timer = setTimeout(
        () => reject(new TimeoutError(`timed out after ${limitMs} ms (not connected)`)),
        limitMs,
      );
    }
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const conn = await Promise.race([connecting, limits]);
    conn.close();
    return performance.now() - started;
  } catch (e) {
    // A connection made after the limit is closed as soon as it exists.
    connecting.then((c) => c.close(), () => {});
    throw e;
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}

/** The proxy fetch uses for `url` (HTTP(S)_PROXY less NO_PROXY), if any. */
export function proxyFor(url: URL): URL | undefined {
  const env = (name: string) => {
    try {
      return Deno.env.get(name) ?? Deno.env.get(name.toLowerCase());
    } catch {
      return undefined; // no env permission: fetch cannot read it either
    }
  };
  const proxy = env(url.protocol === "https:" ? "HTTPS_PROXY" : "HTTP_PROXY");
  if (!proxy) return undefined;
  const host = url.hostname.toLowerCase();
  const bypass = (env("NO_PROXY") ?? "").split(",").map((x) => x.trim().toLowerCase())
    .filter((x) => x !== "")
    .some((x) =>
      x === "*" || host === x.replace(/^\./, "") || host.endsWith(`.${x.replace(/^\./, "")}`)
    );
  if (bypass) return undefined;
  try {
    return new URL(proxy.includes("://") ? proxy : `http://${proxy}`);
  } catch {
    return undefined;
  }
}

async function attempt(
  ctx: RequestContext,
  req: { method: string; url: string; headers?: Record<string, string>; body?: string | undefined },
): Promise<CloudResponse> {
  const plan = timeoutPlan(ctx.connectTimeoutMs, ctx.readTimeoutMs);
  const connectMs = plan.probe ? await probeConnect(req.url, plan.probeLimitMs, ctx.signal) : 0;
  const timer = new AbortController();
  const signal = AbortSignal.any([ctx.signal, timer.signal]);
  let phase = "no answer";
  let handle = arm(timer, Math.ceil(plan.headersBudget(connectMs)), () => phase);
  try {
    const res = await fetch(req.url, {
      method: req.method,
      headers: { "User-Agent": ctx.userAgent, Accept: "application/json", ...req.headers },
      body: req.body ?? null,
      signal,
    });
    clearTimeout(handle);
    phase = "body not read";
    handle = arm(timer, plan.bodyBudgetMs, () => phase);
    const text = await res.text();
    let body: unknown = undefined;
    if (text.trim() !== "") {
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
    }
    return { status: res.status, headers: res.headers, text, body };
  } catch (e) {
    if (timer.signal.aborted && !ctx.signal.aborted) throw timer.signal.reason;
    throw e;
  } finally {
    clearTimeout(handle);
  }
}

function arm(
  timer: AbortController,
  ms: number,
  phase: () => string,
): ReturnType<typeof setTimeout> | undefined {
  if (ms <= 0) return undefined;
  return setTimeout(
    () => timer.abort(new TimeoutError(`timed out after ${ms} ms (${phase()})`)),
    ms,
  );
}

/** `{"error": {"code": "AF20023", ...}}` → `AF20023`. */
export function errorCode(body: unknown): string | undefined {
  const err = (body as { error?: { code?: unknown } } | undefined)?.error;
  return typeof err?.code === "string" ? err.code : undefined;
}

/** The error message of an error body, for reports. */
export function errorMessage(res: CloudResponse): string {
  const err = (res.body as { error?: { message?: unknown } } | undefined)?.error;
  // Some answers carry a whole .NET stack trace: its first line says what went wrong.
  const msg = typeof err?.message === "string"
    ? err.message.split(/\r?\n/)[0]!.slice(0, 500)
    : res.text.slice(0, 200);
  return `${res.status}${errorCode(res.body) ? ` ${errorCode(res.body)}` : ""}: ${msg}`;
}

function checkSkew(ctx: RequestContext, headers: Headers): void {
  if (ctx.skewWarned) return;
  const date = headers.get("date");
  if (!date) return;
  const server = Date.parse(date);
  if (Number.isNaN(server)) return;
  const skew = server - ctx.now();
  if (Math.abs(skew) > SKEW_LIMIT_MS) {
    ctx.skewWarned = true;
    ctx.onWarning({
      level: "WARN",
      message: `datastore '${ctx.store}': the cloud API's clock differs from ours by ${
        Math.round(skew / 1000)
      } s; time windows may be off, check the server's clock`,
    });
  }
}

/** A URL without its query string's tokens, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/(\$skiptoken|skiptoken|nextpage)=[^&]*/gi, "$1=…");
}

/** An error's message with any URL in it redacted: fetch's network errors quote the whole URL. */
export function errorText(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.replace(/https?:\/\/[^\s)]+/g, (url) => redactUrl(url));
}
