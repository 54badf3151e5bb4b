/**
 * Headless Chromium (Debian's, /usr/bin/chromium) driven by playwright-core, for the console's
 * browser tests. A missing browser is an error, never a skip: .ci/run installs it.
 */

import { type Browser, chromium, type Page } from "playwright-core";
import { join } from "node:path";

export const CHROMIUM = Deno.env.get("TRAWL_CHROMIUM") ?? "/usr/bin/chromium";
export const ARTEFACTS = new URL("./artefacts/", import.meta.url).pathname;

export interface BrowserSession extends AsyncDisposable {
  readonly page: Page;
  /** Messages of console errors and uncaught exceptions in the page. */
  readonly errors: string[];
  /** Saves a screenshot as artefacts/<name>.png. */
  shot(name: string): Promise<string>;
}

export async function openBrowser(): Promise<BrowserSession> {
  try {
    await Deno.stat(CHROMIUM);
  } catch {
    throw new Error(
      `\n\n*** NO CHROMIUM at ${CHROMIUM}: the console's browser tests cannot run. ***\n` +
        "*** Install it (apt-get install -y chromium) or set TRAWL_CHROMIUM. ***\n",
    );
  }
  await Deno.mkdir(ARTEFACTS, { recursive: true });
  const profile = await Deno.makeTempDir({ prefix: "trawl-chromium-" });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
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
  });
  const page = context.pages()[0] ?? await context.newPage();
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(`uncaught: ${e.message}`));
  return {
    page,
    errors,
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
