/**
 * OAuth 2.0 client-credential tokens through @azure/msal-node: one application object per
 * (tenant, client id, secret, token host), whose cache keeps one token per API resource (Graph
 * and the Management Activity API need separate ones). Token requests follow the data requests'
 * retry policy (network failures, 429 and 5xx such as AADSTS90033 retried up to
 * `maxErrorRetries` with backoff or Retry-After), and one request per (client, resource) is in
 * flight at a time: concurrent cold queries share it. A failure names the store and the reason,
 * never the secret.
 */

import {
  ConfidentialClientApplication,
  type INetworkModule,
  type NetworkRequestOptions,
  type NetworkResponse,
} from "@azure/msal-node";
import { createHash } from "node:crypto";
import type { CloudHosts } from "./hosts.ts";
import { retryAfterMs } from "../retry_after.ts";
import { hideSecrets } from "../secret_text.ts";
import { sleep } from "../../engine/util/sleep.ts";

export interface TokenRequest {
  readonly store: string;
  readonly tenantId: string;
  readonly clientId: string;
  readonly secret: string;
  readonly hosts: CloudHosts;
  /** The store's `userAgent`, sent on token requests too. */
  readonly userAgent?: string;
  /** The whole time a token request may take, ms (connect + read timeouts; 0 = none). */
  readonly timeoutMs?: number;
  /** Retries of a failed token request (network, 429, 5xx); the store's `maxErrorRetries`. */
  readonly maxErrorRetries?: number;
  /** First retry delay, doubling; 500 ms when absent. */
  readonly backoffMs?: number | undefined;
}

/** A token that could not be got; the message is safe to show. */
export class TokenError extends Error {
  /**
   * @param badCredentials the token endpoint refused the tenant, client id or secret of the
   *   definition (not a network failure or an outage).
   */
  constructor(message: string, readonly badCredentials = false) {
    super(message);
    this.name = "TokenError";
  }
}

/**
 * Answers of the token endpoint that mean the definition is wrong: unknown tenant, unknown
 * application, wrong secret, a tenant given as 'common'.
 */
const BAD_CREDENTIALS =
  /invalid_client|unauthorized_client|invalid_tenant|AADSTS(90002|700016|7000215|7000222|50126|90023|50059)\b/i;

/** A tenant id that is a GUID (what the Management Activity API needs), not a domain. */
export function isTenantGuid(tenant: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tenant);
}

/** Process-wide token source; create one and share it. */
export class TokenProvider {
  #apps = new Map<string, ConfidentialClientApplication>();
  /** Token requests under way, per (application, resource, fresh). */
  #inFlight = new Map<string, Promise<string>>();
  /** Tenant GUIDs of tenants given as domains, per (token host, domain). */
  #guids = new Map<string, string>();

  /**
   * An access token for `resource` (`graph` or `manage`); `fresh` skips the cache (the API
   * said the cached one expired).
   */
  token(req: TokenRequest, resource: "graph" | "manage", fresh = false): Promise<string> {
    const key = `${appKey(req)}|${resource}|${fresh}`;
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#acquire(req, resource, fresh).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    return pending;
  }

  /**
   * The tenant's GUID: the tenant id itself when it is one; for a domain, the `tid` claim of a
   * token for `resource`, else the issuer of the tenant's OpenID configuration; undefined when
   * neither gives one. Remembered per process.
   */
  async tenantGuid(req: TokenRequest, resource: "graph" | "manage"): Promise<string | undefined> {
    if (isTenantGuid(req.tenantId)) return req.tenantId.toLowerCase();
    const key = `${req.hosts.login}|${req.tenantId.toLowerCase()}`;
    const known = this.#guids.get(key);
    if (known) return known;
    const tid = tokenClaim(await this.token(req, resource), "tid") ??
      await issuerTenant(req).catch(() => undefined);
    if (!tid || !isTenantGuid(tid)) return undefined;
    this.#guids.set(key, tid.toLowerCase());
    return tid.toLowerCase();
  }

  async #acquire(req: TokenRequest, resource: "graph" | "manage", fresh: boolean) {
    const api = resource === "graph" ? req.hosts.graph : req.hosts.manage;
    let result;
    try {
      result = await this.#app(req).acquireTokenByClientCredential({
        scopes: [`${api}/.default`],
        skipCache: fresh,
      });
    } catch (e) {
      // msal remembers a 429 or 5xx and refuses the next request for up to a minute without
      // sending it: a new application object forgets that (the retries were already made).
      this.#apps.delete(appKey(req));
      const why = hide(describe(e), req.secret);
      const bad = BAD_CREDENTIALS.test(why);
      throw new TokenError(
        `datastore '${req.store}': could not get a token for ${api} from ${req.hosts.login}: ${why}${
          bad ? "; check the keys 'tenantId', 'clientId' and 'secret' of the definition" : ""
        }`,
        bad,
      );
    }
    if (!result?.accessToken) {
      throw new TokenError(
        `datastore '${req.store}': the token endpoint ${req.hosts.login} gave an empty token for ${api}; check the tenant id and the token host`,
      );
    }
    return result.accessToken;
  }

  #app(req: TokenRequest): ConfidentialClientApplication {
    const key = appKey(req);
    let app = this.#apps.get(key);
    if (app) return app;
    const login = new URL(req.hosts.login);
    // msal refuses an http authority: keep an https one and hand it the real (test) endpoint.
    const authority = `https://${login.host}/${req.tenantId}`;
    const local = login.protocol === "http:";
    app = new ConfidentialClientApplication({
      auth: {
        clientId: req.clientId,
        clientSecret: req.secret,
        authority,
        knownAuthorities: local ? [login.host] : [],
        authorityMetadata: local ? JSON.stringify(metadata(req.hosts.login, req.tenantId)) : "",
      },
      system: {
        networkClient: fetchNetworkClient(req.userAgent, req.timeoutMs ?? 0, {
          maxErrorRetries: req.maxErrorRetries ?? 0,
          backoffMs: req.backoffMs ?? 500,
        }),
      },
    });
    this.#apps.set(key, app);
    return app;
  }
}

