/**
 * Fetches one hour of a Graph audit log (directory service: v1.0; cloud activity: beta with
 * the sign-in kind filter): every `@odata.nextLink` followed exactly as given, records
 * de-duplicated by `id`, and the window restarted when a skip token expired mid-way.
 */

import { CloudRequestError, type CloudResponse, errorMessage } from "./cloud_request.ts";
import { type GraphLogType, logTypeOf } from "./families.ts";
import type { LogRecord } from "./hour_store.ts";
import type { LogSpec } from "./log_list.ts";
import type { ApiClient } from "./api_client.ts";

const MAX_RESTARTS = 3;

/** The first URL of an hour's window for `log`. */
export function graphWindowUrl(graphHost: string, log: LogSpec, from: number, to: number): string {
  const spec = graphType(log);
  const field = spec.timeField;
  let filter = `${field} ge ${iso(from)} and ${field} lt ${iso(to)}`;
  const kind = spec.signInEventType;
  if (kind) filter += ` and signInEventTypes/any(t: t eq '${kind}')`;
  const params = new URLSearchParams({ $filter: filter });
  if (spec.pageSize) params.set("$top", String(spec.pageSize));
  return `${graphHost}/${spec.version}/${spec.path}?${params}`;
}

/** The Graph API entry of a log's type. */
function graphType(log: LogSpec): GraphLogType {
  const spec = logTypeOf(log);
  if (spec.api !== "graph") throw new Error(`log '${log.uriName}' is not served by the Graph API`);
  return spec;
}

/** All records of [from, to) of a Graph log. */
export async function fetchGraphWindow(
  client: ApiClient,
  log: LogSpec,
  from: number,
  to: number,
): Promise<LogRecord[]> {
  const { idField } = graphType(log);
  for (let restart = 0;; restart++) {
    const byId = new Map<string, LogRecord>();
    let url: string | undefined = graphWindowUrl(client.hosts.graph, log, from, to);
    let expired = false;
    while (url) {
      const res: CloudResponse = await client.get("graph", url);
      if (res.status !== 200) {
        if (isExpiredPageToken(res) && restart < MAX_RESTARTS) {
          expired = true;
          break;
        }
        throw new CloudRequestError(
          `${log.uriName} ${iso(from)}: the Graph API refused the request: ${errorMessage(res)}`,
          res.status,
        );
      }
      const body = res.body as { value?: unknown; "@odata.nextLink"?: unknown };
      if (!Array.isArray(body?.value)) {
        throw new CloudRequestError(`${log.uriName} ${iso(from)}: the answer has no 'value' list`);
      }
      for (const r of body.value as LogRecord[]) byId.set(String(r[idField]), r);
      const next = body["@odata.nextLink"];
      url = typeof next === "string" ? next : undefined;
    }
    if (!expired) return [...byId.values()];
  }
}

function isExpiredPageToken(res: CloudResponse): boolean {
  return res.status === 400 && /PageToken|ExpiredPageToken|skiptoken/i.test(res.text);
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, "Z");
}
