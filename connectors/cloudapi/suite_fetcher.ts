/**
 * Fetches Management Activity API content: subscriptions listed and started only when not
 * enabled, and remembered (Microsoft asks for 15 minutes between start requests; AF20024 means
 * already enabled; AF20023, disabled by an admin, is reported plainly), content listed by
 * `contentCreated` in windows of at most 24 hours and never more than 167 h 55 min back, every
 * `NextPageUri` followed, every blob fetched, `PublisherIdentifier` (a tenant GUID) on every
 * call, the tenant's GUID in every URL. A blob that cannot be read is a warning, never silent.
 */

import { CloudRequestError, type CloudResponse, errorCode, errorMessage } from "./cloud_request.ts";
import { logTypeOf, type SuiteLogType } from "./families.ts";
import type { LogRecord } from "./hour_store.ts";
import type { LogSpec } from "./log_list.ts";
import type { ApiClient } from "./api_client.ts";
import { START_INTERVAL_MS, subscriptionKey, type SubscriptionMemory } from "./subscriptions.ts";

const DAY = 86_400_000;
/** How far back content may be listed: 7 days less 5 minutes for clock skew. */
export const SUITE_MAX_AGE_MS = 167 * 3_600_000 + 55 * 60_000;

/** `url` with PublisherIdentifier added (every call needs it, or throttling is shared). */
export function withPublisher(url: string, publisher: string): string {
  const u = new URL(url);
  if (!u.searchParams.has("PublisherIdentifier")) {
    u.searchParams.set("PublisherIdentifier", publisher);
  }
  return u.toString();
}

function feed(client: ApiClient): string {
  return `${client.hosts.manage}/api/v1.0/${encodeURIComponent(client.tenantId)}/activity/feed`;
}

/**
 * Makes sure the subscription of the log's content type is enabled: known enabled (memory),
 * listed enabled, or started now. Starts at most once per 15 minutes per content type.
 */
export async function ensureSubscription(
  client: ApiClient,
  log: LogSpec,
  memory: SubscriptionMemory,
): Promise<void> {
  const { contentType } = suiteType(log);
  const key = subscriptionKey(client.store, client.tenantId, contentType);
  if (memory.enabled(key)) return;
  const listed = await client.get(
    "manage",
    withPublisher(`${feed(client)}/subscriptions/list`, client.publisher),
  );
  if (listed.status === 200 && Array.isArray(listed.body)) {
    const mine = (listed.body as { contentType?: string; status?: string }[])
      .find((x) => x.contentType === contentType);
    if (mine?.status === "enabled") return memory.remember(key);
    if (mine?.status === "disabled") throw disabled(client, log, contentType, listed);
  }
  const last = memory.lastStart(key);
  if (last !== undefined && Date.now() - last.at < START_INTERVAL_MS) {
    // Microsoft asks for 15 minutes between start requests: say what the last one met instead.
    throw new CloudRequestError(
      last.failure ??
        `datastore '${client.store}': the subscription to ${contentType} (log '${log.uriName}') is not enabled, and it was started less than 15 minutes ago; Microsoft asks for 15 minutes between start requests`,
    );
  }
  memory.started(key, Date.now());
  const res = await client.post(
    "manage",
    withPublisher(
      `${feed(client)}/subscriptions/start?contentType=${contentType}`,
      client.publisher,
    ),
  );
  const code = errorCode(res.body);
  if (res.status < 300 || code === "AF20024") return memory.remember(key);
  const failure = code === "AF20023"
    ? disabled(client, log, contentType, res)
    : new CloudRequestError(
      `datastore '${client.store}': could not start the subscription to ${contentType}: ${
        errorMessage(res)
      }${tenantHint(res)}`,
      res.status,
      code,
    );
  memory.started(key, Date.now(), failure.message);
  throw failure;
}

function disabled(
  client: ApiClient,
  log: LogSpec,
  contentType: string,
  res: CloudResponse,
): CloudRequestError {
  return new CloudRequestError(
    `datastore '${client.store}': the subscription to ${contentType} (log '${log.uriName}') was disabled by an administrator of the tenant; re-enable it there`,
    res.status,
    "AF20023",
  );
}

/** Records of all content created in [from, to), de-duplicated by `Id`. */
export async function fetchSuiteContent(
  client: ApiClient,
  log: LogSpec,
  from: number,
  to: number,
  memory: SubscriptionMemory,
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
  await ensureSubscription(client, log, memory);
  let restarted = false;
  for (let start = from; start < to; start += DAY) {
    const end = Math.min(to, start + DAY);
    let url: string | undefined = withPublisher(
      `${feed(client)}/subscriptions/content?contentType=${contentType}&startTime=${
        iso(start)
      }&endTime=${iso(end)}`,
      client.publisher,
    );
    while (url) {
      const res = await client.get("manage", url);
      if (errorCode(res.body) === "AF20022" && !restarted) {
        // The subscription was stopped since it was remembered: start it again, once.
        restarted = true;
        memory.forget(subscriptionKey(client.store, client.tenantId, contentType));
        await ensureSubscription(client, log, memory);
        continue;
      }
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
        if (typeof blob?.contentUri !== "string") {
          client.onLost(1);
          client.onWarning({
            level: "WARN",
            message: `datastore '${client.store}', log '${log.uriName}': lost a content blob ${
              JSON.stringify(blob?.contentId ?? "?")
            }: the listing gives it no contentUri`,
          });
          continue;
        }
        for (const r of await fetchBlob(client, log, blob.contentUri)) {
          byId.set(String(r[idField]), r);
        }
      }
      const next = res.headers.get("NextPageUri") ?? res.headers.get("NextPageUrl");
      url = next ? withPublisher(next, client.publisher) : undefined;
    }
  }
  return [...byId.values()];
}

async function fetchBlob(client: ApiClient, log: LogSpec, uri: string): Promise<LogRecord[]> {
  const res = await client.get("manage", withPublisher(uri, client.publisher));
  if (res.status === 200 && Array.isArray(res.body)) return res.body as LogRecord[];
  const code = errorCode(res.body);
  if (code === "AF20051" || code === "AF20050") {
    client.onLost(1);
    client.onWarning({
      level: "WARN",
      message: `datastore '${client.store}', log '${log.uriName}': lost a content blob: ${
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
