/**
 * A real HTTP server that behaves like the cloud APIs behind `cloudapi://`: the token endpoint
 * (+ OpenID metadata), Graph v1.0 and beta audit logs, and the Office 365 Management Activity
 * API. It enforces per-tenant throttling (one Graph budget per tenant counting v1.0 and beta
 * together), injects faults on request (the token endpoint's included), and counts every
 * request. Like the real services, its tokens carry the tenant's GUID (`tid`), its Management
 * Activity API refuses a tenant given as a domain (AF20013) and start requests repeated within
 * 15 minutes. Its "current time" is injectable so tests need not wait for lags.
 */

import { type Blob, type SeedData, type SeedOptions, seedTenant } from "./seed.ts";

export interface EmulatedTenant {
  /** The name the tests use for the tenant (often a domain, `contoso.onmicrosoft.com`). */
  readonly tenantId: string;
  /** The tenant's GUID; derived from tenantId when absent (or tenantId itself if a GUID). */
  readonly guid?: string;
  readonly clientId: string;
  readonly secret: string;
}

export type FaultKind =
  | "429"
  | "429-no-retry-after"
  | "af429-403"
  | "500"
  | "drop"
  | "slow"
  | "malformed"
  | "expired-skiptoken"
  | "expired-content"
  /** The Management API's answer for a tenant whose unified audit logging is off. */
  | "tenant-not-found"
  /** The token endpoint answers 503 AADSTS90033 ("temporarily unavailable"). */
  | "token-unavailable"
  /** Every token issued so far expires; the request hit answers 401 (token expired). */
  | "token-expired";

export interface Fault {
  readonly kind: FaultKind;
  /** Applies to requests whose path contains this text (all when absent). */
  readonly match?: string;
  /** How many requests it hits; 1 when absent. */
  readonly times?: number;
  /** For `slow`: how long to wait before answering. */
  readonly delayMs?: number;
  /** For `429`: the Retry-After header, in seconds ("1" when absent). */
  readonly retryAfter?: string;
}

/** A fault that hit a request. */
export interface FiredFault {
  readonly kind: FaultKind;
  readonly match?: string | undefined;
  /** The request's path and query string. */
  readonly url: string;
}

export interface RateLimitSpec {
  readonly limit: number;
  readonly unitMs: number;
}

export interface EmulatorOptions {
  readonly tenants: readonly EmulatedTenant[];
  readonly seed: SeedOptions;
  /** The emulator's current time; defaults to the real clock. */
  readonly now?: () => number;
  readonly graphLimit?: RateLimitSpec;
  readonly manageLimit?: RateLimitSpec;
  /** Records per Graph page at most (also bounded by $top). */
  readonly graphPageSize?: number;
  /** Blobs per content listing page. */
  readonly contentPageSize?: number;
  readonly faults?: readonly Fault[];
  /**
   * How far the `Date` header of every answer is off the emulator's clock, in ms (a server
   * whose clock is wrong); 0 when absent.
   */
  readonly dateSkewMs?: number;
  /** Issue opaque access tokens (no `tid` claim to read): clients must ask the OpenID configuration. */
  readonly opaqueTokens?: boolean;
}

