/**
 * OAuth 2.0 client-credential tokens through @azure/msal-node: one application object per
 * (tenant, client id, secret, token host), whose cache keeps one token per API resource (Graph
 * and the Management Activity API need separate ones). A failure names the store and the
 * reason, never the secret.
 */

import {
  ConfidentialClientApplication,
  type INetworkModule,
  type NetworkRequestOptions,
  type NetworkResponse,
} from "@azure/msal-node";
import { createHash } from "node:crypto";
import type { CloudHosts } from "./hosts.ts";

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

/** Process-wide token source; create one and share it. */
export class TokenProvider {
  #apps = new Map<string, ConfidentialClientApplication>();

  /** An access token for `resource` (`graph` or `manage`). */
  async token(req: TokenRequest, resource: "graph" | "manage"): Promise<string> {
    const api = resource === "graph" ? req.hosts.graph : req.hosts.manage;
    let result;
    try {
      result = await this.#app(req).acquireTokenByClientCredential({ scopes: [`${api}/.default`] });
    } catch (e) {
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
    const digest = createHash("sha256").update(req.secret).digest("hex").slice(0, 16);
    const key = [
      req.tenantId,
      req.clientId,
      digest,
      req.hosts.login,
      req.userAgent ?? "",
      req.timeoutMs ?? 0,
    ].join("|");
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
      system: { networkClient: fetchNetworkClient(req.userAgent, req.timeoutMs ?? 0) },
    });
    this.#apps.set(key, app);
    return app;
  }
}

/**
 * msal's requests through fetch, so that token requests carry the store's user agent and its
 * timeouts like every other request of the store (msal's own client sends neither).
 */
export function fetchNetworkClient(
  userAgent: string | undefined,
  timeoutMs: number,
): INetworkModule {
  async function send<T>(
    url: string,
    method: "GET" | "POST",
    options?: NetworkRequestOptions,
  ): Promise<NetworkResponse<T>> {
    const headers = new Headers(options?.headers);
    if (userAgent) headers.set("User-Agent", userAgent);
    const res = await fetch(url, {
      method,
      headers,
      body: method === "POST" ? options?.body : undefined,
      signal: timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined,
    });
    const text = await res.text();
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

function describe(e: unknown): string {
  if (e && typeof e === "object") {
    const o = e as { errorCode?: string; errorMessage?: string; message?: string };
    const text = o.errorMessage || o.message || String(e);
    return o.errorCode ? `${o.errorCode}: ${text.split("\n")[0]}` : text.split("\n")[0];
  }
  return String(e);
}

function hide(text: string, secret: string): string {
  return secret ? text.split(secret).join("(hidden)") : text;
}
