import { seededRandom } from "../support/seeded_random.ts";
/**
 * Synthetic audit records for the emulator, the same for the same seed: directory audits,
 * sign-ins of the four kinds (CLOUDAPI.md §4) and Management Activity records grouped into
 * content blobs (§5). Every record has the time it becomes visible (`availableAt`), so late
 * records can be simulated by moving the emulator's clock.
 */

export interface SeedOptions {
  /** Event times are in [from, to), epoch ms. */
  readonly from: number;
  readonly to: number;
  /** Records per hour of each kind (directory audits; each sign-in kind; each content type). */
  readonly perHour?: number;
  /** Share of records that arrive late, between 1 hour and lateMaxMs after the event. */
  readonly lateFraction?: number;
  readonly lateMaxMs?: number;
  readonly seed?: number;
}

export interface Seeded<T> {
  readonly record: T;
  /** Event time, epoch ms. */
  readonly time: number;
  readonly availableAt: number;
}

export interface Blob {
  readonly contentType: string;
  readonly contentId: string;
  /** When the blob became available (contentCreated), epoch ms. */
  readonly created: number;
  readonly records: readonly Record<string, unknown>[];
}

export interface SeedData {
  readonly audits: readonly Seeded<Record<string, unknown>>[];
  readonly signIns: readonly Seeded<Record<string, unknown>>[];
  readonly blobs: readonly Blob[];
}

export const SIGNIN_KINDS = [
  "interactiveUser",
  "nonInteractiveUser",
  "servicePrincipal",
  "managedIdentity",
] as const;

export const CONTENT_TYPES = [
  "Audit.AzureActiveDirectory",
  "Audit.Exchange",
  "Audit.SharePoint",
  "Audit.General",
  "DLP.All",
] as const;

const HOUR = 3_600_000;
/** Blobs collect the records that became visible in one slot of this length. */
const BLOB_SLOT_MS = 10 * 60_000;

function uuid(rand: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16)).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${
    hex.slice(20)
  }`;
}

const USERS = ["alice", "bob", "carol", "dave", "erin"];
const OPS = ["Add user", "Update user", "Reset password", "Add member to group", "Delete user"];
const SUITE_OPS = ["FileAccessed", "MailItemsAccessed", "UserLoggedIn", "FileDownloaded"];

/** Seeds the records of one tenant. */
export function seedTenant(tenant: string, options: SeedOptions): SeedData {
  const rand = seededRandom(options.seed ?? 42);
  const perHour = options.perHour ?? 10;
  const late = options.lateFraction ?? 0;
  const lateMax = options.lateMaxMs ?? 2 * HOUR;
  const delay = () => rand() < late ? HOUR + rand() * (lateMax - HOUR) : rand() * 10 * 60_000;
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  const ip = () =>
    `10.${Math.floor(rand() * 255)}.${Math.floor(rand() * 255)}.${1 + Math.floor(rand() * 250)}`;
  const audits: Seeded<Record<string, unknown>>[] = [];
  const signIns: Seeded<Record<string, unknown>>[] = [];
  const suite: Seeded<Record<string, unknown>>[] = [];
  for (let h = Math.floor(options.from / HOUR) * HOUR; h < options.to; h += HOUR) {
    for (let i = 0; i < perHour; i++) {
      const time = h + Math.floor(rand() * HOUR);
      if (time < options.from || time >= options.to) continue;
      const user = `${pick(USERS)}@${tenant}`;
      audits.push({
        time,
        availableAt: time + delay(),
        record: {
          id: `Directory_${uuid(rand)}`,
          category: "UserManagement",
          correlationId: uuid(rand),
          result: rand() < 0.95 ? "success" : "failure",
          resultReason: "",
          activityDisplayName: pick(OPS),
          activityDateTime: new Date(time).toISOString(),
          loggedByService: "Core Directory",
          operationType: "Update",
          initiatedBy: { user: { id: uuid(rand), userPrincipalName: user, ipAddress: ip() } },
          targetResources: [{ id: uuid(rand), type: "User", userPrincipalName: user }],
          additionalDetails: [{ key: "UserType", value: "Member" }],
        },
      });
      for (const kind of SIGNIN_KINDS) {
        const t = h + Math.floor(rand() * HOUR);
        if (t < options.from || t >= options.to) continue;
        const failed = rand() < 0.1;
        signIns.push({
          time: t,
          availableAt: t + delay(),
          record: {
            id: uuid(rand),
            createdDateTime: new Date(t).toISOString(),
            userPrincipalName: kind === "interactiveUser" || kind === "nonInteractiveUser"
              ? user
              : null,
            appId: uuid(rand),
            appDisplayName: pick(["Office 365 Exchange Online", "Azure Portal", "Teams"]),
            ipAddress: ip(),
            clientAppUsed: "Browser",
            signInEventTypes: [kind],
            isInteractive: kind === "interactiveUser",
            status: failed
              ? { errorCode: 50126, failureReason: "Invalid username or password." }
              : { errorCode: 0, failureReason: null },
            location: { city: "Berlin", countryOrRegion: "DE" },
          },
        });
      }
      for (const contentType of CONTENT_TYPES) {
        const t = h + Math.floor(rand() * HOUR);
        if (t < options.from || t >= options.to) continue;
        suite.push({
          time: t,
          availableAt: t + delay(),
          record: {
            Id: uuid(rand),
            CreationTime: new Date(t).toISOString().slice(0, 19),
            Operation: pick(SUITE_OPS),
            OrganizationId: uuid(rand),
            RecordType: 15,
            ResultStatus: "Succeeded",
            UserKey: uuid(rand),
            UserType: 0,
            Workload: contentType.replace(/^Audit\./, ""),
            UserId: user,
            ClientIP: ip(),
            ContentType: contentType,
          },
        });
      }
    }
  }
  return { audits, signIns, blobs: groupIntoBlobs(suite, rand) };
}

function groupIntoBlobs(records: Seeded<Record<string, unknown>>[], rand: () => number): Blob[] {
  const groups = new Map<
    string,
    { contentType: string; created: number; records: Record<string, unknown>[] }
  >();
  for (const r of records) {
    const contentType = String(r.record.ContentType);
    const created = Math.ceil((r.availableAt + 1) / BLOB_SLOT_MS) * BLOB_SLOT_MS;
    const key = `${contentType}|${created}`;
    let g = groups.get(key);
    if (!g) groups.set(key, g = { contentType, created, records: [] });
    g.records.push(r.record);
  }
  return [...groups.values()]
    .sort((a, b) => a.created - b.created || a.contentType.localeCompare(b.contentType))
    .map((g) => ({ ...g, contentId: `${g.created}$${uuid(rand).replaceAll("-", "")}` }));
}
