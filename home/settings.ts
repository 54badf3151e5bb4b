/**
 * Server settings: `key = value` lines in `conf/settings.conf`, overridden by `--set key=value`.
 * Every key has a default written as text and goes through the same zod schema as a value
 * from the file, so a default can never be of another form than what a user may write.
 */

import { z } from "zod";
import { INTERVAL_FORM, parseInterval } from "../engine/values/interval.ts";
import { BYTE_SIZE_FORM, parseByteSize } from "./byte_size.ts";
import { processTimeZone } from "./time_zone.ts";
import { isValidZone } from "../engine/values/time.ts";
import { parseStorageSetting, STORAGE_FORM } from "./storage/open_storage.ts";
import { parseAllowList } from "./private_targets.ts";

/** A settings file or override that cannot be used; the message names every bad key. */
export class SettingsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join("\n"));
    this.name = "SettingsError";
  }
}

/** A zod schema from the text of a value to its typed form; `form` is what the message expects. */
function fromText<T>(form: string, parse: (text: string) => T | undefined) {
  return z.string().transform((text, ctx) => {
    const value = parse(text.trim());
    if (value === undefined) {
      ctx.issues.push({ code: "custom", message: form, input: text });
      return z.NEVER;
    }
    return value;
  });
}

function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return fromText(
    max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`,
    (text) => {
      if (!/^\d+$/.test(text)) return undefined;
      const n = Number(text);
      return n >= min && n <= max ? n : undefined;
    },
  );
}

/** Milliseconds of a positive interval. */
const interval = fromText(`a positive interval: ${INTERVAL_FORM}`, (text) => {
  const r = parseInterval(text);
  return r.ok && r.millis > 0 ? r.millis : undefined;
});

/** Milliseconds of an interval from `min` to `max` (texts as a user writes them). */
function intervalWithin(min: string, max: string) {
  const lo = (parseInterval(min) as { millis: number }).millis;
  const hi = (parseInterval(max) as { millis: number }).millis;
  return fromText(`an interval from ${min} to ${max}: ${INTERVAL_FORM}`, (text) => {
    const r = parseInterval(text);
    return r.ok && r.millis >= lo && r.millis <= hi ? r.millis : undefined;
  });
}

/** Hosts, addresses and CIDRs a server-made request may reach inside its own network. */
const allowList = fromText(
  "a comma-separated list of host[:port] and CIDRs, e.g. '127.0.0.1:9000, hooks.lan, 10.20.0.0/16'",
  (text) => {
    const list = parseAllowList(text);
    return typeof list === "string" ? undefined : list;
  },
).optional();

const byteSize = fromText(BYTE_SIZE_FORM, parseByteSize);

const boolean = fromText("true or false", (text) => {
  const lower = text.toLowerCase();
  return lower === "true" ? true : lower === "false" ? false : undefined;
});

const timeZone = fromText(
  "an IANA time zone such as 'UTC' or 'Europe/Berlin'",
  (text) => isValidZone(text) ? text : undefined,
);

const host = fromText(
  "a host name or IP address such as '127.0.0.1' or '0.0.0.0'",
  (text) => /^[A-Za-z0-9.:_-]+$/.test(text) ? text : undefined,
);

/** An optional base URL override (`http://127.0.0.1:9000`), kept without a trailing slash. */
const baseUrl = fromText("an http or https URL such as 'http://127.0.0.1:9000'", (text) => {
  if (!URL.canParse(text)) return undefined;
  const url = new URL(text);
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  return text.replace(/\/+$/, "");
}).optional();

/** An optional tenant GUID (`PublisherIdentifier`), kept in lower case. */
const tenantGuid = fromText(
  "a tenant id GUID such as '72f988bf-86f1-41af-91ab-2d7cd011db47'",
  (text) =>
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text)
      ? text.toLowerCase()
      : undefined,
).optional();

