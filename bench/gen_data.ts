/**
 * Writes the engine benchmark's data: the same seeded web-server events as a combined-format
 * access log (`bench/data/access.log`) and as JSON lines (`bench/data/events.jsonl`).
 *
 *   deno run --allow-write bench/gen_data.ts           # about 500 MB each
 *   deno run --allow-write bench/gen_data.ts --mb 50   # quick runs
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { seededRandom } from "../tests/support/seeded_random.ts";

export const DATA_DIR = join(dirname(fileURLToPath(import.meta.url)), "data");
export const ACCESS_LOG = join(DATA_DIR, "access.log");
export const EVENTS_JSONL = join(DATA_DIR, "events.jsonl");

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
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
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

if (import.meta.main) {
  const i = Deno.args.indexOf("--mb");
  const mb = i >= 0 ? Number(Deno.args[i + 1]) : 500;
  if (!(mb > 0)) {
    console.error("usage: gen_data.ts [--mb <megabytes>]");
    Deno.exit(2);
  }
  const started = performance.now();
  const events = await generate(mb);
  console.log(
    `wrote ${events} events to ${ACCESS_LOG} and ${EVENTS_JSONL} in ${
      ((performance.now() - started) / 1000).toFixed(1)
    } s`,
  );
}
