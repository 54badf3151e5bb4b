/**
 * What each matcher matches (a piece of regular expression), the type of its field and how a
 * matched text becomes a value. Regular expressions never cross a line end except EOL, so a
 * record is one line unless the pattern says otherwise.
 */

import { ANY, arrayOf, scalar, tupleOf, type Type } from "../values/types.ts";
import { fromLocalParts, truncatedMillis } from "../values/time.ts";
import { MONTHS_SHORT, parseHttpDate, parseIso8601 } from "../values/time_parse.ts";
import { parseIp, parseIpv4 } from "../values/ip.ts";
import { IpAddr, Timestamp, type Value } from "../values/values.ts";
import type { MatcherName } from "./pattern_ast.ts";
import { timestampMatcher } from "./timestamp_matcher.ts";
import { type FileClock, inferYear } from "./year_inference.ts";

export type Converter = (text: string) => Value;
/** Makes a converter; those of year-less timestamps read the year from `clock` (its file). */
export type MakeConverter = (clock: FileClock) => Converter;

export interface MatcherSpec {
  /** Matched around the captured part without being part of the value (DQS's quotes). */
  readonly before: string;
  readonly body: string;
  readonly after: string;
  readonly type: Type;
  /** The conversion can give null for a matched text (out of range, invalid date, ...). */
  readonly canFail: boolean;
  /** When optional, a lone `-` (the log convention for "no value") also counts as absent. */
  readonly dashIsAbsent: boolean;
  readonly makeConverter: MakeConverter;
}

// The shape of an IPv4 address; an octet above 255 gives null on conversion. Checking the range
// in the expression costs about 5% of PARSE speed on access logs, for addresses logs never hold.
const IPV4 = "\\d{1,3}(?:\\.\\d{1,3}){3}";
const IPV6 = `(?:[0-9A-Fa-f]{0,4}:){2,7}(?:${IPV4}|[0-9A-Fa-f]{1,4})?`;
// The "unrolled loop" form: each character has one way to match, fast and never exponential.
const QUOTED_BODY = '[^"\\\\\\n]*(?:\\\\.[^"\\\\\\n]*)*';
const QUOTED = `"${QUOTED_BODY}"`;
const ISO8601 = "\\d{4}-\\d{2}-\\d{2}(?:[Tt ]\\d{2}:\\d{2}(?::\\d{2}(?:[.,]\\d+)?)?" +
  "(?: ?(?:[Zz]|[-+]\\d{2}(?::?\\d{2})?))?)?";
const KV = `[\\w.\\-]+=(?:${QUOTED}|[^\\s"]*)`;

// HOSTPORT: `host:port`, the host a name, an IPv4 address or an IPv6 address in brackets.
const HOSTPORT = `(?:\\[[0-9A-Fa-f:.]+\\]|[\\w.\\-]+):\\d{1,5}`;
const HOSTPORT_TYPE = tupleOf([
  { name: "host", type: scalar("STRING"), nullable: false },
  { name: "port", type: scalar("INTEGER"), nullable: true },
]);

function parseHostPort(s: string): Value {
  const colon = s.lastIndexOf(":");
  let host = s.slice(0, colon);
  if (host.startsWith("[")) host = host.slice(1, -1);
  const port = Number(s.slice(colon + 1));
  return { host, port: port <= 65535 ? port : null };
}

// IPLIST: addresses separated by commas (and spaces), as X-Forwarded-For holds them.
const IPLIST = `(?:${IPV4}|${IPV6})(?:,[ \\t]*(?:${IPV4}|${IPV6}))*`;

function parseIpList(s: string): Value {
  return s.split(",").map((a) => parseIp(a.trim()));
}

/**
 * A balanced JSON object or array, nested up to `depth` levels; strings may hold brackets.
 * Each character has one way to match, so failing never backtracks exponentially.
 */
function jsonSource(depth: number): string {
  const atom = `[^{}\\[\\]"\\n]|${QUOTED}`;
  let inner = "";
  for (let d = 0; d <= depth; d++) {
    const nested = d === 0 ? "" : `|${inner}`;
    inner = `\\{(?:${atom}${nested})*\\}|\\[(?:${atom}${nested})*\\]`;
  }
  return inner;
}

function spec(
  body: string,
  type: Type,
  makeConverter: MakeConverter,
  extra: Partial<MatcherSpec> = {},
): MatcherSpec {
  return {
    before: "",
    after: "",
    body,
    type,
    canFail: false,
    dashIsAbsent: true,
    makeConverter,
    ...extra,
  };
}

