/**
 * "Test connection" for a `cloudapi://` definition (`POST /datastores/<name>/test`): a token
 * for each API the definition uses, then one cheap read per enabled family (the first log's
 * last minute, one record, from Graph; the subscription list from the Management Activity
 * API). Each family answers ok or what went wrong; no secret or token is ever in a message.
 */

import type { CloudApiDefinition } from "./definition.ts";
import { FAMILIES, type Family, logTypeOf } from "./families.ts";
import { graphWindowUrl } from "./graph_fetcher.ts";
import { type HostOverrides, hostsFor } from "./hosts.ts";
import { withPublisher } from "./suite_fetcher.ts";
import type { TokenProvider } from "./token_provider.ts";
import { hideSecrets } from "../secret_text.ts";

export interface FamilyCheck {
  readonly family: Family;
  readonly ok: boolean;
  readonly message: string;
}

export async function checkConnection(
  def: CloudApiDefinition,
  deps: {
    readonly tokens: TokenProvider;
    readonly hosts?: HostOverrides | undefined;
    /** `cloudapi.publisherIdentifier`; the tenant's GUID when absent. */
    readonly publisher?: string | undefined;
    readonly now?: () => number;
  },
): Promise<FamilyCheck[]> {
  const hosts = hostsFor(def.suitePlan, deps.hosts);
  const timeoutMs = def.connectTimeoutMs + def.readTimeoutMs;
  const request = {
    store: def.name,
    tenantId: def.tenantId,
    clientId: def.clientId,
    secret: def.secret,
    hosts,
    userAgent: def.userAgent,
    timeoutMs,
  };
  const tokens = new Map<"graph" | "manage", Promise<string>>();
  const token = (api: "graph" | "manage") => {
    let t = tokens.get(api);
    if (!t) {
      t = deps.tokens.token(request, api);
      tokens.set(api, t);
    }
    return t;
  };
  const now = (deps.now ?? Date.now)();
  const hide = (text: string) => hideSecrets(text, [def.secret]);
  const families = FAMILIES.filter((f) => def.logs.some((l) => l.family === f));
  return await Promise.all(families.map(async (family): Promise<FamilyCheck> => {
    const log = def.logs.find((l) => l.family === family)!;
    const api = logTypeOf(log).api === "graph" ? "graph" : "manage";
    const where = api === "graph" ? new URL(hosts.graph).origin : new URL(hosts.manage).origin;
    try {
      const bearer = await token(api);
      // The Management Activity API wants the tenant's GUID, never a domain (as the connector).
      const guid = api === "manage" ? await deps.tokens.tenantGuid(request, "manage") : undefined;
      if (api === "manage" && !guid) {
        return {
          family,
          ok: false,
          message:
            `could not find the tenant id (a GUID) of '${def.tenantId}'; the Management Activity API needs it: give the GUID as 'tenantId'`,
        };
      }
      const url = api === "graph"
        ? withTop(graphWindowUrl(hosts.graph, log, now - 60_000, now))
        : withPublisher(
          `${hosts.manage}/api/v1.0/${guid}/activity/feed/subscriptions/list`,
          deps.publisher ?? guid!,
        );
      const res = await fetch(url, {
        headers: { Authorization: `Bearer ${bearer}`, "User-Agent": def.userAgent },
        signal: timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : null,
      });
      const text = await res.text();
      if (!res.ok) {
        return {
          family,
          ok: false,
          message: hide(`${where} answered ${res.status}: ${text.slice(0, 200)}`),
        };
      }
      return { family, ok: true, message: `token and one read from ${where} (${log.uriName})` };
    } catch (e) {
      return { family, ok: false, message: hide((e as Error).message) };
    }
  }));
}

function withTop(url: string): string {
  const u = new URL(url);
  u.searchParams.set("$top", "1");
  return u.toString();
}
