/**
 * The three log families of the `cloudapi://` scheme and what each maps to at the provider
 * (see /work/shared/CLOUDAPI.md §1). One closed list, so a new family fails to compile until
 * every switch handles it.
 */

export type Family = "directory" | "activity" | "suite";

export const FAMILIES: readonly Family[] = ["directory", "activity", "suite"];

/** The log id of a family, as it appears in URIs and storage paths. */
export const LOG_IDS: Readonly<Record<Family, string>> = {
  directory: "directory_service",
  activity: "cloud_activity",
  suite: "productivity_suite",
};

/** Log types each family allows in its log list. */
export const LOG_TYPES: Readonly<Record<Family, readonly string[]>> = {
  directory: ["audits", "signins"],
  activity: ["audits", "signins", "ni-signins", "sp-signins", "mi-signins"],
  suite: ["Audit.Directory", "Audit.Mail", "Audit.Sharing", "Audit.General", "DLP.All"],
};

/** The definition key that holds a family's log list (also used for its window and rate keys). */
export const FAMILY_KEYS: Readonly<
  Record<Family, { logs: string; window: string; rate: string; unit: string }>
> = {
  directory: {
    logs: "directoryLogs",
    window: "directoryTimeWindow",
    rate: "directoryRateLimit",
    unit: "directoryRateTimeunit",
  },
  activity: {
    logs: "activityLogs",
    window: "activityTimeWindow",
    rate: "activityRateLimit",
    unit: "activityRateTimeunit",
  },
  suite: {
    logs: "suiteLogs",
    window: "suiteTimeWindow",
    rate: "suiteRateLimit",
    unit: "suiteRateTimeunit",
  },
};

/** Management Activity API content type of a suite log type. */
export const SUITE_CONTENT_TYPES: Readonly<Record<string, string>> = {
  "Audit.Directory": "Audit.AzureActiveDirectory",
  "Audit.Mail": "Audit.Exchange",
  "Audit.Sharing": "Audit.SharePoint",
  "Audit.General": "Audit.General",
  "DLP.All": "DLP.All",
};

/** Graph sign-in event type of an activity sign-in log type. */
export const SIGNIN_EVENT_TYPES: Readonly<Record<string, string>> = {
  "signins": "interactiveUser",
  "ni-signins": "nonInteractiveUser",
  "sp-signins": "servicePrincipal",
  "mi-signins": "managedIdentity",
};

/** The record field that places a record in its hour, per family and log type. */
export function timeFieldOf(family: Family, logType: string): string {
  switch (family) {
    case "directory":
    case "activity":
      return logType === "audits" ? "activityDateTime" : "createdDateTime";
    case "suite":
      return "CreationTime";
  }
}

/** The record field that identifies a record, for de-duplication. */
export function idFieldOf(family: Family): string {
  switch (family) {
    case "directory":
    case "activity":
      return "id";
    case "suite":
      return "Id";
  }
}
