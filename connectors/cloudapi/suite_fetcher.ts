/**
 * Fetches Management Activity API content: subscriptions started automatically (AF20024 means
 * already enabled; AF20023, disabled by an admin, is reported plainly), content listed by
 * `contentCreated` in windows of at most 24 hours and never more than 167 h 55 min back, every
 * `NextPageUri` followed, every blob fetched, `PublisherIdentifier` on every call.
 */

import { CloudRequestError, type CloudResponse, errorCode, errorMessage } from "./cloud_request.ts";
import { logTypeOf, type SuiteLogType } from "./families.ts";
import type { LogRecord } from "./hour_store.ts";
import type { LogSpec } from "./log_list.ts";
import type { ApiClient } from "./api_client.ts";

const DAY = 86_400_000;
/** How far back content may be listed: 7 days less 5 minutes for clock skew. */
export const SUITE_MAX_AGE_MS = 167 * 3_600_000 + 55 * 60_000;

/** `url` with PublisherIdentifier added (every call needs it, or throttling is shared). */
export function withPublisher(url: string, tenantId: string): string {
  const u = new URL(url);
  if (!u.searchParams.has("PublisherIdentifier")) {
    u.searchParams.set("PublisherIdentifier", tenantId);
  }
  return u.toString();
}

function feed(client: ApiClient): string {
  return `${client.hosts.manage}/api/v1.0/${encodeURIComponent(client.tenantId)}/activity/feed`;
}

/** Starts the subscription of the log's content type; already enabled counts as success. */
export async function ensureSubscription(client: ApiClient, log: LogSpec): Promise<void> {
  const { contentType } = suiteType(log);
  const url = withPublisher(
    `${feed(client)}/subscriptions/start?contentType=${contentType}`,
    client.tenantId,
  );
  const res = await client.post("manage", url);
  const code = errorCode(res.body);
  if (res.status < 300 || code === "AF20024") return;
  if (code === "AF20023") {
    throw new CloudRequestError(
      `datastore '${client.store}': the subscription to ${contentType} (log '${log.uriName}') was disabled by an administrator of the tenant; re-enable it there`,
      res.status,
      code,
    );
  }
  throw new CloudRequestError(
    `datastore '${client.store}': could not start the subscription to ${contentType}: ${
      errorMessage(res)
    }${tenantHint(res)}`,
    res.status,
    code,
  );
}

/** Records of all content created in [from, to), de-duplicated by `Id`. */
export async function fetchSuiteContent(
  client: ApiClient,
  log: LogSpec,
  from: number,
  to: number,
): Promise<LogRecord[]> {
  const { contentType, idField } = suiteType(log);
  const oldest = client.now() - SUITE_MAX_AGE_MS;
  if (from < oldest) {
    client.onWarning({
      level: "WARN",
      message:
        `datastore '${client.store}', log '${log.uriName}': content older than 7 days cannot be listed; fetching from ${
          new Date(oldest).toISOString()
        }`,
    });
    from = oldest;
  }
  const byId = new Map<string, LogRecord>();
  await ensureSubscription(client, log);
  for (let start = from; start < to; start += DAY) {
    const end = Math.min(to, start + DAY);
    let url: string | undefined = withPublisher(
      `${feed(client)}/subscriptions/content?contentType=${contentType}&startTime=${
        iso(start)
      }&endTime=${iso(end)}`,
      client.tenantId,
    );
    while (url) {
      const res = await client.get("manage", url);
      if (res.status !== 200 || !Array.isArray(res.body)) {
        throw new CloudRequestError(
          `datastore '${client.store}', log '${log.uriName}': listing ${contentType} content failed: ${
            errorMessage(res)
          }${tenantHint(res)}`,
          res.status,
          errorCode(res.body),
        );
      }
      for (const blob of res.body as { contentUri?: string; contentId?: string }[]) {
        if (typeof blob.contentUri !== "string") continue;
        for (const r of await fetchBlob(client, log, blob.contentUri)) {
          byId.set(String(r[idField]), r);
        }
      }
      const next = res.headers.get("NextPageUri") ?? res.headers.get("NextPageUrl");
      url = next ? withPublisher(next, client.tenantId) : undefined;
    }
  }
  return [...byId.values()];
}

async function fetchBlob(client: ApiClient, log: LogSpec, uri: string): Promise<LogRecord[]> {
  const res = await client.get("manage", withPublisher(uri, client.tenantId));
  if (res.status === 200 && Array.isArray(res.body)) return res.body as LogRecord[];
  const code = errorCode(res.body);
  if (code === "AF20051" || code === "AF20050") {
    client.onWarning({
      level: "WARN",
      message: `datastore '${client.store}', log '${log.uriName}': skipped a content blob: ${
        errorMessage(res)
      }`,
    });
    return [];
  }
  throw new CloudRequestError(
    `datastore '${client.store}', log '${log.uriName}': fetching a content blob failed: ${
      errorMessage(res)
    }`,
    res.status,
    code,
  );
}

/**
 * The Management Activity API answers "Tenant <id> does not exist" (buried in an exception
 * text) for a tenant it has no audit store for: almost always because unified audit logging was
 * never turned on there.
 */
function tenantHint(res: CloudResponse): string {
  return /Tenant \S+ does not exist/i.test(res.text)
    ? "; the tenant probably has unified audit logging turned off: turn it on in the Microsoft Purview portal (Audit), then allow up to a day before content appears"
    : "";
}

/** Epoch ms of a suite record's `CreationTime` (UTC, often written without a zone). */
export function creationTime(r: LogRecord): number {
  const t = String(r.CreationTime ?? "");
  return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(t) ? t : t + "Z");
}

function iso(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

/** The Management Activity API entry of a suite log's type. */
function suiteType(log: LogSpec): SuiteLogType {
  const spec = logTypeOf(log);
  if (spec.api !== "suite") throw new Error(`log '${log.uriName}' is not served by the suite API`);
  return spec;
}
