/**
 * The `cloudapi://` datastore definition: `{"type": "CLOUDAPI", "cloudapiStore": {...}}`, every
 * key of the specification's table with its default. A wrong definition yields messages that
 * name the key, the value and what is allowed, and never the secret.
 */

import { z } from "zod";
import { INTERVAL_FORM, NOT_WHOLE_MILLIS, parseInterval } from "../../engine/values/interval.ts";
import { isValidZone } from "../../engine/values/time.ts";
import { FAMILIES, type Family, FAMILY_SPECS } from "./families.ts";
import { type LogSpec, parseLogList } from "./log_list.ts";
import { SUITE_PLANS, type SuitePlan } from "./hosts.ts";
import { type StoreAcl, storeAclSchema } from "../store_acl.ts";
import { HIDDEN, hideSecrets, MIN_SECRET_CHARS } from "../secret_text.ts";

/** The product version in the default user agent. */
export const TRAWL_VERSION = "0.1.0";

export interface RateLimit {
  readonly limit: number;
  readonly unitMs: number;
}

export interface CloudApiDefinition {
  readonly name: string;
  readonly clientId: string;
  readonly tenantId: string;
  readonly secret: string;
  /** Undefined: the server's zone (`server.timeZone`), whoever queries. */
  readonly timeZone?: string | undefined;
  readonly windowMs: Readonly<Record<Family, number>>;
  readonly fileNameIncludesApp: boolean;
  readonly filePathIncludesApp: boolean;
  readonly fileNameIncludesHour: boolean;
  readonly filePathIncludesHour: boolean;
  readonly logs: readonly LogSpec[];
  readonly suitePlan: SuitePlan;
  readonly rates: Readonly<Partial<Record<Family, RateLimit>>>;
  readonly connectTimeoutMs: number;
  readonly readTimeoutMs: number;
  readonly maxErrorRetries: number;
  readonly userAgent: string;
  readonly acl?: StoreAcl | undefined;
}

const interval = z.string();
const storeSchema = z.object({
  clientId: z.string().min(1),
  tenantId: z.string().min(1),
  // Azure's client secrets have about 40 characters; a short one could not be kept out of
  // messages without mangling them (every "e" hidden), and is no real secret.
  secret: z.string().min(MIN_SECRET_CHARS),
  timeZone: z.string().optional(),
  directoryTimeWindow: interval.default("30 days"),
  activityTimeWindow: interval.default("90 days"),
  suiteTimeWindow: interval.default("7 days"),
  fileNameIncludesApp: z.boolean().default(true),
  filePathIncludesApp: z.boolean().default(false),
  fileNameIncludesHour: z.boolean().default(false),
  filePathIncludesHour: z.boolean().default(false),
  directoryLogs: z.string().optional(),
  activityLogs: z.string().optional(),
  suiteLogs: z.string().optional(),
  suitePlan: z.enum(SUITE_PLANS as [SuitePlan, ...SuitePlan[]]).default("ent"),
  directoryRateLimit: z.number().int().positive().optional(),
  directoryRateTimeunit: z.string().optional(),
  activityRateLimit: z.number().int().positive().optional(),
  activityRateTimeunit: z.string().optional(),
  suiteRateLimit: z.number().int().positive().optional(),
  suiteRateTimeunit: z.string().optional(),
  connectTimeout: z.union([z.string(), z.number().int().nonnegative()]).default("10 s"),
  readTimeout: z.union([z.string(), z.number().int().nonnegative()]).default("60 s"),
  maxErrorRetries: z.number().int().nonnegative().default(3),
  userAgent: z.string().min(1).optional(),
  acl: storeAclSchema.optional(),
}).strict();

const fileSchema = z.object({ type: z.literal("CLOUDAPI"), cloudapiStore: z.unknown() });

/**
 * Keys whose values no message shows: the credentials. A secret pasted under `tenantId` or
 * `clientId` (swapped keys) would otherwise be quoted as that key's bad value.
 */
const SECRET_KEYS = new Set(["secret", "tenantId", "clientId"]);

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

export type DefinitionResult =
  | { ok: true; definition: CloudApiDefinition }
  | { ok: false; problems: string[] };

/**
 * Validates a parsed definition file of the store `name`; every problem is listed. No problem
 * quotes a credential's value; the secret is hidden wherever it shows up all the same (a secret
 * pasted under the wrong key), soundly (connectors/secret_text.ts: a secret too short to hide
 * without mangling the message is refused, and never hidden inside a word).
 */
export function parseDefinition(name: string, json: unknown): DefinitionResult {
  const result = checkDefinition(name, json);
  if (result.ok) return result;
  const secret = (json as { cloudapiStore?: { secret?: unknown } } | null)?.cloudapiStore?.secret;
  if (typeof secret !== "string") return result;
  return { ok: false, problems: result.problems.map((p) => hideSecrets(p, [secret])) };
}