export interface RequestRecord {
  readonly method: string;
  readonly path: string;
  /** Full path with query string. */
  readonly url: string;
  readonly api: "token" | "graph" | "manage" | "admin" | "other";
  /** Real time of arrival, epoch ms. */
  readonly at: number;
  status: number;
  readonly publisher: string | null;
  readonly userAgent: string | null;
  /** Set when the client went away before the answer was sent (e.g. during a slow fault). */
  aborted?: boolean;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export class CloudEmulator {
  readonly requests: RequestRecord[] = [];
  /** Every fault that hit a request, in order. */
  readonly fired: FiredFault[] = [];
  #server?: Deno.HttpServer;
  #data = new Map<string, SeedData>();
  #tokens = new Map<string, { tenant: string; resource: string; expired?: boolean }>();
  /** Tenant names and GUIDs (lower case) → the tenant's name (tenantId). */
  #names = new Map<string, string>();
  /** Real time of the last start request per tenant and content type. */
  #starts = new Map<string, number>();
  #graphLimit: RateLimitSpec | undefined;
  #faults: { fault: Fault; left: number }[] = [];
  #subscriptions = new Map<string, "enabled" | "disabled">();
  #windows = new Map<string, number[]>();
  #now: () => number;
  #dateSkewMs: number;

  constructor(readonly options: EmulatorOptions) {
    this.#now = options.now ?? (() => Date.now());
    this.#dateSkewMs = options.dateSkewMs ?? 0;
    this.#graphLimit = options.graphLimit;
    for (const t of options.tenants) {
      this.#data.set(t.tenantId, seedTenant(t.tenantId, options.seed));
      this.#names.set(t.tenantId.toLowerCase(), t.tenantId);
      this.#names.set(this.guidOf(t.tenantId), t.tenantId);
    }
    for (const f of options.faults ?? []) this.inject(f);
  }

  /** Starts listening on 127.0.0.1 and a free port. */
  start(port = 0): Promise<void> {
    return new Promise((resolve) => {
      this.#server = Deno.serve(
        { hostname: "127.0.0.1", port, onListen: () => resolve() },
        (req) => this.#handle(req),
      );
    });
  }

  get url(): string {
    const addr = this.#server?.addr as Deno.NetAddr | undefined;
    if (!addr) throw new Error("emulator not started");
    return `http://127.0.0.1:${addr.port}`;
  }

  async stop(): Promise<void> {
    await this.#server?.shutdown();
  }

  now(): number {
    return this.#now();
  }

  setNow(now: () => number): void {
    this.#now = now;
  }

  /** Makes the `Date` header of later answers `ms` off the emulator's clock. */
  setDateSkew(ms: number): void {
    this.#dateSkewMs = ms;
  }

