/**
 * Field mappings of Sigma rules, as data: per target (one shape of records Trawl reads) the
 * log sources (Sigma `logsource` → the URIs to read and the record's time field) and, per log
 * source, Sigma field → path(s) in the records, with value maps. An administrator may replace a
 * target's mapping with `/system/sigma/<target>.json` (same form, checked by `MAPPING_SCHEMA`);
 * these are the defaults shipped in code.
 *
 * URIs name the store as `{store}`, filled by the caller (the API's `store` parameter).
 */

import { z } from "zod";

const PATHS = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

/** A Sigma field in one log source: a record path (or several, any of which may match), or null. */
const FIELD = z.union([
  PATHS,
  z.null(),
  z.object({
    path: PATHS,
    /** Sigma value (lower case) → the value in the records. */
    values: z.record(z.string(), z.string()).optional(),
    /** Text the records write after the value (Management Activity's `Add user.`). */
    append: z.string().optional(),
  }).strict(),
]);

const LOGSOURCE = z.object({
  product: z.string().optional(),
  service: z.string().optional(),
  category: z.string().optional(),
  /** The URI to read (a glob), `{store}` for the store's name. */
  source: z.string().min(1),
  /** The record's event time (a path), bounded by the script's `from`/`to`. */
  time: z.string().min(1),
  /** Paths of the records as they are (a Sigma field naming one is read as it is). */
  paths: z.array(z.string()).default([]),
  fields: z.record(z.string(), FIELD).default({}),
  note: z.string().optional(),
}).strict();

export const MAPPING_SCHEMA = z.object({
  target: z.string().regex(/^[a-z0-9_-]+$/),
  description: z.string(),
  /** The store placeholder's default. */
  store: z.string().default("cloud"),
  logsources: z.array(LOGSOURCE),
}).strict();

export type SigmaMapping = z.infer<typeof MAPPING_SCHEMA>;
export type MappingLogsource = SigmaMapping["logsources"][number];
export type FieldMapping = z.infer<typeof FIELD>;

