import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { type ChromiumLaunch, findChromium, unpackNpmChromium } from "./browser.ts";

const NPM: ChromiumLaunch = { source: "npm", executablePath: "/npm/chromium", env: {} };
const unpack = () => Promise.resolve(NPM);

Deno.test("findChromium() takes TRAWL_CHROMIUM, else the system's, else npm's", async () => {
  const file = await Deno.makeTempFile();
  try {
    const configured = await findChromium({ configured: file, system: [Deno.execPath()], unpack });
    assert.deepEqual([configured.source, configured.executablePath], ["TRAWL_CHROMIUM", file]);
    const system = await findChromium({
      configured: undefined,
      system: ["/no/such/chromium", file],
      unpack,
    });
    assert.deepEqual([system.source, system.executablePath], ["the system", file]);
    assert.equal(
      await findChromium({ configured: undefined, system: ["/no/such/chromium"], unpack }),
      NPM,
    );
    await assert.rejects(
      findChromium({ configured: "/no/such/chromium", system: [file], unpack }),
      /TRAWL_CHROMIUM=\/no\/such\/chromium names no file/,
    );
  } finally {
    await Deno.remove(file);
  }
});

Deno.test({
  name: "npm's Chromium unpacks without root or a system browser and renders a page",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    // Twice at once, as two test processes may: both get the same whole folder.
    const [npm, again] = await Promise.all([unpackNpmChromium(), unpackNpmChromium()]);
    assert.equal(npm.executablePath, again.executablePath);
    const browser = await chromium.launch({
      executablePath: npm.executablePath,
      env: { ...Deno.env.toObject(), ...npm.env },
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
    });
    try {
      const page = await browser.newPage();
      await page.setContent("<p id=p>Trawl</p>");
      assert.equal(await page.locator("#p").textContent(), "Trawl");
      // Text has a size: the bundled font was found.
      assert.ok(((await page.locator("#p").boundingBox())?.height ?? 0) > 0);
    } finally {
      await browser.close();
    }
  },
});