/** An optional WebSocket URL (`ws://127.0.0.1:8080`). */
const webSocketUrl = fromText("a ws or wss URL such as 'ws://localhost:8080'", (text) => {
  if (!URL.canParse(text)) return undefined;
  const protocol = new URL(text).protocol;
  return protocol === "ws:" || protocol === "wss:" ? text : undefined;
}).optional();

const storage = fromText(STORAGE_FORM, parseStorageSetting);

/** What a key's default is: a text as a user would write it, unset, or computed per start. */
type SettingDefault =
  | { readonly text: string }
  | { readonly unset: true }
  | { readonly compute: () => string; readonly doc: string };

/** One setting: how its text is read, its default, and what it means (README's table). */
interface SettingSpec<S extends z.ZodType> {
  readonly schema: S;
  readonly default: SettingDefault;
  readonly doc: string;
}

function setting<S extends z.ZodType>(
  schema: S,
  defaultValue: string | undefined | Exclude<SettingDefault, { text: string } | { unset: true }>,
  doc: string,
): SettingSpec<S> {
  const d: SettingDefault = defaultValue === undefined
    ? { unset: true }
    : typeof defaultValue === "string"
    ? { text: defaultValue }
    : defaultValue;
  return { schema, default: d, doc };
}

/**
 * Every setting, one entry per key, in the order of the documentation: README's settings table
 * is generated from it (`deno task settings-doc`, home/settings_doc.ts).
 */
