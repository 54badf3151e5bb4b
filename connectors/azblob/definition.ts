/**
 * The `azblob://` datastore definition, `/system/datastores/<store>.json`:
 *
 *   {"type": "AZBLOB", "azblobStore": {"accountName": "contosoarchive",
 *     "accountKey": "<base64>",  (or "sasToken": "sv=...&sig=...")
 *     "container": "insights-logs-signinlogs",  (optional: else the URI's first segment)
 *     "acl": {"users": {"bob": ["read", "list"]}}}}
 *
 * A wrong definition yields messages that name each key and what is allowed, and never the
 * account key or the SAS token (not even one pasted under the wrong key).
 */

import { z } from "zod";
import { NOT_WHOLE_MILLIS, parseInterval } from "../../engine/values/interval.ts";
import { isValidZone } from "../../engine/values/time.ts";
import { type StoreAcl, storeAclSchema } from "../store_acl.ts";
import { hideSecrets } from "../secret_text.ts";

export interface AzblobDefinition {
  readonly name: string;
  /** The blob service's URL without a trailing `/`: `https://<account>.blob.core.windows.net`. */
  readonly endpoint: string;
  readonly accountName: string;
  /** Exactly one of the two is set. */
  readonly accountKey?: string | undefined;
  /** Without the leading `?`. */
  readonly sasToken?: string | undefined;
  /** Undefined: the first segment of a URI's path names the container. */
  readonly container?: string | undefined;
  /** The zone of the time fields of blob names (Azure writes its archives in UTC). */
  readonly timeZone: string;
  readonly connectTimeoutMs: number;
  readonly readTimeoutMs: number;
  readonly maxErrorRetries: number;
  readonly acl?: StoreAcl | undefined;
}

/** Keys whose values no message may show. */
export const AZBLOB_SECRET_KEYS = ["accountKey", "sasToken"] as const;

const ACCOUNT = /^[a-z0-9]{3,24}$/;
/** Container names (3-63 lower-case letters, digits, single dashes) and the special `$logs`. */
export const CONTAINER = /^(?:[a-z0-9](?:[a-z0-9]|-(?!-)){1,61}[a-z0-9]|\$root|\$logs)$/;

const storeSchema = z.object({
  endpoint: z.string().optional(),
  accountName: z.string().regex(ACCOUNT, "expected 3 to 24 lower-case letters and digits"),
  accountKey: z.string().min(1, "must not be empty").optional(),
  sasToken: z.string().min(1, "must not be empty").optional(),
  container: z.string().regex(
    CONTAINER,
    "expected a container name: 3 to 63 lower-case " +
      "letters, digits and single dashes",
  ).optional(),
  timeZone: z.string().default("UTC"),
  connectTimeout: z.union([z.string(), z.number().int().nonnegative()]).default("10 s"),
  readTimeout: z.union([z.string(), z.number().int().nonnegative()]).default("60 s"),
  maxErrorRetries: z.number().int().nonnegative().default(3),
  acl: storeAclSchema.optional(),
}).strict();

const SHAPE = `{"type": "AZBLOB", "azblobStore": {"accountName", "accountKey" | "sasToken", ...}}`;

export type AzblobDefinitionResult =
  | { readonly ok: true; readonly definition: AzblobDefinition }
  | { readonly ok: false; readonly problems: string[] };

/**
 * Validates the parsed definition file of the store `name`; every problem is listed, each
 * naming its key, and the credentials are hidden wherever they show up.
 */
export function parseAzblobDefinition(name: string, json: unknown): AzblobDefinitionResult {
  const result = checkDefinition(name, json);
  if (result.ok) return result;
  const store = (json as { azblobStore?: Record<string, unknown> } | null)?.azblobStore;
  const secrets = AZBLOB_SECRET_KEYS.map((k) => store?.[k])
    .filter((v): v is string => typeof v === "string");
  return { ok: false, problems: result.problems.map((p) => hideSecrets(p, secrets)) };
}

