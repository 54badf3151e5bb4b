/**
 * The log families of the `cloudapi://` scheme and their log types: one entry per log type,
 * holding everything about it (the API that serves it and how, the fields that identify a record
 * and place it in time), inside one entry per family (its log id and definition keys). See
 * docs/cloudapi.md. Adding a log type is adding one entry to `FAMILY_SPECS`.
 */

export type Family = "directory" | "activity" | "suite";

/** How one log type is fetched and read. */
export type LogTypeSpec = GraphLogType | SuiteLogType;

interface RecordFields {
  /** The record field that identifies a record, for de-duplication. */
  readonly idField: string;
  /** The record field that places a record in its hour. */
  readonly timeField: string;
}

/** A log of the Graph API: `<graphHost>/<version>/<path>?$filter=<timeField> in the hour`. */
export interface GraphLogType extends RecordFields {
  readonly api: "graph";
  readonly version: "v1.0" | "beta";
  readonly path: string;
  /** `signInEventTypes` value the request is filtered on, if any. */
  readonly signInEventType?: string;
  /** `$top` of each page, when the API's default is too small. */
  readonly pageSize?: number;
}

/** A content type of the Management Activity API. */
export interface SuiteLogType extends RecordFields {
  readonly api: "suite";
  readonly contentType: string;
}

export interface FamilySpec {
  /** The log id, as it appears in URIs and storage paths. */
  readonly logId: string;
  /** The definition keys of the family's log list, time window and rate limit. */
  readonly keys: {
    readonly logs: string;
    readonly window: string;
    readonly rate: string;
    readonly unit: string;
  };
  /** The log types a log list of the family may name, each with how it is fetched. */
  readonly logTypes: Readonly<Record<string, LogTypeSpec>>;
}

const GRAPH_AUDITS = { api: "graph", path: "auditLogs/directoryAudits", idField: "id" } as const;
const GRAPH_SIGNINS = {
  api: "graph",
  path: "auditLogs/signIns",
  pageSize: 1000,
  idField: "id",
  timeField: "createdDateTime",
} as const;

function suite(contentType: string): SuiteLogType {
  return { api: "suite", contentType, idField: "Id", timeField: "CreationTime" };
}

export const FAMILY_SPECS: Readonly<Record<Family, FamilySpec>> = {
  directory: {
    logId: "directory_service",
    keys: {
      logs: "directoryLogs",
      window: "directoryTimeWindow",
      rate: "directoryRateLimit",
      unit: "directoryRateTimeunit",
    },
    logTypes: {
      audits: { ...GRAPH_AUDITS, version: "v1.0", timeField: "activityDateTime" },
      signins: { ...GRAPH_SIGNINS, version: "v1.0" },
    },
  },
  activity: {
    logId: "cloud_activity",
    keys: {
      logs: "activityLogs",
      window: "activityTimeWindow",
      rate: "activityRateLimit",
      unit: "activityRateTimeunit",
    },
    logTypes: {
      audits: { ...GRAPH_AUDITS, version: "beta", timeField: "activityDateTime" },
      signins: { ...GRAPH_SIGNINS, version: "beta", signInEventType: "interactiveUser" },
      "ni-signins": { ...GRAPH_SIGNINS, version: "beta", signInEventType: "nonInteractiveUser" },
      "sp-signins": { ...GRAPH_SIGNINS, version: "beta", signInEventType: "servicePrincipal" },
      "mi-signins": { ...GRAPH_SIGNINS, version: "beta", signInEventType: "managedIdentity" },
    },
  },
  suite: {
    logId: "productivity_suite",
    keys: {
      logs: "suiteLogs",
      window: "suiteTimeWindow",
      rate: "suiteRateLimit",
      unit: "suiteRateTimeunit",
    },
    logTypes: {
      "Audit.Directory": suite("Audit.AzureActiveDirectory"),
      "Audit.Mail": suite("Audit.Exchange"),
      "Audit.Sharing": suite("Audit.SharePoint"),
      "Audit.General": suite("Audit.General"),
      "DLP.All": suite("DLP.All"),
    },
  },
};

export const FAMILIES: readonly Family[] = Object.keys(FAMILY_SPECS) as Family[];

/** The entry of a log's type (a log list only holds the types its family allows). */
export function logTypeOf(log: { readonly family: Family; readonly logType: string }): LogTypeSpec {
  const types = FAMILY_SPECS[log.family].logTypes;
  const spec = Object.hasOwn(types, log.logType) ? types[log.logType] : undefined;
  if (!spec) throw new Error(`log type '${log.logType}' is not one of family '${log.family}'`);
  return spec;
}
