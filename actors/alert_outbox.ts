/**
 * The webhook outbox of detections (docs/detections.md): alerts are written to the storage in the
 * same commit as their match key (actors/scheduler.ts), then delivered from here, at least once:
 * a `POST` of the alert as JSON with `Idempotency-Key: <match key>` and
 * `Trawl-Signature: sha256=<hex HMAC-SHA256 of the body with the webhook's secret>`; a 2xx
 * answer delivers it; anything else (an error status, no answer within the timeout, a refused
 * connection) is retried after a backoff (doubling from `baseDelayMs`, or the answer's
 * `Retry-After` when it says longer), and after `maxAttempts` the alert is `dead`: kept, listed,
 * and delivered again on `redeliver`. The secret is read at delivery from the webhook's record
 * and never written to an alert, a message or a log line.
 *
 * Keys: `detections/outbox/<alert id>` (one JSON value per alert, replaced by compare-and-swap so
 * two servers delivering the same alert do not both record it).
 */

import type { Storage, StorageKey } from "../engine/mod.ts";
import {
  type AllowEntry,
  checkedTarget,
  dnsResolver,
  type Resolver,
} from "../home/private_targets.ts";

export type AlertState = "pending" | "delivered" | "dead" | "suppressed";

export interface Alert {
  readonly id: string;
  /** The match key: schedule, rule and record id (or the record's canonical hash). */
  readonly key: string;
  readonly schedule: string;
  readonly rule: string;
  readonly created: number;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly state: AlertState;
  readonly attempts: number;
  /** When the next attempt is due (epoch ms). */
  readonly nextAt: number;
  readonly lastError?: string;
  readonly deliveredAt?: number;
}

/** Where an alert goes: the URL, and the secret it is signed with (never shown). */
export interface Webhook {
  readonly url: string;
  readonly secret: string;
}

export interface OutboxOptions {
  readonly storage: Storage;
  readonly clock: () => number;
  /** The webhook of a schedule, or undefined when it has none (its alerts wait). */
  readonly webhookOf: (schedule: string) => Promise<Webhook | undefined>;
  readonly maxAttempts?: number;
  readonly baseDelayMs?: number;
  /** The longest wait between attempts, Retry-After included. */
  readonly maxDelayMs?: number;
  readonly timeoutMs?: number;
  /** How long a delivered alert stays listed (in a KV storage; files keep it). */
  readonly keepDeliveredMs?: number;
  /** Root certificates trusted besides the system's, for `https` webhooks (tests). */
  readonly caCerts?: readonly string[];
  /**
   * Targets of the server's own network that may be called (`alerts.allowPrivateTargets`,
   * home/private_targets.ts); every other loopback, link-local, private, multicast or
   * unspecified address is refused at each attempt, after its name is resolved.
   */
  readonly allowPrivateTargets?: readonly AllowEntry[];
  /** How a webhook's host name is resolved, once per attempt (tests: a resolver of their own). */
  readonly resolve?: Resolver;
}

export const OUTBOX: StorageKey = ["detections", "outbox"];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function alertKey(id: string): StorageKey {
  return [...OUTBOX, id];
}

export function encodeAlert(alert: Alert): Uint8Array {
  return encoder.encode(JSON.stringify(alert));
}

