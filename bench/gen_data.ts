// deno-lint-ignore-file no-console
/**
 * Writes the engine benchmark's data: the same seeded web-server events as a combined-format
 * access log (`bench/data/access.log`) and as JSON lines (`bench/data/events.jsonl`), and
 * nested JSON lines shaped like Microsoft Graph `signIn` records (`bench/data/signins.jsonl`).
 *
 *   deno run --allow-write bench/gen_data.ts                  # about 500 MB each
 *   deno run --allow-write bench/gen_data.ts --mb 50          # quick runs
 *   deno run --allow-write bench/gen_data.ts --only signins   # one kind: access (both) | signins
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { seededRandom } from "../tests/support/seeded_random.ts";

export const DATA_DIR = join(dirname(fileURLToPath(import.meta.url)), "data");
export const ACCESS_LOG = join(DATA_DIR, "access.log");
export const EVENTS_JSONL = join(DATA_DIR, "events.jsonl");
export const SIGNINS_JSONL = join(DATA_DIR, "signins.jsonl");

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const METHODS = ["GET", "GET", "GET", "GET", "POST", "PUT", "HEAD", "DELETE"];
const STATUSES = [200, 200, 200, 200, 200, 200, 200, 304, 301, 404, 404, 500, 403];
const PATHS = [
  "/",
  "/index.html",
  "/api/v1/items",
  "/api/v1/items/{id}",
  "/static/app.{id}.js",
  "/static/style.css",
  "/images/logo.png",
  "/search?q={id}",
  "/login",
  "/account/{id}/settings",
];
const AGENTS = [
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0",
  "curl/8.5.0",
  "Googlebot/2.1 (+http://www.google.com/bot.html)",
  "python-requests/2.31.0",
];
const REFERRERS = [
  "-",
  "https://example.com/",
  "https://www.google.com/",
  "https://news.example.org/a",
];

const pad = (n: number) => (n < 10 ? "0" + n : String(n));

/** Writes both files with about `mb` megabytes each; returns the number of events. */
export async function generate(mb: number, seed = 42): Promise<number> {
  await Deno.mkdir(DATA_DIR, { recursive: true });
  const rnd = seededRandom(seed);
  // A skewed pool of clients, so that the top 10 by bytes is stable and meaningful.
  const clients = Array.from(
    { length: 20_000 },
    () =>
      `${10 + Math.floor(rnd() * 200)}.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}.${
        Math.floor(rnd() * 256)
      }`,
  );
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const log = await Deno.open(ACCESS_LOG, { write: true, create: true, truncate: true });
  const json = await Deno.open(EVENTS_JSONL, { write: true, create: true, truncate: true });
  const encoder = new TextEncoder();
  const target = mb * 1_000_000;
  let written = 0;
  let events = 0;
  let t = Date.UTC(2024, 4, 1);
  try {
    while (written < target) {
      let logText = "";
      let jsonText = "";
      for (let i = 0; i < 5000; i++) {
        t += Math.floor(rnd() * 20);
        const d = new Date(t);
        const client = clients[Math.floor(clients.length * Math.pow(rnd(), 3))];
        const method = pick(METHODS);
        const path = pick(PATHS).replace("{id}", String(Math.floor(rnd() * 100_000)));
        const status = pick(STATUSES);
        const bytes = status === 304 ? 0 : Math.floor(200 + rnd() * rnd() * 50_000);
        const referrer = pick(REFERRERS);
        const agent = pick(AGENTS);
        const time = `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${
          pad(d.getUTCHours())
        }:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`;
        logText += `${client} - - [${time}] "${method} ${path} HTTP/1.1" ${status} ${
          status === 304 ? "-" : bytes
        } "${referrer}" "${agent}"\n`;
        jsonText += JSON.stringify({
          client,
          time: d.toISOString(),
          method,
          path,
          protocol: "HTTP/1.1",
          status,
          bytes,
          referrer,
          agent,
        }) + "\n";
        events++;
      }
      await writeAll(log, encoder.encode(logText));
      await writeAll(json, encoder.encode(jsonText));
      written += logText.length;
    }
  } finally {
    log.close();
    json.close();
  }
  return events;
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await file.write(bytes.subarray(off));
}