/** The converter of text fields: the extractor copies the text without calling it. */
export const identity: Converter = (s) => s;
const asString: MakeConverter = () => identity;

/**
 * Remembers the last conversion: consecutive log lines often share a timestamp. The file's
 * clock is part of the key, for the year of year-less timestamps.
 */
function cached(convert: (s: string, clock: FileClock) => number | null): MakeConverter {
  return (clock) => {
    let lastText = "";
    let lastVersion = -1;
    let lastValue: Value = null;
    return (s) => {
      if (s !== lastText || clock.version !== lastVersion) {
        const ms = convert(s, clock);
        lastValue = ms === null ? null : new Timestamp(ms);
        lastText = s;
        lastVersion = clock.version;
      }
      return lastValue;
    };
  };
}

// SYSLOGTIME, BSD syslog's time (RFC 3164): `Jul  1 09:10:11`, the day padded with a space (or
// a zero, or not at all), optionally with a fraction of a second; no year.
const SYSLOGTIME = "[A-Z][a-z]{2} {1,2}\\d{1,2} \\d{2}:\\d{2}:\\d{2}(?:\\.\\d{1,9})?";
const SYSLOGTIME_PARTS = /^([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/;

function parseSyslogTime(s: string, clock: FileClock, zone: string): number | null {
  const m = SYSLOGTIME_PARTS.exec(s);
  if (m === null) return null;
  const month = MONTHS_SHORT.indexOf(m[1]!) + 1;
  const day = Number(m[2]), hour = Number(m[3]), minute = Number(m[4]), second = Number(m[5]);
  if (month === 0 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null;
  const millis = m[6] === undefined ? 0 : Math.floor(Number(`0.${m[6]}`) * 1000);
  return inferYear(
    (year) => {
      if (day > daysInMonth(year, month)) return null;
      const fields = { year, month, day, hour, minute, second: Math.min(second, 59), millis };
      return fromLocalParts(fields, zone);
    },
    clock,
    zone,
  );
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

// SYSLOG5424, the time of an RFC 5424 header: RFC 3339 with at most 6 digits of fraction, or
// the NILVALUE `-` (no time: null).
const SYSLOG5424 =
  "-|\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d{1,6})?(?:Z|[-+]\\d{2}:\\d{2})";

function unescapeQuoted(s: string): string {
  if (!s.includes("\\")) return s;
  return s.replace(/\\(.)/g, (_, c: string) => c === "n" ? "\n" : c === "t" ? "\t" : c);
}

const PAIRS = new RegExp(`([\\w.\\-]+)=(${QUOTED}|[^\\s"]*)`, "g");

function parseKvp(s: string, pairs: RegExp = PAIRS): Value {
  const out: Record<string, Value> = {};
  for (const m of s.matchAll(pairs)) {
    const v = m[2]!;
    out[m[1]!] = v.startsWith('"') ? unescapeQuoted(v.slice(1, -1)) : v;
  }
  return out;
}

/** The specification of a matcher; `argument` is TIMESTAMP's time pattern or REGEX's source. */
export function matcherSpec(
  matcher: MatcherName,
  argument: string | null,
  timeZone: string,
  /** The matcher is the pattern's last element (DATA then takes the rest of the record). */
  last = false,
): MatcherSpec {
  switch (matcher) {
    case "INT":
      return spec("[-+]?\\d+", scalar("INTEGER"), () => (s) => {
        const n = Number(s);
        return n >= -2147483648 && n <= 2147483647 ? n : null;
      }, { canFail: true });
    case "LONG":
      return spec("[-+]?\\d+", scalar("LONG"), () => (s) => {
        const n = Number(s);
        return Number.isSafeInteger(n) ? n : null;
      }, { canFail: true });
    case "DOUBLE":
      return spec(
        "[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][-+]?\\d+)?",
        scalar("DOUBLE"),
        () => Number,
      );
    case "BOOL":
      return spec(
        "[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]",
        scalar("BOOLEAN"),
        () => (s) => s.length === 4,
      );
    case "WORD":
      return spec("\\w+", scalar("STRING"), asString);
    case "NSPACE":
      return spec("\\S+", scalar("STRING"), asString, { dashIsAbsent: false });
    case "LD":
      return spec("[^\\n]*?", scalar("STRING"), asString, { dashIsAbsent: false });
    case "DQS":
      return spec(QUOTED_BODY, scalar("STRING"), () => unescapeQuoted, {
        before: '"',
        after: '"',
        dashIsAbsent: false,
      });
    case "IPV4":
      return spec(IPV4, scalar("IPADDR"), () => (s) => {
        const bits = parseIpv4(s);
        return bits < 0 ? null : new IpAddr(4, bits);
      }, { canFail: true });
    case "IPV6":
      return spec(IPV6, scalar("IPADDR"), () => parseIp, { canFail: true });
    case "IPADDR":
      // IPv4 first, the common case: no text matches both (digits then "." against hex
      // digits then ":"), so the order changes only how soon the match is found.
      return spec(`${IPV4}|${IPV6}`, scalar("IPADDR"), () => (s) => {
        if (s.includes(":")) return parseIp(s);
        const bits = parseIpv4(s);
        return bits < 0 ? null : new IpAddr(4, bits);
      }, { canFail: true });
    case "HTTPDATE":
      return spec(
        "\\d{2}/[A-Za-z]{3}/\\d{4}:\\d{2}:\\d{2}:\\d{2} [-+]\\d{4}",
        scalar("TIMESTAMP"),
        cached(parseHttpDate),
        { canFail: true },
      );
    case "ISO8601":
      return spec(ISO8601, scalar("TIMESTAMP"), cached((s) => parseIso8601(s, timeZone)), {
        canFail: true,
      });
    case "TIMESTAMP": {
      const { source, parse, parseInYear } = timestampMatcher(argument ?? "");
      const convert = parseInYear === null
        ? cached((s) => parse(s, timeZone))
        : cached((s, clock) => inferYear((y) => parseInYear(s, y, timeZone), clock, timeZone));
      return spec(source, scalar("TIMESTAMP"), convert, { canFail: true });
    }
    case "SYSLOGTIME":
      return spec(
        SYSLOGTIME,
        scalar("TIMESTAMP"),
        cached((s, clock) => parseSyslogTime(s, clock, timeZone)),
        { canFail: true },
      );
    case "SYSLOG5424":
      return spec(
        SYSLOG5424,
        scalar("TIMESTAMP"),
        cached((s) => s === "-" ? null : parseIso8601(s, timeZone)),
        { canFail: true, dashIsAbsent: false },
      );
    case "JSON":
      return spec(jsonSource(6), ANY, () => (s) => {
        try {
          return JSON.parse(s) as Value;
        } catch {
          return null;
        }
      }, { canFail: true });
    case "KVP": {
      if (argument === null) return spec(`${KV}(?:[ \\t]+${KV})*`, ANY, () => parseKvp);
      // Pairs separated by `argument` (and white space around it): `a=1, b=2`, `a=1;b=2`.
      const sep = argument.replace(/[\\^$.*+?()[\]{}|\-\/]/g, "\\$&");
      const kv = `[\\w.\\-]+=(?:${QUOTED}|[^\\s"${sep}]*)`;
      const pairs = new RegExp(`([\\w.\\-]+)=(${QUOTED}|[^\\s"${sep}]*)`, "g");
      return spec(`${kv}(?:[ \\t]*${sep}[ \\t]*${kv})*`, ANY, () => (s) => parseKvp(s, pairs));
    }
    case "JAVANAME":
      return spec("[\\w$.]+", scalar("STRING"), asString);
    case "HOSTPORT":
      return spec(HOSTPORT, HOSTPORT_TYPE, () => parseHostPort, { canFail: true });
    case "IPLIST":
      return spec(IPLIST, arrayOf(scalar("IPADDR")), () => parseIpList);
    case "EPOCH":
      // Truncated to the millisecond, as every reader of times does (truncatedMillis).
      return spec(
        "\\d{1,12}(?:\\.\\d{1,9})?",
        scalar("TIMESTAMP"),
        () => (s) => new Timestamp(truncatedMillis(Number(s))),
      );
    case "EPOCHMS":
      return spec("\\d{1,15}", scalar("TIMESTAMP"), () => (s) => new Timestamp(Number(s)));
    case "DATA":
      return spec(last ? "[\\s\\S]*" : "[\\s\\S]*?", scalar("STRING"), asString, {
        dashIsAbsent: false,
      });
    case "SPACE":
      return spec("[ \\t]+", scalar("STRING"), asString, { dashIsAbsent: false });
    case "EOL":
      // Placed by the compiler: a line break in the middle, the end of the line at the end.
      return spec("\\r?\\n", scalar("STRING"), asString, { dashIsAbsent: false });
    case "REGEX":
      return spec(argument ?? "", scalar("STRING"), asString, { dashIsAbsent: false });
  }
}
