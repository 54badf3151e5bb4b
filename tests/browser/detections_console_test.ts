/**
 * The Detections tab in headless Chromium against a real server: a schedule created through the
 * API is listed with its run; a Sigma rule pasted is converted with its script and field mapping;
 * axe-core finds nothing critical or serious (artefacts/detections-*.png at 1280 and 640 px).
 */

import assert from "node:assert/strict";
import { openBrowser } from "./browser.ts";
import { seriousAxeFindings } from "./axe.ts";
import { startTestServer } from "../api/server.ts";

const RULE = Deno.readTextFileSync(new URL("../sigma/rules/signin_failures.yml", import.meta.url));

Deno.test({
  name: "the Detections tab lists a schedule with its run and converts a pasted Sigma rule",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using s = await startTestServer();
    const token = s.tokens.alice!;
    const json = { "Content-Type": "application/json" };
    const created = await s.fetch("alice", "/API/v1.0/schedules", {
      method: "POST",
      headers: json,
      body: JSON.stringify({
        name: "bob <b>signs</b> in",
        everyMinutes: 15,
        lookbackMinutes: 60,
        script: "init(from::TIMESTAMP, to::TIMESTAMP);\nVALUES((id: 'x1', user: 'bob'))",
      }),
    });
    assert.equal(created.status, 201);
    const { id } = await created.json();
    const ran = await s.fetch("alice", `/API/v1.0/schedules/${id}/run`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ from: "2026-03-09T00:00:00Z", to: "2026-03-10T00:00:00Z" }),
    });
    assert.equal(ran.status, 200, await ran.text());
    await using b = await openBrowser();
    const { page } = b;
    await page.goto(s.url + "/");
    await page.getByLabel("Token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("tab", { name: "Detections" }).click();
    // The name is text, not markup.
    await page.getByRole("heading", { name: "bob <b>signs</b> in" }).waitFor();
    const runs = page.getByRole("table", { name: "Runs of bob <b>signs</b> in" });
    await runs.getByRole("cell", { name: "succeeded" }).waitFor();
    await page.getByLabel("Sigma rule (YAML)").fill(RULE);
    await page.getByRole("button", { name: "Convert" }).click();
    const script = await page.getByLabel("Converted script").innerText();
    assert.match(script, /READ_JSON\(src: 'cloudapi:/);
    const mapping = page.getByRole("table", { name: "Field mapping" });
    await mapping.getByRole("cell", { name: "ResultType" }).waitFor();
    await mapping.getByRole("cell", { name: "status.errorCode" }).waitFor();
    assert.deepEqual(await seriousAxeFindings(page), []);
    await b.shot("detections-1280");
    await page.setViewportSize({ width: 640, height: 900 });
    await b.shot("detections-640");
  },
});