function checkDefinition(name: string, json: unknown): DefinitionResult {
  const where = `datastore '${name}'`;
  const file = fileSchema.safeParse(json);
  if (!file.success) {
    return {
      ok: false,
      problems: [
        `${where}: the definition must be {"type": "CLOUDAPI", "cloudapiStore": {...}}`,
      ],
    };
  }
  const parsed = storeSchema.safeParse(file.data.cloudapiStore);
  if (!parsed.success) {
    const store = (file.data.cloudapiStore ?? {}) as Record<string, unknown>;
    return {
      ok: false,
      problems: parsed.error.issues.map((i) => `${where}: ${describeIssue(i, store)}`),
    };
  }
  const s = parsed.data;
  const problems: string[] = [];
  const millis = (
    key: string,
    text: string | number,
    opts: { zeroOk: boolean; whole?: boolean },
  ): number => {
    if (typeof text === "number") return text;
    const r = parseInterval(text);
    if (!r.ok) {
      problems.push(`key '${key}' has value ${JSON.stringify(text)}: ${r.message}`);
      return 0;
    }
    if (opts.whole && !r.whole) {
      problems.push(`key '${key}' has value ${JSON.stringify(text)}: ${NOT_WHOLE_MILLIS}`);
      return 0;
    }
    if (!opts.zeroOk && r.millis <= 0) {
      problems.push(`key '${key}' has value ${JSON.stringify(text)}: must be above zero`);
    }
    return r.millis;
  };

  if (
    s.tenantId.toLowerCase() === "common" || !(GUID.test(s.tenantId) || DOMAIN.test(s.tenantId))
  ) {
    // Only 'common' is quoted: any other value may be the secret, pasted under the wrong key.
    const shown = s.tenantId.toLowerCase() === "common" ? JSON.stringify(s.tenantId) : HIDDEN;
    problems.push(
      `key 'tenantId' has value ${shown}: expected the tenant's GUID or domain (e.g. contoso.onmicrosoft.com), not 'common'`,
    );
  }
  if (s.timeZone !== undefined && !isValidZone(s.timeZone)) {
    problems.push(
      `key 'timeZone' has value ${
        JSON.stringify(s.timeZone)
      }: expected an IANA time zone such as 'UTC' or 'Europe/Berlin'`,
    );
  }
  const windowMs = {} as Record<Family, number>;
  const rates: Partial<Record<Family, RateLimit>> = {};
  const logs: LogSpec[] = [];
  for (const family of FAMILIES) {
    const keys = FAMILY_SPECS[family].keys;
    const rec = s as unknown as Record<string, unknown>;
    windowMs[family] = millis(keys.window, rec[keys.window] as string, { zeroOk: false });
    const listText = rec[keys.logs] as string | undefined;
    if (listText !== undefined) {
      const list = parseLogList(family, listText);
      if (list.ok) logs.push(...list.logs);
      else {
        for (const p of list.problems) {
          problems.push(`key '${keys.logs}' has value ${JSON.stringify(listText)}: ${p}`);
        }
      }
    }
    const limit = rec[keys.rate] as number | undefined;
    const unit = rec[keys.unit] as string | undefined;
    if (limit !== undefined || unit !== undefined) {
      if (limit === undefined || unit === undefined) {
        problems.push(
          `keys '${keys.rate}' and '${keys.unit}' go together: give both (e.g. 25 and "10 sec") or neither`,
        );
      } else {
        rates[family] = { limit, unitMs: millis(keys.unit, unit, { zeroOk: false }) };
      }
    }
  }
  // The specification: "time interval, whole milliseconds".
  const connectTimeoutMs = millis("connectTimeout", s.connectTimeout, {
    zeroOk: true,
    whole: true,
  });
  const readTimeoutMs = millis("readTimeout", s.readTimeout, { zeroOk: true, whole: true });
  if (problems.length > 0) return { ok: false, problems: problems.map((p) => `${where}: ${p}`) };
  return {
    ok: true,
    definition: {
      name,
      clientId: s.clientId,
      tenantId: s.tenantId,
      secret: s.secret,
      timeZone: s.timeZone,
      windowMs,
      fileNameIncludesApp: s.fileNameIncludesApp,
      filePathIncludesApp: s.filePathIncludesApp,
      fileNameIncludesHour: s.fileNameIncludesHour,
      filePathIncludesHour: s.filePathIncludesHour,
      logs,
      suitePlan: s.suitePlan,
      rates,
      connectTimeoutMs,
      readTimeoutMs,
      maxErrorRetries: s.maxErrorRetries,
      userAgent: s.userAgent ?? `Trawl/${TRAWL_VERSION}`,
      acl: s.acl,
    },
  };
}

function describeIssue(issue: z.core.$ZodIssue, store: Record<string, unknown>): string {
  const key = issue.path.join(".");
  if (issue.code === "unrecognized_keys") {
    return `unknown key${issue.keys.length > 1 ? "s" : ""} ${
      issue.keys.map((k) => `'${k}'`).join(", ")
    }; allowed keys: ${Object.keys(storeSchema.shape).join(", ")}`;
  }
  const top = String(issue.path[0] ?? "");
  const raw = issue.path.reduce<unknown>(
    (v, p) => (v && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[p] : undefined),
    store,
  );
  const shown = SECRET_KEYS.has(top) ? HIDDEN : raw === undefined ? "missing" : JSON.stringify(raw);
  return `key '${key}' has value ${shown}: ${expectation(issue, top)}`;
}

function expectation(issue: z.core.$ZodIssue, key: string): string {
  switch (issue.code) {
    case "invalid_value":
      return `allowed: ${issue.values.map((v) => String(v)).join(", ")}`;
    case "invalid_type":
      if (key.endsWith("Window") || key.endsWith("Timeunit")) {
        return `expected a time interval: ${INTERVAL_FORM}`;
      }
      return `expected ${issue.expected === "array" ? "a list of rights" : issue.expected}`;
    case "invalid_union":
      // connectTimeout, readTimeout: an interval or a whole number of milliseconds.
      return key.endsWith("Timeout") ? NOT_WHOLE_MILLIS : issue.message;
    case "too_small":
      if (key === "secret") {
        return `too short: a client secret has at least ${MIN_SECRET_CHARS} characters ` +
          `(Azure's have about 40)`;
      }
      return key === "clientId" || key === "tenantId" || key === "userAgent"
        ? "must not be empty"
        : `must be at least ${issue.minimum}${issue.inclusive ? "" : " (exclusive)"}`;
    default:
      return issue.message;
  }
}
