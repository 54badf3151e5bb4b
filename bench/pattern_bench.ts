// deno-lint-ignore-file no-console
/**
 * PARSE speed: the compiled pattern against a hand-written one-RegExp script over a generated,
 * seeded 50 MB combined access log. Run: deno run --allow-all bench/pattern_bench.ts [MB]
 * Both sides build rows with typed values (address, timestamp, numbers); the target is the
 * pattern reaching at least 0.8x the hand-written speed.
 */

import { compilePattern } from "../engine/pattern/compile_pattern.ts";
import { parseHttpDate } from "../engine/values/time_parse.ts";
import { parseIpv4 } from "../engine/values/ip.ts";
import { IpAddr, type Row, Timestamp } from "../engine/values/values.ts";
import { seededRandom } from "../tests/support/seeded_random.ts";

const MB = Number(Deno.args[0] ?? 50);

function generateLog(bytes: number): string {
  const r = seededRandom(42);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  const methods = ["GET", "GET", "GET", "POST", "PUT", "DELETE"];
  const paths = ["/", "/index.html", "/api/v1/items", "/static/app.js", "/login", "/search?q=x"];
  const agents = ["Mozilla/5.0 (X11; Linux x86_64)", "curl/8.5.0", "Googlebot/2.1", "-"];
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct"];
  const parts: string[] = [];
  let size = 0;
  let second = 0;
  while (size < bytes) {
    if (r() < 0.3) second++;
    const ip = `${1 + Math.floor(r() * 223)}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}.${
      Math.floor(r() * 256)
    }`;
    const s = second % 60, m = Math.floor(second / 60) % 60, h = Math.floor(second / 3600) % 24;
    const day = 1 + (Math.floor(second / 86400) % 28);
    const time = `${String(day).padStart(2, "0")}/${
      months[Math.floor(second / 2419200) % 10]
    }/2024:${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}:${
      String(s).padStart(2, "0")
    } +0000`;
    const bytesOut = r() < 0.1 ? "-" : String(Math.floor(r() * 50000));
    const line = `${ip} - ${r() < 0.8 ? "-" : "user" + Math.floor(r() * 100)} [${time}] "${
      pick(methods)
    } ${pick(paths)} HTTP/1.1" ${pick([200, 200, 200, 304, 404, 500])} ${bytesOut} "${
      r() < 0.5 ? "-" : "https://example.com/"
    }" "${pick(agents)}"\n`;
    parts.push(line);
    size += line.length;
  }
  return parts.join("");
}

const PATTERN =
  `IPV4:client ' ' NSPACE:ident ' ' NSPACE:user ' [' HTTPDATE:time '] "' WORD:method ' '
  NSPACE:path ' ' NSPACE:proto '" ' INT:status ' ' (INT:bytes | '-') ' ' DQS:referer ' ' DQS:agent EOL`;

/** What an engineer would write by hand for the same rows. */
const HAND =
  /^(\S+) (\S+) (\S+) \[([^\]]+)\] "(\S+) (\S+) (\S+)" (\d+) (\d+|-) "([^"]*)" "([^"]*)"$/gm;

/**
 * The same, validating as much as the pattern does (IPv4 octets, the date's shape, escaped
 * quotes): it shows what the stricter expression costs apart from the engine around it.
 */
const HAND_STRICT = new RegExp(
  "^((?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(?:\\.(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}) (\\S+) (\\S+) " +
    '\\[(\\d{2}/[A-Za-z]{3}/\\d{4}:\\d{2}:\\d{2}:\\d{2} [-+]\\d{4})\\] "(\\w+) (\\S+) (\\S+)" (\\d+) (\\d+|-) ' +
    '"([^"\\\\\\n]*(?:\\\\.[^"\\\\\\n]*)*)" "([^"\\\\\\n]*(?:\\\\.[^"\\\\\\n]*)*)"\\r?$',
  "gm",
);

function handWritten(text: string, re: RegExp): number {
  let rows = 0;
  let sink = 0;
  for (const m of text.matchAll(re)) {
    const row: Row = {
      client: new IpAddr(4, parseIpv4(m[1]!)),
      ident: m[2]!,
      user: m[3]!,
      time: new Timestamp(parseHttpDate(m[4]!) ?? 0),
      method: m[5]!,
      path: m[6]!,
      proto: m[7]!,
      status: Number(m[8]),
      bytes: m[9] === "-" ? null : Number(m[9]),
      referer: m[10]!,
      agent: m[11]!,
    };
    rows++;
    sink += row.status as number;
  }
  return rows + sink * 0;
}

/** Best time of several rounds, the contenders interleaved so that load on the machine hits all. */
function measure(
  bytes: number,
  contenders: Record<string, () => number>,
  rounds = 5,
): Record<string, number> {
  const best: Record<string, number> = {};
  const rows: Record<string, number> = {};
  for (let k = 0; k <= rounds; k++) {
    for (const [label, run] of Object.entries(contenders)) {
      const t0 = performance.now();
      rows[label] = run();
      const ms = performance.now() - t0;
      if (k > 0) best[label] = Math.min(best[label] ?? Infinity, ms); // round 0 warms up
    }
  }
  const mbps: Record<string, number> = {};
  for (const label of Object.keys(contenders)) {
    mbps[label] = bytes / 1e6 / (best[label]! / 1000);
    console.log(
      `${label.padEnd(40)} ${mbps[label].toFixed(1).padStart(7)} MB/s  (${rows[label]} rows)`,
    );
  }
  return mbps;
}

if (import.meta.main) {
  const text = generateLog(MB * 1e6);
  const bytes = new TextEncoder().encode(text).length;
  console.log(`combined log: ${(bytes / 1e6).toFixed(1)} MB, ${text.split("\n").length - 1} lines`);
  const compiled = compilePattern(PATTERN, { timeZone: "UTC" });
  if (!compiled.ok) throw new Error(compiled.message);
  const pattern = compiled.pattern;
  const all = pattern.makeExtractor(pattern.fields.map((f) => f.name));
  const three = pattern.makeExtractor(["client", "time", "status"]);

  const mbps = measure(bytes, {
    "hand-written RegExp, all fields": () => handWritten(text, HAND),
    "hand-written strict RegExp, all fields": () => handWritten(text, HAND_STRICT),
    "PARSE extractAll, all fields": () => {
      let n = 0;
      all.extractAll(text, 0, text.length, () => n++);
      return n;
    },
    "PARSE extractAll, 3 fields": () => {
      let n = 0;
      three.extractAll(text, 0, text.length, () => n++);
      return n;
    },
    "PARSE per line (split), all fields": () => {
      let n = 0;
      for (const line of text.split("\n")) if (all(line)) n++;
      return n;
    },
  });
  const ours = mbps["PARSE extractAll, all fields"]!;
  const base = mbps["hand-written RegExp, all fields"]!;
  console.log(`ratio PARSE/hand-written (all fields): ${(ours / base).toFixed(2)}`);
  const strict = mbps["hand-written strict RegExp, all fields"]!;
  console.log(`ratio PARSE/hand-written strict (all fields): ${(ours / strict).toFixed(2)}`);
}