/** The hex HMAC-SHA256 of `body` with `secret`, as `Trawl-Signature` carries it. */
export async function signature(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(body)));
  return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Seconds or an HTTP date, as milliseconds from `now`; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export class AlertOutbox {
  readonly #o: Required<OutboxOptions>;

  constructor(options: OutboxOptions) {
    this.#o = {
      maxAttempts: 5,
      baseDelayMs: 30_000,
      maxDelayMs: 3_600_000,
      timeoutMs: 10_000,
      keepDeliveredMs: 30 * 86_400_000,
      caCerts: [],
      allowPrivateTargets: [],
      resolve: dnsResolver,
      ...options,
    };
  }

  async list(filter: { schedule?: string; state?: AlertState } = {}): Promise<Alert[]> {
    const out: Alert[] = [];
    for await (const key of this.#o.storage.list(OUTBOX)) {
      const alert = await this.get(key[key.length - 1]!);
      if (!alert) continue;
      if (filter.schedule !== undefined && alert.schedule !== filter.schedule) continue;
      if (filter.state !== undefined && alert.state !== filter.state) continue;
      out.push(alert);
    }
    return out.sort((a, b) => a.created - b.created || a.id.localeCompare(b.id));
  }

  async get(id: string): Promise<Alert | null> {
    const stored = await this.#o.storage.get(alertKey(id));
    return stored ? JSON.parse(decoder.decode(stored.value)) as Alert : null;
  }

  /** A dead (or delivered) alert back to pending, due now; false when there is none. */
  async redeliver(id: string): Promise<boolean> {
    for (;;) {
      const stored = await this.#o.storage.get(alertKey(id));
      if (!stored) return false;
      const alert = JSON.parse(decoder.decode(stored.value)) as Alert;
      const again: Alert = { ...alert, state: "pending", attempts: 0, nextAt: this.#o.clock() };
      const written = await this.#o.storage.put(alertKey(id), encodeAlert(again), {
        expectedVersion: stored.version,
      });
      if (written.ok) return true;
    }
  }

  /** Tries every pending alert that is due; the number of attempts made. */
  async deliverDue(): Promise<number> {
    let attempts = 0;
    for await (const key of this.#o.storage.list(OUTBOX)) {
      const stored = await this.#o.storage.get(key);
      if (!stored) continue;
      const alert = JSON.parse(decoder.decode(stored.value)) as Alert;
      if (alert.state !== "pending" || alert.nextAt > this.#o.clock()) continue;
      const webhook = await this.#o.webhookOf(alert.schedule);
      if (!webhook) continue;
      attempts++;
      const outcome = await this.#attempt(alert, webhook);
      // Compare-and-swap: another server that delivered it meanwhile wins, this result is dropped.
      await this.#o.storage.put(key, encodeAlert(outcome), {
        expectedVersion: stored.version,
        // A delivered alert is kept a while to be listed; a dead one until redelivered.
        ...(outcome.state === "delivered" ? { expireInMs: this.#o.keepDeliveredMs } : {}),
      });
    }
    return attempts;
  }

  async #attempt(alert: Alert, webhook: Webhook): Promise<Alert> {
    const body = JSON.stringify(alert.payload);
    const tried = alert.attempts + 1;
    let error: string;
    let wait: number | undefined;
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.#o.timeoutMs);
    try {
      // Resolved once and checked; the connection goes to that address (no second lookup).
      const target = await checkedTarget(
        webhook.url,
        this.#o.allowPrivateTargets,
        this.#o.resolve,
      );
      if ("refused" in target) throw new RefusedTarget(target.refused);
      // A redirect is not followed (never: it could lead to an address refused above).
      const response = await postPinned(target, {
        headers: {
          "Content-Type": "application/json",
          "Idempotency-Key": alert.key,
          "Trawl-Signature": `sha256=${await signature(webhook.secret, body)}`,
          "Trawl-Alert-Id": alert.id,
        },
        body,
        signal: timeout.signal,
        caCerts: this.#o.caCerts,
      });
      if (response.ok) {
        const { lastError: _, ...rest } = alert;
        return { ...rest, state: "delivered", attempts: tried, deliveredAt: this.#o.clock() };
      }
      error = response.status >= 300 && response.status < 400
        ? `the webhook answered ${response.status} (a redirect, not followed)`
        : `the webhook answered ${response.status}`;
      wait = retryAfterMs(response.headers.get("Retry-After"), this.#o.clock());
    } catch (e) {
      error = e instanceof RefusedTarget
        ? `the webhook is refused: ${e.message}`
        : timeout.signal.aborted
        ? `the webhook did not answer within ${this.#o.timeoutMs} ms`
        : `the webhook could not be reached (${(e as Error).name})`;
    } finally {
      clearTimeout(timer);
    }
    if (tried >= this.#o.maxAttempts) {
      return { ...alert, state: "dead", attempts: tried, lastError: error };
    }
    const backoff = this.#o.baseDelayMs * 2 ** (tried - 1);
    const delay = Math.min(this.#o.maxDelayMs, Math.max(backoff, wait ?? 0));
    return { ...alert, attempts: tried, nextAt: this.#o.clock() + delay, lastError: error };
  }
}

/** A webhook whose address may not be called (home/private_targets.ts). */
class RefusedTarget extends Error {}

/** The head of an HTTP answer (its body is not read). */
export interface AnswerHead {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: Headers;
}

/** The longest answer head read. */
const MAX_HEAD = 64 * 1024;

/**
 * An HTTP/1.1 `POST` of `body` to `target.url`, over a connection to `target.address` (the one
 * that was checked) rather than to whatever the host name resolves to now: the request carries
 * the URL's host in `Host`, and for `https` the TLS handshake sends it as the server name and
 * checks the certificate against it (Deno.startTls). Only the answer's head is read; the
 * connection is closed after it (`Connection: close`).
 */
export async function postPinned(
  target: { readonly url: URL; readonly address: string },
  options: {
    readonly headers: Readonly<Record<string, string>>;
    readonly body: string;
    readonly signal: AbortSignal;
    readonly caCerts?: readonly string[];
  },
): Promise<AnswerHead> {
  const { url, address } = target;
  const tls = url.protocol === "https:";
  const port = url.port !== "" ? Number(url.port) : tls ? 443 : 80;
  const bytes = encoder.encode(options.body);
  // Header values as fetch takes them (a value with CR/LF is refused, not sent).
  const headers = new Headers(options.headers);
  headers.set("Host", url.host);
  headers.set("Content-Length", String(bytes.length));
  headers.set("Connection", "close");
  headers.set("User-Agent", "Trawl-Alerts");
  let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\n`;
  for (const [name, value] of headers) head += `${name}: ${value}\r\n`;
  head += "\r\n";
  const signal = options.signal;
  let conn: Deno.Conn = await Deno.connect({
    hostname: address.includes(":") ? `[${address}]` : address,
    port,
    signal,
  });
  const close = () => {
    try {
      conn.close();
    } catch { /* closed already */ }
  };
  signal.addEventListener("abort", close, { once: true });
  try {
    if (tls) {
      conn = await Deno.startTls(conn as Deno.TcpConn, {
        hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
        caCerts: [...(options.caCerts ?? [])],
      });
    }
    signal.throwIfAborted();
    await writeAll(conn, Uint8Array.from(head, (c) => c.charCodeAt(0)));
    await writeAll(conn, bytes);
    return parseHead(await readHead(conn));
  } finally {
    signal.removeEventListener("abort", close);
    close();
  }
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}

/**
 * Reads the answer's head (up to its blank line), past any interim (1xx) answers; the text of the
 * final one.
 */
async function readHead(conn: Deno.Conn): Promise<string> {
  const latin1 = new TextDecoder("latin1");
  const buffer = new Uint8Array(MAX_HEAD);
  let length = 0;
  while (length < MAX_HEAD) {
    const n = await conn.read(buffer.subarray(length));
    if (n === null) break;
    length += n;
    for (;;) {
      const text = latin1.decode(buffer.subarray(0, length));
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) break;
      if (!/^HTTP\/1\.[01] 1\d\d/.test(text)) return text.slice(0, end);
      // An interim answer (100 Continue): the final one follows.
      buffer.copyWithin(0, end + 4, length);
      length -= end + 4;
    }
  }
  throw new Error("the webhook's answer has no complete head");
}

function parseHead(text: string): AnswerHead {
  const [statusLine = "", ...lines] = text.split("\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(statusLine);
  if (!m) throw new Error("the webhook's answer is not HTTP/1.1");
  const status = Number(m[1]);
  const headers = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    try {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    } catch { /* a header that is none */ }
  }
  return { status, ok: status >= 200 && status < 300, headers };
}
