/**
 * Server settings: `key = value` lines in `conf/settings.conf`, overridden by `--set key=value`.
 * Every key has a default written as text and goes through the same zod schema as a value
 * from the file, so a default can never be of another form than what a user may write.
 */

import { z } from "zod";
import { INTERVAL_FORM, parseInterval } from "../engine/interval.ts";
import { BYTE_SIZE_FORM, parseByteSize } from "./byte_size.ts";
import { isTimeZone, processTimeZone } from "./time_zone.ts";

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

const byteSize = fromText(BYTE_SIZE_FORM, parseByteSize);

const boolean = fromText("true or false", (text) => {
  const lower = text.toLowerCase();
  return lower === "true" ? true : lower === "false" ? false : undefined;
});

const timeZone = fromText(
  "an IANA time zone such as 'UTC' or 'Europe/Berlin'",
  (text) => isTimeZone(text) ? text : undefined,
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

const settingsSchema = z.object({
  "wgui.host": host,
  "wgui.port": integer(0, 65535),
  "query.retention": interval,
  "query.expiredMemory": interval,
  "query.maxRunning": integer(1),
  "query.workers": integer(1),
  "query.maxQueued": integer(0),
  "query.maxScriptBytes": byteSize,
  "query.memoryLimit": byteSize,
  "query.resultMemoryBytes": byteSize,
  "resource.maxBytes": byteSize,
  "server.timeZone": timeZone,
  "log.requests": boolean,
  "cloudapi.loginHost": baseUrl,
  "cloudapi.graphHost": baseUrl,
  "cloudapi.manageHost": baseUrl,
  "cloudapi.directoryRateLimit": integer(1),
  "cloudapi.directoryRateTimeunit": interval,
  "cloudapi.activityRateLimit": integer(1),
  "cloudapi.activityRateTimeunit": interval,
  "cloudapi.suiteRateLimit": integer(1),
  "cloudapi.suiteRateTimeunit": interval,
});

/** The settings in force, keyed by their flat names (`settings["wgui.port"]`). */
export type Settings = Readonly<z.output<typeof settingsSchema>>;
export type SettingKey = keyof Settings;

/** Every key, in the order of the documentation. */
export const SETTING_KEYS: readonly SettingKey[] = Object.keys(
  settingsSchema.shape,
) as SettingKey[];

/** The default of each key as text; undefined means unset. Computed per call (cores, zone). */
export function defaultSettingTexts(): Record<SettingKey, string | undefined> {
  return {
    "wgui.host": "127.0.0.1",
    "wgui.port": "8388",
    "query.retention": "5 min",
    "query.expiredMemory": "24 h",
    "query.maxRunning": String(Math.max(1, navigator.hardwareConcurrency || 1)),
    "query.workers": String(Math.max(1, navigator.hardwareConcurrency || 1)),
    "query.maxQueued": "100",
    "query.maxScriptBytes": "1 MiB",
    "query.memoryLimit": "1 GiB",
    "query.resultMemoryBytes": "32 MiB",
    "resource.maxBytes": "16 MiB",
    "server.timeZone": processTimeZone(),
    "log.requests": "true",
    "cloudapi.loginHost": undefined,
    "cloudapi.graphHost": undefined,
    "cloudapi.manageHost": undefined,
    "cloudapi.directoryRateLimit": "25",
    "cloudapi.directoryRateTimeunit": "10 sec",
    "cloudapi.activityRateLimit": "25",
    "cloudapi.activityRateTimeunit": "10 sec",
    "cloudapi.suiteRateLimit": "60000",
    "cloudapi.suiteRateTimeunit": "1 min",
  };
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
): { settings: Settings; warnings: string[] } {
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
  if (parsed.success) return { settings: parsed.data, warnings };
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