/** Reads a mapping file's JSON; a bad one throws an Error naming each problem. */
export function parseMapping(json: unknown, name: string): SigmaMapping {
  const parsed = MAPPING_SCHEMA.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`);
    throw new Error(`sigma mapping '${name}' is not valid: ${problems.join("; ")}`);
  }
  return parsed.data;
}

// Sign-in fields of Log Analytics' SigninLogs (and of the archive, under properties.) in Graph's
// signIn resource. `Status` of SigninLogs is the status object; rules write `Status: Success`.
const GRAPH_SIGNIN_FIELDS: Record<string, FieldMapping> = {
  ResultType: "status.errorCode",
  ResultDescription: "status.failureReason",
  Status: {
    path: ["status.errorCode", "status.failureReason", "status.additionalDetails"],
    values: { success: "0" },
  },
  AppDisplayName: "appDisplayName",
  AppId: "appId",
  ApplicationId: "appId",
  IPAddress: "ipAddress",
  UserPrincipalName: "userPrincipalName",
  Username: "userPrincipalName",
  ClientApp: "clientAppUsed",
  ClientAppUsed: "clientAppUsed",
  ResourceDisplayName: "resourceDisplayName",
  AuthenticationRequirement: "authenticationRequirement",
  ConditionalAccessStatus: "conditionalAccessStatus",
  RiskState: "riskState",
  NetworkLocationDetails: "networkLocationDetails",
  UserAgent: "userAgent",
  "DeviceDetail.trusttype": "deviceDetail.trustType",
  "DeviceDetail.isCompliant": "deviceDetail.isCompliant",
  "DeviceDetail.deviceId": "deviceDetail.deviceId",
  // SigmaHQ's sign-in rules write the authentication protocol as properties.message.
  "properties.message": {
    path: "authenticationProtocol",
    values: { "device code": "deviceCode", ropc: "ropc" },
  },
  ActivityDetails: null,
};

const GRAPH_AUDIT_FIELDS: Record<string, FieldMapping> = {
  OperationName: "activityDisplayName",
  ActivityDisplayName: "activityDisplayName",
  ActivityType: "activityDisplayName",
  // SigmaHQ's audit rules put the activity's name in properties.message, which no log has.
  "properties.message": "activityDisplayName",
  Category: "category",
  LoggedByService: "loggedByService",
  Status: "result",
  "properties.result": "result",
  Result: "result",
  ResultReason: "resultReason",
  failure_status_reason: "resultReason",
  InitiatedBy: "initiatedBy",
  Initiatedby: "initiatedBy",
  TargetResources: "targetResources",
  Target: "targetResources",
  "properties.targetResources": "targetResources",
  "TargetResources.modifiedProperties": "targetResources",
  "TargetResources.ModifiedProperties.NewValue": "targetResources",
  "TargetResources.modifiedProperties.newValue": "targetResources",
  "TargetResources.ModifiedProperties.DisplayName": "targetResources",
  "targetResources.type": "targetResources",
  AdditionalDetails: "additionalDetails",
  "additionalDetails.additionalInfo": "additionalDetails",
  CorrelationId: "correlationId",
};

const GRAPH_SIGNIN_PATHS = [
  "id",
  "createdDateTime",
  "userPrincipalName",
  "userDisplayName",
  "userId",
  "appId",
  "appDisplayName",
  "ipAddress",
  "clientAppUsed",
  "userAgent",
  "correlationId",
  "conditionalAccessStatus",
  "isInteractive",
  "riskDetail",
  "riskLevelAggregated",
  "riskLevelDuringSignIn",
  "riskState",
  "riskEventTypes_v2",
  "resourceDisplayName",
  "resourceId",
  "status",
  "deviceDetail",
  "location",
  "appliedConditionalAccessPolicies",
  "authenticationRequirement",
  "signInEventTypes",
  "networkLocationDetails",
  "authenticationProtocol",
];

const GRAPH_AUDIT_PATHS = [
  "id",
  "category",
  "correlationId",
  "result",
  "resultReason",
  "activityDisplayName",
  "activityDateTime",
  "loggedByService",
  "operationType",
  "initiatedBy",
  "targetResources",
  "additionalDetails",
];

/** Prefixes every path of a Graph field map (the archive keeps Graph's record under properties). */
function underProperties(fields: Record<string, FieldMapping>): Record<string, FieldMapping> {
  const prefix = (p: string | string[]) =>
    Array.isArray(p) ? p.map((x) => `properties.${x}`) : `properties.${p}`;
  return Object.fromEntries(
    Object.entries(fields).map(([k, v]) => [
      k,
      v === null
        ? null
        : typeof v === "string" || Array.isArray(v)
        ? prefix(v)
        : { ...v, path: prefix(v.path) },
    ]),
  );
}

const ARCHIVE_COMMON_PATHS = [
  "time",
  "resourceId",
  "operationName",
  "operationVersion",
  "category",
  "tenantId",
  "resultType",
  "resultSignature",
  "resultDescription",
  "durationMs",
  "callerIpAddress",
  "correlationId",
  "identity",
  "Level",
  "level",
  "location",
  "properties",
];

const ARCHIVE_HOURS = "y=$yyyy$/m=$MM$/d=$dd$/h=$HH$/m=00/PT1H.json";

export const GRAPH_MAPPING: SigmaMapping = {
  target: "graph",
  description:
    "Microsoft Graph records fetched by a cloudapi:// store (camelCase, as Graph writes)",
  store: "cloud",
  logsources: [
    {
      product: "azure",
      service: "signinlogs",
      source: "cloudapi://{store}/directory_service/signins/**",
      time: "createdDateTime",
      paths: GRAPH_SIGNIN_PATHS,
      fields: GRAPH_SIGNIN_FIELDS,
    },
    {
      product: "azure",
      service: "auditlogs",
      source: "cloudapi://{store}/directory_service/audits/**",
      time: "activityDateTime",
      paths: GRAPH_AUDIT_PATHS,
      fields: GRAPH_AUDIT_FIELDS,
    },
  ],
};

export const ARCHIVE_MAPPING: SigmaMapping = {
  target: "archive",
  description:
    "Azure diagnostic settings archived to blobs, read through an azblob:// store (one JSON line a record, Graph's record under properties)",
  store: "archive",
  logsources: [
    {
      product: "azure",
      service: "signinlogs",
      source: `azblob://{store}/insights-logs-signinlogs/**/${ARCHIVE_HOURS}`,
      time: "time",
      paths: ARCHIVE_COMMON_PATHS,
      fields: {
        ...underProperties(GRAPH_SIGNIN_FIELDS),
        ResultType: ["resultType", "properties.status.errorCode"],
        ResultDescription: ["resultDescription", "properties.status.failureReason"],
        Category: "category",
        OperationName: "operationName",
      },
    },
    {
      product: "azure",
      service: "auditlogs",
      source: `azblob://{store}/insights-logs-auditlogs/**/${ARCHIVE_HOURS}`,
      time: "time",
      paths: ARCHIVE_COMMON_PATHS,
      fields: {
        ...underProperties(GRAPH_AUDIT_FIELDS),
        OperationName: "operationName",
        operationName: "operationName",
        "properties.message": "operationName",
        ActivityDisplayName: "operationName",
      },
    },
    {
      product: "azure",
      service: "riskdetection",
      source: `azblob://{store}/insights-logs-userriskevents/**/${ARCHIVE_HOURS}`,
      time: "time",
      paths: ARCHIVE_COMMON_PATHS,
      fields: { riskEventType: "properties.riskEventType" },
    },
    {
      product: "azure",
      service: "activitylogs",
      source: `azblob://{store}/insights-activity-logs/**/${ARCHIVE_HOURS}`,
      time: "time",
      paths: ARCHIVE_COMMON_PATHS,
      fields: {
        // Log Analytics' AzureActivity columns in the archived activity log.
        OperationNameValue: "operationName",
        CategoryValue: "category",
        ResourceProviderValue: "properties.resourceProviderName",
        ResourceId: "resourceId",
        ActivityStatusValue: "resultType",
        Caller: "identity.claims.name",
        CallerIpAddress: "callerIpAddress",
        "properties.message": "properties.message",
      },
      note:
        "operationName values are upper case in archives; Sigma values match case-insensitively",
    },
  ],
};