  /** The access tokens issued so far (tests check none of them leaks). */
  issuedTokens(): string[] {
    return [...this.#tokens.keys()];
  }

  /** The scopes of the access tokens issued so far, in order (one per token). */
  issuedScopes(): string[] {
    return [...this.#tokens.values()].map((t) => `${t.resource}/.default`);
  }

  /** Faults injected but not used up yet. */
  pendingFaults(): number {
    return this.#faults.reduce((n, f) => n + f.left, 0);
  }

  inject(fault: Fault): void {
    this.#faults.push({ fault, left: fault.times ?? 1 });
  }

  /** An admin disabled the subscription of a content type. */
  disableSubscription(tenant: string, contentType: string): void {
    this.#subscriptions.set(`${tenant}|${contentType}`, "disabled");
  }

  /** The GUID of a tenant (given by its name or GUID). */
  guidOf(tenant: string): string {
    const t = this.options.tenants.find((x) =>
      x.tenantId.toLowerCase() === tenant.toLowerCase() || x.guid?.toLowerCase() === tenant
    );
    if (!t) throw new Error(`no tenant ${tenant}`);
    if (t.guid) return t.guid.toLowerCase();
    if (GUID.test(t.tenantId)) return t.tenantId.toLowerCase();
    return derivedGuid(t.tenantId);
  }

  /** Changes the combined Graph limit per tenant (both API versions) from now on. */
  setGraphLimit(limit: RateLimitSpec | undefined): void {
    this.#graphLimit = limit;
  }

  /** The seeded records of a tenant, for tests to compare against. */
  data(tenant: string): SeedData {
    const d = this.#data.get(this.#names.get(tenant.toLowerCase()) ?? tenant);
    if (!d) throw new Error(`no tenant ${tenant}`);
    return d;
  }

  /** Throttling answers sent so far. */
  throttledCount(): number {
    return this.requests.filter((r) => r.status === 429 || r.status === 403).length;
  }

  async #handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const api = url.pathname.startsWith("/_admin")
      ? "admin"
      : /\/oauth2\/|openid-configuration/.test(url.pathname)
      ? "token"
      : /^\/(v1\.0|beta)\//.test(url.pathname)
      ? "graph"
      : /^\/(api|blobs)\//.test(url.pathname)
      ? "manage"
      : "other";
    const rec: RequestRecord = {
      method: req.method,
      path: url.pathname,
      url: url.pathname + url.search,
      api,
      at: Date.now(),
      status: 0,
      publisher: url.searchParams.get("PublisherIdentifier"),
      userAgent: req.headers.get("user-agent"),
    };
    if (api !== "admin") this.requests.push(rec);
    let res: Response;
    try {
      res = await this.#route(req, url, rec);
    } catch (e) {
      res = json(500, { error: { code: "InternalError", message: String(e) } });
    }
    rec.status = res.status;
    res.headers.set("Date", new Date(this.#now() + this.#dateSkewMs).toUTCString());
    return res;
  }

  #takeFault(path: string, applies: (f: Fault) => boolean): Fault | undefined {
    for (const f of this.#faults) {
      if (f.left > 0 && (!f.fault.match || path.includes(f.fault.match)) && applies(f.fault)) {
        f.left--;
        this.fired.push({ kind: f.fault.kind, match: f.fault.match, url: path });
        return f.fault;
      }
    }
    return undefined;
  }

  async #route(req: Request, url: URL, rec: RequestRecord): Promise<Response> {
    const p = url.pathname;
    const api = rec.api;
    if (api === "admin") return await this.#admin(req, p);
    if (api === "token") {
      const fault = req.method === "POST"
        ? this.#takeFault(p, (f) => f.kind === "token-unavailable")
        : undefined;
      if (fault) {
        return json(503, {
          error: "temporarily_unavailable",
          error_description:
            "AADSTS90033: A transient error has occurred. Please try again. Trace ID: 0",
          error_codes: [90033],
        }, fault.retryAfter ? { "Retry-After": fault.retryAfter } : {});
      }
      return await this.#token(req, p);
    }
    if (api === "other") return json(404, { error: { code: "NotFound", message: p } });
    const auth = this.#tokens.get((req.headers.get("authorization") ?? "").replace(/^Bearer /, ""));
    if (!auth) {
      return json(401, {
        error: { code: "InvalidAuthenticationToken", message: "Access token is empty or invalid." },
      });
    }
    if (auth.expired) return tokenExpired();
    const fault = this.#takeFault(
      p + url.search,
      (f) =>
        f.kind === "token-unavailable"
          ? false
          : f.kind === "expired-skiptoken"
          ? url.searchParams.has("$skiptoken")
          // Without a `match`, a token expires mid-paging: on a page after the first.
          : f.kind === "token-expired"
          ? !!f.match || url.searchParams.has("$skiptoken")
          : f.kind === "expired-content"
          ? p.startsWith("/blobs/")
          : true,
    );
    if (fault) {
      const r = await this.#fault(fault, req, rec);
      if (r) return r;
    }
    if (!this.#admit(auth.tenant, api)) {
      const spec = api === "graph" ? this.#graphLimit : this.options.manageLimit;
      return json(429, {
        error: {
          code: api === "graph" ? "TooManyRequests" : "AF429",
          message: "Too many requests.",
        },
      }, {
        "Retry-After": String(Math.max(1, Math.ceil((spec?.unitMs ?? 1000) / 10_000))),
      });
    }
    // A token is for one API resource: the origin it was asked for must be the one called
    // (tests give Graph and the Management API different origins of this one server).
    const origin = `${url.protocol}//${req.headers.get("host") ?? url.host}`;
    if (auth.resource !== origin) {
      return json(401, {
        error: {
          code: api === "graph" ? "InvalidAuthenticationToken" : "AF10001",
          message: `wrong audience: the token is for ${auth.resource}, not ${origin}`,
        },
      });
    }
    if (api === "graph") return this.#graph(url, auth.tenant, origin);
    return this.#manage(req, url, auth.tenant, origin);
  }