export const SETTINGS = {
  "wgui.host": setting(host, "127.0.0.1", "address to listen on (`0.0.0.0` for all)"),
  "wgui.port": setting(integer(0, 65535), "8388", "port; `0` takes any free port"),
  "storage": setting(
    storage,
    "files",
    "state: `files` (the home), `kv:<path or url>` (Deno KV) or `pg:<postgres URL>` (PostgreSQL; docs/deployment.md)",
  ),
  "query.retention": setting(
    interval,
    "5 min",
    "how long a query's result and metadata are kept after its last state change or the last request naming it",
  ),
  "query.expiredMemory": setting(
    interval,
    "24 h",
    "how long an expired query id still answers `410` rather than `404`",
  ),
  "query.maxRunning": setting(
    integer(1),
    {
      compute: () => String(Math.max(1, navigator.hardwareConcurrency || 1)),
      doc: "number of cores",
    },
    "queries running at once; servers sharing a `kv:` or `pg:` storage count their queries together, and left to its default each live server adds its cores to that cap (set, it is one cap for them all)",
  ),
  "query.workers": setting(
    integer(1),
    {
      compute: () => String(Math.max(1, navigator.hardwareConcurrency || 1)),
      doc: "number of cores",
    },
    "workers one query's scan runs on (files and byte ranges of large files are shared among them); a scan of more than 1 MiB runs in a worker even with `1`, apart from the thread that answers requests",
  ),
  "query.warmWorkers": setting(
    boolean,
    "true",
    "load the scan workers when the server starts (otherwise at the first query that needs one, ~300 ms later)",
  ),
  "query.workerBacklog": setting(
    boolean,
    "true",
    "a worker rendering a result whose turn has not come writes ahead to a file, not waiting",
  ),
  "query.laneBytes": setting(
    byteSize,
    "32 MiB",
    "a result rendered by the scan workers (a text format fixed at POST) is read in shares of about this much input, a worker's worth at a time, so a streamed answer sends the first shares whole while the later ones are read; smaller streams sooner, for a task started per share",
  ),
  "query.workerNice": setting(
    integer(0, 19),
    "10",
    "Linux nice value of the scan workers' threads: above 0, the server's own thread, which answers every request, comes first on busy cores",
  ),
  "cache.enabled": setting(
    boolean,
    "false",
    "keep the columns that PARSE, READ_JSON, READ_CSV extract in a cache (`engine_data/cache`), read by later queries of the same source, not the bytes (docs/architecture.md); off where the server has no local disk. Off by default while a first read that fills it is slower than one that doesn't",
  ),
  "cache.maxBytes": setting(
    byteSize.optional(),
    undefined,
    "bytes the column cache may take; past that the entries used least recently are removed. Unset: a tenth of the free disk under `engine_data` when the server starts",
  ),
  "query.maxQueued": setting(integer(0), "100", "queries waiting; past that `429`"),
  "cluster.lease": setting(
    interval,
    "10 s",
    "servers sharing a KV: a server whose lease is this old is dead, and the others mark its unfinished queries `FAILED`",
  ),
  "cluster.distributeBytes": setting(
    byteSize,
    "0",
    "`storage = pg:`: a scan of FILE datastores or of an `azblob://` store larger than this is cut into shares that every server with this setting runs on its scan workers, merged by the server that took the query (docs/deployment.md); `0`: off",
  ),
  "cluster.minShareBytes": setting(
    byteSize,
    "256 KiB",
    "distributed scans: the smallest share a file of lines is cut into (a file smaller than this is one share, and one share of a small input runs on the server that took the query); tests lower it to `1` to spread even tiny inputs",
  ),
  "cluster.shareAnswerBytes": setting(
    byteSize,
    "64 MiB",
    "distributed scans: largest answer of one share kept in its row; a larger one (many rows) is written by the share's holder as a segment in the storage, in pieces of this size, which the server that took the query reads and deletes",
  ),
  "query.maxScriptBytes": setting(
    byteSize,
    "128 KiB",
    "largest script body (`413` above); also the script text one query compiles, its stored scripts included (`400`)",
  ),
  "query.memoryLimit": setting(
    byteSize,
    "1 GiB",
    "memory the grouping and sorting of one query may take",
  ),
  "query.resultMemoryBytes": setting(
    byteSize,
    "32 MiB",
    "result size kept in memory; larger results spill to disk",
  ),
  "query.resultMemoryTotalBytes": setting(
    byteSize,
    "64 MiB",
    "bytes of all results kept in memory together (queued, running, or kept for their retention); past that, a result's further rows spill to disk",
  ),
  "query.maxResultsPerUser": setting(
    integer(1),
    "100",
    "query results one user may hold (queued, running, or finished and kept); past that `429`",
  ),
  "query.maxResultBytesPerUser": setting(
    byteSize,
    "1 GiB",
    "bytes (memory and disk) one user's results may take; a new query is `429` past it, a growing one FAILS",
  ),
  "resource.maxBytes": setting(
    byteSize,
    "16 MiB",
    "largest file a `PUT /resources/...` may write",
  ),
  "server.timeZone": setting(
    timeZone,
    { compute: processTimeZone, doc: "the process's zone" },
    "zone of the queries of users without one, for computing and showing timestamps (an IANA name)",
  ),
  "server.maxConnections": setting(
    integer(1),
    "1000",
    "open connections; lowered to what the open-file limit allows (three per connection); idle ones make room",
  ),
  "server.headersTimeout": setting(
    interval,
    "10 sec",
    "time to send a request's headers before the connection is closed",
  ),
  "server.bodyTimeout": setting(
    interval,
    "30 sec",
    "longest wait for the next bytes of a request's body before it is answered 408 and closed",
  ),
  "server.idleTimeout": setting(
    interval,
    "30 sec",
    "time a connection may stay silent after a response before it is closed",
  ),
  "log.requests": setting(boolean, "true", "log one line per request"),
  "inspect.statelyUrl": setting(
    webSocketUrl,
    undefined,
    "WebSocket URL of Stately's inspector (`@statelyai/inspect`): the running actors report to it",
  ),
  "metrics.public": setting(
    boolean,
    "false",
    "serve `GET /metrics` without a token (otherwise an admin's token is needed)",
  ),
  "cloudapi.loginHost": setting(
    baseUrl,
    undefined,
    "base URL replacing the directory service's login host, e.g. `http://127.0.0.1:9000`",
  ),
  "cloudapi.graphHost": setting(
    baseUrl,
    undefined,
    "base URL replacing the directory/activity API host",
  ),
  "cloudapi.manageHost": setting(
    baseUrl,
    undefined,
    "base URL replacing the productivity-suite API host",
  ),
  "cloudapi.graphRateLimit": setting(
    integer(1),
    "25",
    "requests per time unit to Graph per tenant, directory and activity logs together (the rate adapts)",
  ),
  "cloudapi.graphRateTimeunit": setting(interval, "10 sec", "its time unit"),
  "cloudapi.suiteRateLimit": setting(
    integer(1),
    "60000",
    "requests per time unit to the productivity suite",
  ),
  "cloudapi.suiteRateTimeunit": setting(interval, "1 min", "its time unit"),
  "cloudapi.publisherIdentifier": setting(
    tenantGuid,
    undefined,
    "`PublisherIdentifier` (a tenant GUID) of suite calls; each store's tenant GUID when unset",
  ),
  "cloudapi.fetchLease": setting(
    interval,
    "30 sec",
    "with a KV: how long a server's lease on fetching a cloud hour lasts unless renewed",
  ),
  "detections.tick": setting(
    intervalWithin("1 sec", "1 h"),
    "30 sec",
    "how often due schedules are run and due alerts delivered (docs/detections.md)",
  ),
  "detections.lease": setting(
    intervalWithin("10 sec", "24 h"),
    "10 min",
    "servers sharing a storage: how long a server's lease on a schedule's run lasts; a run longer than this may be run again by another server (its matches still alert once)",
  ),
  "detections.runRetention": setting(
    intervalWithin("1 h", "400 days"),
    "30 days",
    "how long the record of a schedule's run is kept (`GET /schedules/<id>/runs`)",
  ),
  "detections.lateHorizon": setting(
    intervalWithin("0 sec", "90 days"),
    "3 days",
    "how far back a schedule reads again the cloud hours (`cloudapi://`) whose stored records changed since it last read them (a record published later than the log's lag); 0 reads only the look-back",
  ),
  "detections.dedupDays": setting(
    integer(1, 400),
    "30",
    "days a match's key is kept (so that it alerts once) for schedules that set no `dedupDays`",
  ),
  "alerts.maxAttempts": setting(
    integer(1, 100),
    "5",
    "attempts to deliver an alert before it is `dead` (listed, delivered again on redeliver)",
  ),
  "alerts.retryDelay": setting(
    intervalWithin("1 sec", "24 h"),
    "30 sec",
    "wait after an alert's first failed attempt; doubled at each further one",
  ),
  "alerts.maxRetryDelay": setting(
    intervalWithin("1 sec", "7 days"),
    "1 h",
    "longest wait between two attempts, a webhook's `Retry-After` included; at least `alerts.retryDelay`",
  ),
  "alerts.timeout": setting(
    intervalWithin("100 ms", "10 min"),
    "10 sec",
    "how long a webhook may take to answer before the attempt fails",
  ),
  "alerts.keepDelivered": setting(
    intervalWithin("1 h", "400 days"),
    "30 days",
    "how long a delivered alert stays listed (with a KV or PostgreSQL storage)",
  ),
  "alerts.allowPrivateTargets": setting(
    allowList,
    undefined,
    "webhook hosts (`host[:port]`) and CIDRs of the server's own network that alerts may be sent to; every other loopback, link-local (cloud metadata), private, unspecified or multicast address is refused, at creation and again after DNS at delivery",
  ),
};