const SUITE_COMMON_PATHS = [
  "Id",
  "CreationTime",
  "Operation",
  "OrganizationId",
  "RecordType",
  "ResultStatus",
  "UserKey",
  "UserType",
  "Workload",
  "UserId",
  "ClientIP",
  "ObjectId",
  "Name",
  "Status",
  "Severity",
  "Source",
  "Category",
  "Data",
  "AlertType",
  "Directionality",
  "DeliveryAction",
  "RequestType",
  "Payload",
  "ApplicationId",
  "ExtendedProperties",
  "ModifiedProperties",
  "Actor",
  "Target",
];

// Sigma's m365 rules name alerts of the Security & Compliance Center with Panther's words.
const SUITE_ALERT_FIELDS: Record<string, FieldMapping> = {
  eventSource: "Workload",
  eventName: "Name",
  status: { path: "ResultStatus", values: { success: "Succeeded", failure: "Failed" } },
};

export const SUITE_MAPPING: SigmaMapping = {
  target: "suite",
  description:
    "Office 365 Management Activity API records fetched by a cloudapi:// store (PascalCase)",
  store: "cloud",
  logsources: [
    {
      product: "m365",
      service: "threat_management",
      source: "cloudapi://{store}/productivity_suite/Audit.General/**",
      time: "CreationTime",
      paths: SUITE_COMMON_PATHS,
      fields: SUITE_ALERT_FIELDS,
    },
    {
      product: "m365",
      service: "threat_detection",
      source: "cloudapi://{store}/productivity_suite/Audit.General/**",
      time: "CreationTime",
      paths: SUITE_COMMON_PATHS,
      fields: SUITE_ALERT_FIELDS,
    },
    {
      product: "m365",
      service: "exchange",
      source: "cloudapi://{store}/productivity_suite/Audit.Mail/**",
      time: "CreationTime",
      paths: SUITE_COMMON_PATHS,
      fields: SUITE_ALERT_FIELDS,
    },
    {
      product: "m365",
      service: "audit",
      source: "cloudapi://{store}/productivity_suite/Audit.General/**",
      time: "CreationTime",
      paths: SUITE_COMMON_PATHS,
      fields: {},
    },
    {
      product: "azure",
      service: "auditlogs",
      source: "cloudapi://{store}/productivity_suite/Audit.Directory/**",
      time: "CreationTime",
      paths: SUITE_COMMON_PATHS,
      fields: {
        OperationName: { path: "Operation", append: "." },
        "properties.message": { path: "Operation", append: "." },
        ActivityDisplayName: { path: "Operation", append: "." },
        Status: { path: "ResultStatus", values: { success: "Success", failure: "Failure" } },
        Target: "Target",
        InitiatedBy: "Actor",
        Initiatedby: "Actor",
        TargetResources: "Target",
      },
    },
  ],
};

/** The mappings shipped in code, by target name, in the order a target is chosen. */
export const DEFAULT_MAPPINGS: readonly SigmaMapping[] = [
  GRAPH_MAPPING,
  ARCHIVE_MAPPING,
  SUITE_MAPPING,
];