  /**
   * Sliding-window throttling per tenant and API, on real time. Graph counts v1.0 and beta
   * requests of a tenant together, as Microsoft throttles `auditLogs` per app and tenant.
   */
  #admit(tenant: string, api: string): boolean {
    const spec = api === "graph" ? this.#graphLimit : this.options.manageLimit;
    if (!spec) return true;
    const key = `${tenant}|${api}`;
    const now = performance.now();
    const w = (this.#windows.get(key) ?? []).filter((t) => t > now - spec.unitMs);
    if (w.length >= spec.limit) {
      this.#windows.set(key, w);
      return false;
    }
    w.push(now);
    this.#windows.set(key, w);
    return true;
  }

  async #fault(f: Fault, req: Request, rec: RequestRecord): Promise<Response | undefined> {
    switch (f.kind) {
      case "429":
        return json(429, { error: { code: "TooManyRequests", message: "Too many requests." } }, {
          "Retry-After": f.retryAfter ?? "1",
        });
      case "429-no-retry-after":
        return json(429, { error: { code: "TooManyRequests", message: "Too many requests." } });
      case "af429-403":
        return json(403, {
          error: {
            code: "AF429",
            message:
              "Too many requests. Method=GetBlob, PublisherId=00000000-0000-0000-0000-000000000000",
          },
        });
      case "500":
        return json(503, { error: { code: "ServiceUnavailable", message: "try later" } });
      case "drop": {
        const body = new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(new TextEncoder().encode('{"value": [{"id": "x'));
            c.error(new Error("connection dropped"));
          },
        });
        return new Response(body, { status: 200, headers: { "content-type": "application/json" } });
      }
      case "slow":
        await new Promise<void>((resolve) => {
          // Deno also aborts the signal once an answer was sent: listen only while waiting.
          const onAbort = () => {
            clearTimeout(t);
            rec.aborted = true;
            resolve();
          };
          const t = setTimeout(() => {
            req.signal.removeEventListener("abort", onAbort);
            resolve();
          }, f.delayMs ?? 2000);
          req.signal.addEventListener("abort", onAbort, { once: true });
        });
        if (rec.aborted) return new Response(null, { status: 499 });
        return undefined;
      case "malformed":
        return new Response('{"value": [ {"id": ', {
          status: 200,
          headers: { "content-type": "application/json" },
        });
      case "expired-skiptoken":
        return json(400, {
          error: {
            code: "Directory_ExpiredPageToken",
            message: "DirectoryPageTokenNotFoundException: the page token has expired",
          },
        });
      case "tenant-not-found": {
        const tenant = rec.path.split("/")[3] ?? "";
        return json(400, {
          error: {
            code: `StartSubscription [TenantId=${tenant}] failed. Exception`,
            message:
              `Microsoft.Office.Compliance.Audit.DataServiceException: Tenant ${tenant} does not exist.\r\n   at Microsoft.Office.Compliance.Audit.API.AzureManager.GetSubscriptionTableClientForTenant(Guid tenantID)`,
          },
        });
      }
      case "token-expired":
        for (const t of this.#tokens.values()) t.expired = true;
        return tokenExpired();
      case "token-unavailable":
        return undefined; // the token endpoint's fault, taken there
      case "expired-content":
        return json(400, {
          error: {
            code: "AF20051",
            message: "Content requested with the key has already expired.",
          },
        });
    }
  }

  async #admin(req: Request, p: string): Promise<Response> {
    if (p === "/_admin/requests") {
      if (req.method === "DELETE") this.requests.length = 0;
      return json(200, this.requests);
    }
    if (p === "/_admin/faults" && req.method === "POST") {
      const faults = await req.json() as Fault[];
      for (const f of Array.isArray(faults) ? faults : [faults]) this.inject(f);
      return json(200, { faults: this.#faults.filter((f) => f.left > 0).length });
    }
    if (p === "/_admin/now" && req.method === "POST") {
      const { now } = await req.json() as { now: number | string };
      const t = typeof now === "number" ? now : Date.parse(now);
      this.#now = () => t;
      return json(200, { now: new Date(t).toISOString() });
    }
    if (p === "/_admin/skew" && req.method === "POST") {
      const { minutes } = await req.json() as { minutes: number };
      this.setDateSkew(Number(minutes) * 60_000);
      return json(200, { skewMinutes: Number(minutes) });
    }
    if (p === "/_admin/subscriptions/disable" && req.method === "POST") {
      const { tenant, contentType } = await req.json() as { tenant: string; contentType: string };
      this.disableSubscription(tenant, contentType);
      return json(200, {});
    }
    return json(404, { error: { code: "NotFound", message: p } });
  }

  async #token(req: Request, p: string): Promise<Response> {
    const m = /^\/([^/]+)\/(v2\.0\/)?\.well-known\/openid-configuration$/.exec(p);
    if (m) {
      const name = this.#names.get(m[1]!.toLowerCase());
      if (!name) {
        return json(400, {
          error: "invalid_tenant",
          error_description: `AADSTS90002: Tenant '${m[1]}' not found.`,
        });
      }
      return json(200, openIdConfiguration(this.url, this.guidOf(name)));
    }
    const t = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(p);
    if (!t || req.method !== "POST") return json(404, { error: "not_found" });
    const form = new URLSearchParams(await req.text());
    const name = this.#names.get(t[1]!.toLowerCase());
    const tenant = this.options.tenants.find((x) => x.tenantId === name);
    if (!tenant) {
      return json(400, {
        error: "invalid_request",
        error_description: `AADSTS90002: Tenant '${t[1]}' not found.`,
      });
    }
    if (form.get("client_id") !== tenant.clientId || form.get("client_secret") !== tenant.secret) {
      return json(401, {
        error: "invalid_client",
        error_description: "AADSTS7000215: Invalid client secret provided.",
      });
    }
    const scope = form.get("scope") ?? "";
    const resource = scope.split(" ").find((s) => s.endsWith("/.default"))?.replace(
      /\/\.default$/,
      "",
    );
    if (!resource) {
      return json(400, {
        error: "invalid_scope",
        error_description: "AADSTS1002012: scope must end with /.default",
      });
    }
    // A JWT-shaped token whose payload names the tenant's GUID, as Entra ID's do.
    const token = this.options.opaqueTokens ? `emu.${crypto.randomUUID()}` : [
      { typ: "JWT", alg: "none" },
      { tid: this.guidOf(tenant.tenantId), aud: resource, appid: tenant.clientId },
    ].map((part) => base64url(JSON.stringify(part))).join(".") + `.${crypto.randomUUID()}`;
    this.#tokens.set(token, { tenant: tenant.tenantId, resource });
    return json(200, {
      token_type: "Bearer",
      expires_in: 3599,
      ext_expires_in: 3599,
      access_token: token,
    });
  }

  /** `base`: the origin the client called, which the links of the answer use. */
  #graph(url: URL, tenant: string, base: string): Response {
    const m = /^\/(v1\.0|beta)\/auditLogs\/(directoryAudits|signIns)$/.exec(url.pathname);
    if (!m) return json(404, { error: { code: "ResourceNotFound", message: url.pathname } });
    const [, version, kind] = m;
    const filter = url.searchParams.get("$filter") ?? "";
    const field = kind === "directoryAudits" ? "activityDateTime" : "createdDateTime";
    const f = new RegExp(
      `^(\\w+) ge (\\S+) and \\1 lt (\\S+)(?: and signInEventTypes/any\\(t: t eq '(\\w+)'\\))?$`,
    ).exec(filter);
    if (!f || f[1] !== field) {
      return json(400, {
        error: { code: "BadRequest", message: `Invalid filter clause: ${filter}` },
      });
    }
    const ge = Date.parse(f[2]!);
    const lt = Date.parse(f[3]!);
    const eventType = f[4];
    if (eventType && (version !== "beta" || kind !== "signIns")) {
      return json(400, {
        error: { code: "BadRequest", message: "Invalid filter clause: signInEventTypes" },
      });
    }
    const skip = url.searchParams.get("$skiptoken");
    const state = skip
      ? JSON.parse(atob(skip)) as { o: number; snap: number }
      : { o: 0, snap: this.#now() };
    const data = this.data(tenant);
    const source = kind === "directoryAudits" ? data.audits : data.signIns;
    const rows = source
      .filter((s) => s.time >= ge && s.time < lt && s.availableAt <= state.snap)
      .filter((s) => {
        const types = s.record.signInEventTypes as string[] | undefined;
        if (!types) return true;
        if (eventType) return types.includes(eventType);
        // v1.0 (and beta without the filter) returns interactive sign-ins only.
        return types.includes("interactiveUser");
      })
      .sort((a, b) => b.time - a.time);
    const top = Math.min(
      Number(url.searchParams.get("$top") ?? 1000),
      this.options.graphPageSize ?? 50,
    );
    const page = rows.slice(state.o, state.o + top).map((s) => s.record);
    const body: Record<string, unknown> = {
      "@odata.context": `${base}/${version}/$metadata#auditLogs/${kind}`,
      value: page,
    };
    if (state.o + top < rows.length) {
      const next = new URL(url);
      next.searchParams.set(
        "$skiptoken",
        btoa(JSON.stringify({ o: state.o + top, snap: state.snap })),
      );
      body["@odata.nextLink"] = base + next.pathname + next.search;
    }
    return json(200, body);
  }

  #manage(req: Request, url: URL, tenant: string, base: string): Response {
    const p = url.pathname;
    if (p.startsWith("/blobs/")) {
      const [, , t, contentId] = p.split("/");
      const blob = t === this.guidOf(tenant)
        ? this.data(tenant).blobs.find((b) => b.contentId === decodeURIComponent(contentId!))
        : undefined;
      if (!blob) {
        return json(400, {
          error: { code: "AF20050", message: "The content requested was not found." },
        });
      }
      if (blob.created < this.#now() - 7 * DAY) {
        return json(400, {
          error: {
            code: "AF20051",
            message: "Content requested with the key has already expired.",
          },
        });
      }
      return json(200, blob.records);
    }
    const m = /^\/api\/v1\.0\/([^/]+)\/activity\/feed\/subscriptions\/(start|stop|list|content)$/
      .exec(p);
    if (!m) return json(404, { error: { code: "AF10001", message: "Not found" } });
    if (m[1]!.toLowerCase() !== this.guidOf(tenant)) {
      return json(400, {
        error: {
          code: "AF20013",
          message: `The tenant ID passed in the URL (${
            m[1]
          }) does not match the tenant ID passed in the access token (${this.guidOf(tenant)}).`,
        },
      });
    }
    const op = m[2];
    const contentType = url.searchParams.get("contentType") ?? "";
    const key = `${tenant}|${contentType}`;
    if (op === "list") {
      return json(
        200,
        [...this.#subscriptions].filter(([k]) => k.startsWith(`${tenant}|`)).map(([k, status]) => ({
          contentType: k.split("|")[1],
          status,
          webhook: null,
        })),
      );
    }
    if (op === "start" || op === "stop") {
      if (req.method !== "POST") {
        return json(405, { error: { code: "AF10000", message: "POST only" } });
      }
      const status = this.#subscriptions.get(key);
      if (status === "disabled") {
        return json(400, {
          error: { code: "AF20023", message: "The subscription was disabled by an administrator." },
        });
      }
      if (op === "stop") {
        this.#subscriptions.delete(key);
        return new Response(null, { status: 204 });
      }
      const last = this.#starts.get(key);
      this.#starts.set(key, Date.now());
      if (last !== undefined && Date.now() - last < 15 * 60_000) {
        // Microsoft asks for 15 minutes between start requests; this is the emulator's answer.
        return json(403, {
          error: {
            code: "AF429",
            message:
              "Too many requests. Method=StartSubscription: wait 15 minutes between start requests.",
          },
        });
      }
      if (status === "enabled") {
        return json(400, {
          error: {
            code: "AF20024",
            message: "The subscription is already enabled. No property change.",
          },
        });
      }
      this.#subscriptions.set(key, "enabled");
      return json(200, { contentType, status: "enabled", webhook: null });
    }
    const status = this.#subscriptions.get(key);
    if (status === "disabled") {
      return json(400, {
        error: { code: "AF20023", message: "The subscription was disabled by an administrator." },
      });
    }
    if (status !== "enabled") {
      return json(400, {
        error: {
          code: "AF20022",
          message: "No subscription found for the specified content type.",
        },
      });
    }
    const start = url.searchParams.get("startTime");
    const end = url.searchParams.get("endTime");
    const now = this.#now();
    let from = now - DAY;
    let to = now;
    if (start || end) {
      if (!start || !end) {
        return json(400, {
          error: {
            code: "AF20055",
            message: "Start time and end time must both be specified (or both omitted).",
          },
        });
      }
      from = Date.parse(start.endsWith("Z") ? start : start + "Z");
      to = Date.parse(end.endsWith("Z") ? end : end + "Z");
      if (!(to > from) || to - from > DAY) {
        return json(400, {
          error: {
            code: "AF20055",
            message:
              "Start time and end time must both be specified, and be no more than 24 hours apart, with the start time prior to end time.",
          },
        });
      }
      if (from < now - 7 * DAY) {
        return json(400, {
          error: { code: "AF20055", message: "Start time cannot be more than 7 days in the past." },
        });
      }
    }
    const blobs = this.data(tenant).blobs.filter((b: Blob) =>
      b.contentType === contentType && b.created >= from && b.created < to && b.created <= now
    );
    const offset = Number(url.searchParams.get("nextPage") ?? 0);
    const size = this.options.contentPageSize ?? 20;
    const page = blobs.slice(offset, offset + size).map((b) => ({
      contentType: b.contentType,
      contentId: b.contentId,
      contentUri: `${base}/blobs/${this.guidOf(tenant)}/${encodeURIComponent(b.contentId)}`,
      contentCreated: new Date(b.created).toISOString(),
      contentExpiration: new Date(b.created + 7 * DAY).toISOString(),
    }));
    const headers: Record<string, string> = {};
    if (offset + size < blobs.length) {
      const next = new URL(url);
      next.searchParams.set("nextPage", String(offset + size));
      headers["NextPageUri"] = base + next.pathname + next.search;
    }
    return json(200, page, headers);
  }
}