type SettingsShape = { readonly [K in keyof typeof SETTINGS]: (typeof SETTINGS)[K]["schema"] };

const settingsSchema = z.object(
  Object.fromEntries(
    Object.entries(SETTINGS).map(([key, spec]) => [key, spec.schema]),
  ) as SettingsShape,
);

/** The settings in force, keyed by their flat names (`settings["wgui.port"]`). */
export type Settings = Readonly<z.output<typeof settingsSchema>>;
export type SettingKey = keyof Settings;

/** Every key, in the order of the documentation. */
export const SETTING_KEYS: readonly SettingKey[] = Object.keys(SETTINGS) as SettingKey[];

/** The default of each key as text; undefined means unset. Computed per call (cores, zone). */
export function defaultSettingTexts(): Record<SettingKey, string | undefined> {
  const texts = {} as Record<SettingKey, string | undefined>;
  for (const key of SETTING_KEYS) {
    const d: SettingDefault = SETTINGS[key].default;
    texts[key] = "text" in d ? d.text : "compute" in d ? d.compute() : undefined;
  }
  return texts;
}

function isSettingKey(key: string): key is SettingKey {
  return Object.hasOwn(settingsSchema.shape, key);
}

interface RawValue {
  readonly text: string;
  /** Where the value came from, for messages: `settings.conf line 3`, `--set`. */
  readonly source: string;
}