/** The key of an application object: one per tenant, client, secret, host and request policy. */
function appKey(req: TokenRequest): string {
  const digest = createHash("sha256").update(req.secret).digest("hex").slice(0, 16);
  return [
    req.tenantId.toLowerCase(),
    req.clientId,
    digest,
    req.hosts.login,
    req.userAgent ?? "",
    req.timeoutMs ?? 0,
    req.maxErrorRetries ?? 0,
    req.backoffMs ?? 500,
  ].join("|");
}

/** The longest Retry-After of the token endpoint that is waited out (longer: give up). */
const MAX_TOKEN_WAIT_MS = 60_000;

/**
 * msal's requests through fetch, so that token requests carry the store's user agent and its
 * timeouts like every other request of the store (msal's own client sends neither), and are
 * retried like them: network failures, 429 and 5xx (AADSTS90033 "temporarily unavailable")
 * up to `maxErrorRetries` times, after Retry-After or a doubling backoff. msal sees only the
 * last answer.
 */
export function fetchNetworkClient(
  userAgent: string | undefined,
  timeoutMs: number,
  retry: { maxErrorRetries: number; backoffMs: number } = { maxErrorRetries: 0, backoffMs: 500 },
): INetworkModule {
  async function send<T>(
    url: string,
    method: "GET" | "POST",
    options?: NetworkRequestOptions,
  ): Promise<NetworkResponse<T>> {
    for (let attempt = 0;; attempt++) {
      let res: Response;
      let text: string;
      try {
        res = await fetchOnce(url, method, options);
        text = await res.text();
      } catch (e) {
        if (attempt >= retry.maxErrorRetries) throw e;
        await sleep(retry.backoffMs * 2 ** attempt);
        continue;
      }
      const wait = retryAfterMs(res.headers, Date.now());
      if (
        (res.status === 429 || res.status >= 500) && attempt < retry.maxErrorRetries &&
        (wait ?? 0) <= MAX_TOKEN_WAIT_MS
      ) {
        await sleep(wait ?? retry.backoffMs * 2 ** attempt);
        continue;
      }
      return answer<T>(res, text);
    }
  }
  function fetchOnce(url: string, method: string, options?: NetworkRequestOptions) {
    const headers = new Headers(options?.headers);
    if (userAgent) headers.set("User-Agent", userAgent);
    return fetch(url, {
      method,
      headers,
      body: method === "POST" ? options?.body ?? null : null,
      signal: timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : null,
    });
  }
  function answer<T>(res: Response, text: string): NetworkResponse<T> {
    let body: unknown = {};
    try {
      body = text === "" ? {} : JSON.parse(text);
    } catch {
      // msal reads an error body it cannot parse as an empty answer, and reports the status.
    }
    const out: Record<string, string> = {};
    res.headers.forEach((value, name) => out[name] = value);
    return { headers: out, body: body as T, status: res.status };
  }
  return {
    sendGetRequestAsync: (url, options) => send(url, "GET", options),
    sendPostRequestAsync: (url, options) => send(url, "POST", options),
  };
}

function metadata(base: string, tenant: string): Record<string, unknown> {
  return {
    token_endpoint: `${base}/${tenant}/oauth2/v2.0/token`,
    token_endpoint_auth_methods_supported: ["client_secret_post"],
    jwks_uri: `${base}/${tenant}/discovery/v2.0/keys`,
    issuer: `${base}/${tenant}/v2.0`,
    authorization_endpoint: `${base}/${tenant}/oauth2/v2.0/authorize`,
    end_session_endpoint: `${base}/${tenant}/oauth2/v2.0/logout`,
    response_modes_supported: ["query"],
    response_types_supported: ["code"],
    scopes_supported: ["openid"],
  };
}

/** A claim of a JWT access token's payload; undefined when the token is not a JWT. */
function tokenClaim(token: string, claim: string): string | undefined {
  try {
    const payload = token.split(".")[1];
    if (!payload) return undefined;
    const text = new TextDecoder().decode(
      Uint8Array.from(atob(payload.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)),
    );
    const value = JSON.parse(text)[claim];
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The tenant GUID in the issuer of a tenant's OpenID configuration. */
async function issuerTenant(req: TokenRequest): Promise<string | undefined> {
  const url = `${req.hosts.login}/${
    encodeURIComponent(req.tenantId)
  }/v2.0/.well-known/openid-configuration`;
  const res = await fetch(url, {
    headers: req.userAgent ? { "User-Agent": req.userAgent } : {},
    signal: req.timeoutMs ? AbortSignal.timeout(req.timeoutMs) : null,
  });
  const body = await res.json().catch(() => undefined) as { issuer?: unknown } | undefined;
  const issuer = typeof body?.issuer === "string" ? body.issuer : "";
  return /\/([0-9a-f-]{36})\//i.exec(issuer)?.[1];
}

function describe(e: unknown): string {
  if (e && typeof e === "object") {
    const o = e as { errorCode?: string; errorMessage?: string; message?: string };
    const text = o.errorMessage || o.message || String(e);
    return o.errorCode ? `${o.errorCode}: ${text.split("\n")[0]}` : text.split("\n")[0]!;
  }
  return String(e);
}

function hide(text: string, secret: string): string {
  return hideSecrets(text, [secret]);
}
