/**
 * What the fetchers need of the outside world: authenticated, paced requests to one tenant's
 * APIs. Built per query by the datastore from the definition, the token provider and the
 * connector actors.
 */

import { cloudRequest, type CloudResponse, type RequestContext } from "./cloud_request.ts";
import type { CloudHosts } from "./hosts.ts";
import type { Warning } from "../../engine/contracts/datastore.ts";

export interface ApiClient {
  readonly store: string;
  /** The tenant as the URLs need it: its GUID for the Management Activity API. */
  readonly tenantId: string;
  /** The `PublisherIdentifier` of Management Activity API calls: a tenant GUID. */
  readonly publisher: string;
  readonly hosts: CloudHosts;
  readonly now: () => number;
  readonly onWarning: (w: Warning) => void;
  /** Counts what was given up (content blobs); each is also said in a warning. */
  readonly onLost: (count: number) => void;
  get(api: "graph" | "manage", url: string): Promise<CloudResponse>;
  post(api: "graph" | "manage", url: string): Promise<CloudResponse>;
}

/**
 * A client whose requests go through `contexts[api]` with a bearer token of `token(api)`. A 401
 * (the token expired while a long window was paged) gets a fresh token and the same request
 * again, once.
 */
export function createApiClient(options: {
  store: string;
  tenantId: string;
  publisher?: string;
  hosts: CloudHosts;
  now: () => number;
  onWarning: (w: Warning) => void;
  onLost?: (count: number) => void;
  token: (api: "graph" | "manage", fresh: boolean) => Promise<string>;
  context: (api: "graph" | "manage") => RequestContext;
}): ApiClient {
  const send = async (method: "GET" | "POST", api: "graph" | "manage", url: string) => {
    for (let fresh = false;; fresh = true) {
      const token = await options.token(api, fresh);
      const res = await cloudRequest(options.context(api), {
        method,
        url,
        headers: { Authorization: `Bearer ${token}` },
        body: method === "POST" ? "" : undefined,
      });
      if (res.status !== 401 || fresh) return res;
    }
  };
  return {
    store: options.store,
    tenantId: options.tenantId,
    publisher: options.publisher ?? options.tenantId,
    hosts: options.hosts,
    now: options.now,
    onWarning: options.onWarning,
    onLost: options.onLost ?? (() => {}),
    get: (api, url) => send("GET", api, url),
    post: (api, url) => send("POST", api, url),
  };
}