function openIdConfiguration(base: string, tenant: string): Record<string, unknown> {
  return {
    token_endpoint: `${base}/${tenant}/oauth2/v2.0/token`,
    token_endpoint_auth_methods_supported: ["client_secret_post"],
    jwks_uri: `${base}/${tenant}/discovery/v2.0/keys`,
    response_modes_supported: ["query"],
    subject_types_supported: ["pairwise"],
    id_token_signing_alg_values_supported: ["RS256"],
    response_types_supported: ["code"],
    scopes_supported: ["openid"],
    issuer: `${base}/${tenant}/v2.0`,
    authorization_endpoint: `${base}/${tenant}/oauth2/v2.0/authorize`,
    end_session_endpoint: `${base}/${tenant}/oauth2/v2.0/logout`,
  };
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A GUID made from a name, the same every time. */
function derivedGuid(name: string): string {
  let hex = "";
  for (let seed = 0; hex.length < 32; seed++) {
    let h = 2166136261 ^ seed;
    for (const c of name.toLowerCase()) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
    hex += (h >>> 0).toString(16).padStart(8, "0");
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${
    hex.slice(20, 32)
  }`;
}

function base64url(text: string): string {
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function tokenExpired(): Response {
  return json(401, {
    error: {
      code: "InvalidAuthenticationToken",
      message: "Lifetime validation failed, the token is expired.",
    },
  });
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}