/** Reads `key = value` lines; `#` starts a comment line. Throws SettingsError on other lines. */
function parseSettingsFile(text: string): Map<string, RawValue> {
  const values = new Map<string, RawValue>();
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const source = `settings.conf line ${i + 1}`;
    const eq = trimmed.indexOf("=");
    if (eq <= 0) {
      problems.push(`${source}: expected 'key = value', found '${trimmed}'`);
      return;
    }
    values.set(trimmed.slice(0, eq).trim(), { text: trimmed.slice(eq + 1).trim(), source });
  });
  if (problems.length > 0) throw new SettingsError(problems);
  return values;
}

/**
 * The settings from the text of settings.conf (null when there is none) and `--set`
 * overrides. Throws SettingsError naming each bad key, its value and the expected form;
 * unknown keys are returned as warnings.
 *
 * @example loadSettings("wgui.port = 9000\n", { "query.retention": "10 min" })
 */
export function loadSettings(
  settingsFileText: string | null,
  overrides: Readonly<Record<string, string>>,
): { settings: Settings; warnings: string[]; explicit: ReadonlySet<SettingKey> } {
  const given = settingsFileText === null
    ? new Map<string, RawValue>()
    : parseSettingsFile(settingsFileText);
  for (const [key, text] of Object.entries(overrides)) {
    given.set(key.trim(), { text: text.trim(), source: "--set" });
  }

  const warnings: string[] = [];
  const raw: Record<string, string | undefined> = defaultSettingTexts();
  const sources = new Map<string, string>();
  for (const [key, value] of given) {
    if (!isSettingKey(key)) {
      warnings.push(`unknown setting '${key}' (${value.source}) is ignored`);
      continue;
    }
    // An empty value unsets an optional key; for the others it is a value to refuse.
    raw[key] = value.text === "" && settingsSchema.shape[key].safeParse(undefined).success
      ? undefined
      : value.text;
    sources.set(key, value.source);
  }

  const parsed = settingsSchema.safeParse(raw);
  if (parsed.success) {
    const d = parsed.data;
    if (d["alerts.maxRetryDelay"] < d["alerts.retryDelay"]) {
      throw new SettingsError([
        `setting 'alerts.maxRetryDelay' = '${
          raw["alerts.maxRetryDelay"]
        }' is shorter than 'alerts.retryDelay' = '${raw["alerts.retryDelay"]}'`,
      ]);
    }
    const explicit = new Set([...sources.keys()].filter(isSettingKey));
    return { settings: parsed.data, warnings, explicit };
  }
  const problems = parsed.error.issues.map((issue) => {
    const key = String(issue.path[0]);
    const source = sources.get(key) ?? "default";
    return `setting '${key}' = '${raw[key]}' (${source}) is not valid: expected ${issue.message}`;
  });
  throw new SettingsError(problems);
}

/** The settings when nothing is configured. */
export function defaultSettings(): Settings {
  return loadSettings(null, {}).settings;
}
