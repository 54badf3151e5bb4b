/**
 * Rows while the query runs, in the console (issue 27, item 5), in headless Chromium against a
 * real server and a real, large log: while the status says RUNNING the page shows what the query
 * has read (bytes, records), the time it has run and the time left, and the first rows of its
 * result as they arrive; once it ends, the preview goes. axe-core finds nothing critical or
 * serious on the running page, light or dark; screenshots in tests/browser/artefacts/running-*.png (1280, 640, dark).
 */

import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { openBrowser } from "./browser.ts";
import { seriousAxeFindings } from "./axe.ts";
import { startTestServer } from "../api/server.ts";
import { SLOW_SCRIPT, writeBigLog } from "../api/client.ts";

/** Waits (polling) until `check` holds; fails naming `what` after some 60 s. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0;; tries++) {
    if (await check()) return;
    assert.ok(tries < 600, `still waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What the page shows now, read in one go: the state, the stats line, the preview's rows. */
function seen(page: Page): Promise<Seen> {
  // A string: the test is type-checked without the DOM's types.
  return page.evaluate(`(() => {
    const text = (sel) => document.querySelector(sel)?.textContent ?? "";
    const table = document.querySelector('table[aria-label="First rows so far"]');
    return {
      state: text('output[aria-label="State"]'),
      stats: text('output[aria-label="Stats"]'),
      header: [...(table?.querySelectorAll("th") ?? [])].map((th) => th.textContent ?? ""),
      first: [...(table?.querySelectorAll("tbody tr") ?? [])].map((tr) =>
        tr.querySelector("td")?.textContent ?? ""),
    };
  })()`) as Promise<Seen>;
}

interface Seen {
  readonly state: string;
  readonly stats: string;
  readonly header: string[];
  readonly first: string[];
}

Deno.test({
  name: "while a query runs, the console shows its progress and its first rows as they arrive",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using s = await startTestServer();
    const token = await s.deps.users.add("root", { admin: true });
    const big = await writeBigLog(s, 1_500_000);
    // Hard links: 24 files' worth of reading for one file's bytes. The query must outlast the
    // screenshots and axe's two runs below (a busy run once saw it end before the Cancel).
    for (let n = 2; n <= 24; n++) await Deno.link(big, big.replace("big.log", `big${n}.log`));
    await using b = await openBrowser();
    const { page } = b;
    await page.goto(s.url + "/");
    await page.getByLabel("Token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Run", exact: true }).waitFor();

    const content = page.locator('.cm-content[aria-label="Script"]');
    await content.click();
    await page.keyboard.press("Control+a");
    await page.keyboard.press("Delete");
    // A value that looks like markup stays text in the preview.
    const script = SLOW_SCRIPT.replace("big.log", "big*.log") +
      " | select(n, x, '<b>bold</b>' as tag)";
    await content.fill(script);
    await until(
      async () => (await content.innerText()).trim() === script,
      "the editor's script",
    );
    await page.keyboard.press("Escape");
    await page.keyboard.press("Control+Enter");

    // Rows while the status says RUNNING: both read from the page at one moment.
    let now = await seen(page);
    await until(async () => {
      now = await seen(page);
      assert.ok(!["SUCCEEDED", "FAILED", "CANCELLED"].includes(now.state), "ended first");
      return now.state === "RUNNING" && now.first.length > 0;
    }, "rows while RUNNING");
    assert.deepEqual(now.header, ["n", "x", "tag"]);
    // The result's first rows, in order: the lines 0, 500, 1000, ...
    assert.deepEqual(now.first, now.first.map((_, i) => String(500 * i)));
    const preview = page.getByRole("region", { name: "Rows so far" });
    assert.equal(await preview.locator("td", { hasText: "<b>bold</b>" }).count(), now.first.length);
    assert.equal(await preview.locator("b").count(), 0, "no markup from the data");
    await page.getByText(/^The first [\d,]+ rows, while the query runs/).waitFor();

    // The stats: bytes and records read, the time run, and the time left once it is known.
    await until(async () => {
      now = await seen(page);
      assert.equal(now.state, "RUNNING", `ended before the time left showed: ${now.stats}`);
      return / read · [\d,]+ records · .* · about .* left$/.test(now.stats);
    }, "the stats with the time left");
    assert.match(now.stats, /^[\d,]+ rows · [\d.]+ [KMG]B read · /);
    await b.shot("running-1280");
    // axe itself sets inline styles, which the page's CSP refuses: none before it ran.
    assert.deepEqual(b.errors.filter((e) => /inline style/.test(e)), []);
    assert.deepEqual(await seriousAxeFindings(page), []);
    await page.setViewportSize({ width: 640, height: 900 });
    await b.shot("running-640");
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ colorScheme: "dark" });
    await b.shot("running-dark");
    // Dark: nothing either (the editor's active line once made its keywords 3.5:1).
    assert.deepEqual(await seriousAxeFindings(page), []);
    await page.emulateMedia({ colorScheme: "light" });

    // Cancelled: the preview goes, the stats say what it did without a time left.
    assert.equal((await seen(page)).state, "RUNNING", "the query ended before it was cancelled");
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.locator('output[aria-label="State"]', { hasText: "CANCELLED" }).waitFor({
      timeout: 60_000,
    });
    await until(async () => (await preview.count()) === 0, "the preview to go");
    await until(async () => !(await seen(page)).stats.includes("left"), "no time left");
    // A page asked for before the query ran is refused (409): the next tick asks again.
    const unexpected = b.errors.filter((e) =>
      !/Failed to load resource: the server responded with a status of 409/.test(e) &&
      !/Applying inline style violates/.test(e)
    );
    assert.deepEqual(unexpected, []);
  },
});