function checkDefinition(name: string, json: unknown): AzblobDefinitionResult {
  const where = `datastore '${name}'`;
  const top = z.object({ type: z.literal("AZBLOB"), azblobStore: z.unknown() }).strict()
    .safeParse(json);
  if (!top.success) {
    return { ok: false, problems: [`${where}: the definition must be ${SHAPE}`] };
  }
  const raw = top.data.azblobStore;
  const problems: string[] = [];
  const has = (key: string) =>
    typeof raw === "object" && raw !== null && (raw as Record<string, unknown>)[key] !== undefined;
  if (has("accountKey") === has("sasToken")) {
    problems.push(
      `keys 'accountKey' and 'sasToken': give exactly one (the storage account's access key, ` +
        `or a SAS token with the read and list permissions)`,
    );
  }
  const parsed = storeSchema.safeParse(raw);
  if (!parsed.success) {
    problems.push(...parsed.error.issues.map(describeIssue));
    return { ok: false, problems: problems.map((p) => `${where}: ${p}`) };
  }
  const s = parsed.data;
  let accountKey = s.accountKey;
  if (accountKey !== undefined) {
    try {
      if (Uint8Array.fromBase64(accountKey).length === 0) throw new SyntaxError();
    } catch {
      problems.push(`key 'accountKey' is not a base64 account key (its value is not shown)`);
      accountKey = undefined;
    }
  }
  const sasToken = s.sasToken?.replace(/^\?/, "");
  if (sasToken !== undefined && !new URLSearchParams(sasToken).has("sig")) {
    problems.push(
      `key 'sasToken' is not a SAS token: expected the query string of a SAS URL, with 'sig=' ` +
        `(its value is not shown)`,
    );
  }
  const endpoint = checkEndpoint(s.endpoint, s.accountName, problems);
  if (!isValidZone(s.timeZone)) {
    problems.push(
      `key 'timeZone' has value ${JSON.stringify(s.timeZone)}: expected an IANA time zone ` +
        `such as 'UTC' or 'Europe/Berlin'`,
    );
  }
  const millis = (key: string, value: string | number): number => {
    if (typeof value === "number") return value;
    const r = parseInterval(value);
    if (r.ok && r.whole) return r.millis;
    problems.push(
      `key '${key}' has value ${JSON.stringify(value)}: ${r.ok ? NOT_WHOLE_MILLIS : r.message}`,
    );
    return 0;
  };
  const connectTimeoutMs = millis("connectTimeout", s.connectTimeout);
  const readTimeoutMs = millis("readTimeout", s.readTimeout);
  if (problems.length > 0) return { ok: false, problems: problems.map((p) => `${where}: ${p}`) };
  return {
    ok: true,
    definition: {
      name,
      endpoint,
      accountName: s.accountName,
      accountKey,
      sasToken,
      container: s.container,
      timeZone: s.timeZone,
      connectTimeoutMs,
      readTimeoutMs,
      maxErrorRetries: s.maxErrorRetries,
      acl: s.acl,
    },
  };
}

/** The endpoint without a trailing `/`; the public cloud's when absent. */
function checkEndpoint(text: string | undefined, account: string, problems: string[]): string {
  if (text === undefined) return `https://${account}.blob.core.windows.net`;
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch { /* reported below */ }
  if (
    !url || !/^https?:$/.test(url.protocol) || url.search !== "" || url.hash !== "" ||
    url.username !== "" || url.password !== ""
  ) {
    problems.push(
      `key 'endpoint' has value ${JSON.stringify(text.slice(0, 200))}: expected the blob ` +
        `service's http(s) URL without query or credentials, such as ` +
        `'https://${account}.blob.core.windows.net'`,
    );
    return "";
  }
  if (isLinkLocal(url.hostname)) {
    problems.push(
      `key 'endpoint' has value ${JSON.stringify(text.slice(0, 200))}: a link-local address ` +
        `(169.254.0.0/16, fe80::/10) is no blob service but a host's own (a cloud's metadata ` +
        `service): refused`,
    );
    return "";
  }
  return url.href.replace(/\/+$/, "");
}

/**
 * Whether a URL's host (as `URL` normalised it: IPv4 in dotted decimal, IPv6 in brackets) is
 * link-local. A name that resolves to such an address is not seen here.
 */
function isLinkLocal(hostname: string): boolean {
  if (/^169\.254\.\d+\.\d+$/.test(hostname)) return true;
  const v6 = /^\[(.*)\]$/.exec(hostname)?.[1]?.toLowerCase();
  if (v6 === undefined) return false;
  // fe80::/10, and IPv4-mapped 169.254.x.x (::ffff:a9fe:xxxx).
  return /^fe[89ab][0-9a-f]:/.test(v6) || /^::ffff:a9fe:/.test(v6);
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "unrecognized_keys") {
    return `unknown key${issue.keys.length > 1 ? "s" : ""} ${
      issue.keys.map((k) => `'${k.slice(0, 40)}'`).join(", ")
    }; allowed keys: ${Object.keys(storeSchema.shape).join(", ")}`;
  }
  const key = issue.path.join(".");
  if (issue.code === "invalid_type") {
    return `key '${key}' ${
      issue.input === undefined
        ? "is missing"
        : `must be ${
          issue.expected === "array"
            ? "a list of rights"
            : issue.expected === "object"
            ? "an object"
            : `a ${issue.expected}`
        }`
    }`;
  }
  if (issue.code === "invalid_value") {
    return `key '${key}': allowed values are ${issue.values.map((v) => String(v)).join(", ")}`;
  }
  if (issue.code === "invalid_union" && key.endsWith("Timeout")) {
    // connectTimeout, readTimeout: an interval or a whole number of milliseconds.
    return `key '${key}': ${NOT_WHOLE_MILLIS}`;
  }
  return `key '${key}': ${issue.message}`;
}