// Sign-in records: the shape of the Graph `signIn` resource (beta and v1.0 share these fields).
const APPS = [
  ["Microsoft Teams", "1fec8e78-bce4-4aaf-ab1b-5451cc387264"],
  ["Office 365 Exchange Online", "00000002-0000-0ff1-ce00-000000000000"],
  ["Azure Portal", "c44b4083-3bb0-49c1-b47d-974e53cbdf3c"],
  ["Microsoft Authentication Broker", "29d9ed98-a469-4536-ade2-f981bc1d605e"],
  ["Graph Explorer", "de8bc8b5-d9f9-48b1-a8ad-b748da725064"],
] as const;
const CLIENT_APPS = ["Browser", "Mobile Apps and Desktop clients", "Exchange ActiveSync", "IMAP4"];
/** Sign-in outcomes, weighted: most succeed; the failures carry their real codes and texts. */
type Outcome = readonly [number, string | null, string | null];
const OUTCOMES: readonly Outcome[] = [
  ...Array.from(
    { length: 14 },
    (): Outcome => [0, null, "MFA requirement satisfied by claim in the token"],
  ),
  [
    50126,
    "Error validating credentials due to invalid username or password.",
    "The user didn't enter the right credentials.",
  ],
  [50074, "Strong Authentication is required.", "The user didn't complete the MFA prompt."],
  [
    50140,
    "This error occurred due to 'Keep me signed in' interrupt when the user was signing in.",
    null,
  ],
  [
    53003,
    "Access has been blocked by Conditional Access policies.",
    "The access policy does not allow token issuance.",
  ],
  [
    50053,
    "Account is locked because user tried to sign in too many times with an incorrect user ID or password.",
    null,
  ],
  [700016, 'Application with identifier "{id}" was not found in the directory.', null],
];
const PLACES = [
  ["Helsinki", "Uusimaa", "FI", 60.1699, 24.9384],
  ["Espoo", "Uusimaa", "FI", 60.2055, 24.6559],
  ["Stockholm", "Stockholms län", "SE", 59.3293, 18.0686],
  ["Zürich", "Zürich", "CH", 47.3769, 8.5417],
  ["São Paulo", "São Paulo", "BR", -23.5505, -46.6333],
  ["New York", "New York", "US", 40.7128, -74.006],
  ["Lagos", "Lagos", "NG", 6.5244, 3.3792],
  ["Москва", "Москва", "RU", 55.7558, 37.6173],
  ["東京", "東京都", "JP", 35.6762, 139.6503],
  ["Mumbai", "Maharashtra", "IN", 19.076, 72.8777],
] as const;
const SYSTEMS = [
  ["Windows10", "Edge 124.0.2478"],
  ["Windows10", "Chrome 124.0.0"],
  ["MacOs", "Safari 17.4"],
  ["Ios", "Mobile Safari 17.4"],
  ["Android", "Chrome Mobile 124.0"],
  ["Linux", "Firefox 125.0"],
] as const;
const POLICIES = [
  ["Require MFA for admins", ["mfa"], []],
  ["Block legacy authentication", ["block"], []],
  ["Require compliant device", ["compliantDevice", "domainJoinedDevice"], ["signInFrequency"]],
  ["Sign-in frequency 8 h", [], ["signInFrequency", "persistentBrowserSessionMode"]],
] as const;
const POLICY_RESULTS = ["success", "notApplied", "notEnabled", "failure", "reportOnlySuccess"];

