/**
 * One request to the Blob service, authorized (authorize.ts), bounded by the store's connect
 * and read timeouts, aborted with the query, retried with backoff on network failures,
 * timeouts and 5xx (up to maxErrorRetries), and waiting out throttling (429, 503 ServerBusy)
 * for Retry-After. The body is read whole: listings are pages and reads are ranges, both small.
 */

import { retryAfterMs } from "../retry_after.ts";
import { authorize } from "./authorize.ts";
import type { AzblobDefinition } from "./definition.ts";
import { sleep } from "../../engine/util/sleep.ts";

export interface BlobRequestContext {
  readonly def: AzblobDefinition;
  readonly signal: AbortSignal;
  /** First retry delay; doubles each time. */
  readonly backoffMs?: number | undefined;
}

export interface BlobResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Uint8Array;
  /** The service's error code (`x-ms-error-code`), when it gave one. */
  readonly code?: string | undefined;
}

/** A request given up after its retries; the message names the resource, never a credential. */
export class BlobRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BlobRequestError";
  }
}

const MAX_THROTTLE_WAITS = 12;
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Sends `GET <url>` (the URL without credentials); answers below 500 that are not throttling
 * are returned to the caller, whatever their status.
 */
export async function blobRequest(
  ctx: BlobRequestContext,
  url: URL,
  headers: Record<string, string> = {},
): Promise<BlobResponse> {
  const backoff = ctx.backoffMs ?? 500;
  // What messages show: the path, never the query string a SAS token would be added to.
  const what = `GET ${url.pathname}`;
  let errors = 0;
  let throttles = 0;
  while (true) {
    let problem: string;
    try {
      const res = await attempt(ctx, url, headers);
      const throttled = res.status === 429 || (res.status === 503 && res.code === "ServerBusy");
      if (throttled && ++throttles <= MAX_THROTTLE_WAITS) {
        const asked = retryAfterMs(res.headers, Date.now());
        const wait = asked === undefined ? undefined : Math.min(asked, MAX_RETRY_AFTER_MS);
        await sleep(wait ?? backoff * 2 ** Math.min(throttles, 6), ctx.signal);
        continue;
      }
      if (res.status < 500 && !throttled) return res;
      problem = `the service answered ${res.status}${res.code ? ` (${res.code})` : ""}`;
    } catch (e) {
      if (ctx.signal.aborted) throw ctx.signal.reason ?? e;
      problem = e instanceof TimeoutError ? e.message : `network failure: ${errorName(e)}`;
    }
    if (++errors > ctx.def.maxErrorRetries) {
      throw new BlobRequestError(
        `${what}: given up after ${ctx.def.maxErrorRetries} retries; last: ${problem}`,
      );
    }
    await sleep(backoff * 2 ** (errors - 1), ctx.signal);
  }
}

class TimeoutError extends Error {}

/** One try: the headers within connect + read timeout, the body within the read timeout. */
async function attempt(
  ctx: BlobRequestContext,
  url: URL,
  extra: Record<string, string>,
): Promise<BlobResponse> {
  const { connectTimeoutMs, readTimeoutMs } = ctx.def;
  const headers = new Headers(extra);
  const target = await authorize(ctx.def, "GET", url, headers);
  const headersBudget = connectTimeoutMs > 0 && readTimeoutMs > 0
    ? connectTimeoutMs + readTimeoutMs
    : 0;
  const controller = new AbortController();
  const onAbort = () => controller.abort(ctx.signal.reason);
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut: string | undefined;
  const arm = (ms: number, what: string) => {
    clearTimeout(timer);
    if (ms <= 0) return;
    timer = setTimeout(() => {
      timedOut = `timed out after ${ms} ms (${what})`;
      controller.abort();
    }, ms);
  };
  try {
    arm(headersBudget || connectTimeoutMs, "no answer");
    const res = await fetch(target, { headers, signal: controller.signal });
    arm(readTimeoutMs, "reading the answer");
    const body = new Uint8Array(await res.arrayBuffer());
    return {
      status: res.status,
      headers: res.headers,
      body,
      code: res.headers.get("x-ms-error-code") ?? undefined,
    };
  } catch (e) {
    if (timedOut !== undefined && !ctx.signal.aborted) throw new TimeoutError(timedOut);
    throw e;
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", onAbort);
  }
}

/** The kind of a network error, without the URL (and so the SAS token) fetch may put in it. */
function errorName(e: unknown): string {
  if (e instanceof TypeError) return "connection failed or was cut";
  return e instanceof Error ? e.name : "unknown";
}