function uuid(rnd: () => number): string {
  const hex = (n: number) =>
    Array.from({ length: n }, () => "0123456789abcdef"[Math.floor(rnd() * 16)]).join("");
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[Math.floor(rnd() * 4)]}${hex(3)}-${hex(12)}`;
}

/** Writes about `mb` megabytes of sign-in records as JSON lines; returns the number written. */
export async function generateSignins(mb: number, seed = 7): Promise<number> {
  await Deno.mkdir(DATA_DIR, { recursive: true });
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const users = Array.from({ length: 5000 }, (_, i) => ({
    id: uuid(rnd),
    name: i % 50 === 0 ? `Jürgen O\u2019Brien ${i}` : `User ${i}`,
    upn: `user${i}@contoso.example`,
    device: rnd() < 0.6 ? uuid(rnd) : "",
  }));
  const out = await Deno.open(SIGNINS_JSONL, { write: true, create: true, truncate: true });
  const encoder = new TextEncoder();
  const target = mb * 1_000_000;
  let written = 0;
  let records = 0;
  let t = Date.UTC(2024, 4, 1);
  try {
    while (written < target) {
      let text = "";
      for (let i = 0; i < 2000; i++) {
        t += Math.floor(rnd() * 400);
        const user = users[Math.floor(users.length * Math.pow(rnd(), 2))]!;
        const [appName, appId] = pick(APPS);
        const [errorCode, failureReason, details] = pick(OUTCOMES);
        const [city, state, country, lat, lon] = pick(PLACES);
        const [os, browser] = pick(SYSTEMS);
        const policies = POLICIES.slice(0, 1 + Math.floor(rnd() * POLICIES.length)).map((
          [displayName, grant, session],
        ) => ({
          id: uuid(rnd),
          displayName,
          enforcedGrantControls: grant,
          enforcedSessionControls: session,
          result: pick(POLICY_RESULTS),
        }));
        const record = {
          id: uuid(rnd),
          createdDateTime: new Date(t).toISOString().replace(".000Z", "Z"),
          userDisplayName: user.name,
          userPrincipalName: user.upn,
          userId: user.id,
          appId,
          appDisplayName: appName,
          ipAddress: `${20 + Math.floor(rnd() * 180)}.${Math.floor(rnd() * 256)}.${
            Math.floor(rnd() * 256)
          }.${Math.floor(rnd() * 256)}`,
          clientAppUsed: pick(CLIENT_APPS),
          correlationId: uuid(rnd),
          conditionalAccessStatus: errorCode === 53003
            ? "failure"
            : pick(["success", "notApplied"]),
          isInteractive: rnd() < 0.7,
          riskDetail: "none",
          riskLevelAggregated: "none",
          riskLevelDuringSignIn: rnd() < 0.05 ? "medium" : "none",
          riskState: "none",
          riskEventTypes: [],
          riskEventTypes_v2: rnd() < 0.05 ? ["unfamiliarFeatures", "anonymizedIPAddress"] : [],
          resourceDisplayName: "Microsoft Graph",
          resourceId: "00000003-0000-0000-c000-000000000000",
          status: {
            errorCode,
            failureReason: failureReason?.replace("{id}", appId) ?? null,
            additionalDetails: details,
          },
          deviceDetail: {
            deviceId: user.device,
            displayName: user.device ? `LAPTOP-${user.device.slice(0, 6).toUpperCase()}` : null,
            operatingSystem: os,
            browser,
            isCompliant: user.device !== "",
            isManaged: user.device !== "",
            trustType: user.device ? "Azure AD joined" : null,
          },
          location: {
            city,
            state,
            countryOrRegion: country,
            geoCoordinates: {
              altitude: null,
              latitude: lat + (rnd() - 0.5) / 10,
              longitude: lon + (rnd() - 0.5) / 10,
            },
          },
          appliedConditionalAccessPolicies: policies,
        };
        text += JSON.stringify(record) + "\n";
        records++;
      }
      const bytes = encoder.encode(text);
      await writeAll(out, bytes);
      written += bytes.length;
    }
  } finally {
    out.close();
  }
  return records;
}

if (import.meta.main) {
  const i = Deno.args.indexOf("--mb");
  const mb = i >= 0 ? Number(Deno.args[i + 1]) : 500;
  const o = Deno.args.indexOf("--only");
  const only = o >= 0 ? Deno.args[o + 1]! : "all";
  if (!(mb > 0) || !["all", "access", "signins"].includes(only)) {
    console.error("usage: gen_data.ts [--mb <megabytes>] [--only access|signins]");
    Deno.exit(2);
  }
  const started = performance.now();
  const secs = () => ((performance.now() - started) / 1000).toFixed(1);
  if (only !== "signins") {
    const events = await generate(mb);
    console.log(`wrote ${events} events to ${ACCESS_LOG} and ${EVENTS_JSONL} in ${secs()} s`);
  }
  if (only !== "access") {
    const records = await generateSignins(mb);
    console.log(`wrote ${records} sign-ins to ${SIGNINS_JSONL} in ${secs()} s`);
  }
}
