/**
 * The Detections tab as a person uses it (issue 27 item 10), in headless Chromium against a real
 * server and a real webhook receiver on loopback: a schedule created from the form, listed with
 * its next run, edited (the webhook's secret kept), run now (its alert dead after the receiver
 * failed), the dead alert redelivered, a Sigma rule converted with its mapping and put into the
 * form, the schedule deleted; axe-core in light and dark mode; artefacts/schedules-*.png at 1280
 * and 640 px and dark.
 */

import assert from "node:assert/strict";
import { openBrowser } from "./browser.ts";
import { seriousAxeFindings } from "./axe.ts";
import { startTestServer } from "../api/server.ts";
import { signature } from "../../actors/alert_outbox.ts";

const RULE = Deno.readTextFileSync(new URL("../sigma/rules/signin_failures.yml", import.meta.url));
const SECRET = "webhook-secret-0123456789";

Deno.test({
  name: "a person creates, edits, runs and deletes a schedule; a dead alert is redelivered",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    // The receiver: fails while `failing`, and keeps what it was sent.
    let failing = true;
    const received: { body: string; headers: Headers }[] = [];
    const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
      received.push({ body: await req.text(), headers: req.headers });
      return new Response(failing ? "down" : "ok", { status: failing ? 500 : 200 });
    });
    const hook = `http://127.0.0.1:${receiver.addr.port}/hook`;
    await using s = await startTestServer({
      "alerts.allowPrivateTargets": `127.0.0.1:${receiver.addr.port}`,
      "alerts.maxAttempts": "1",
    });
    await using b = await openBrowser();
    const { page } = b;
    const api = async (path: string) => {
      const r = await s.fetch("alice", `/API/v1.0${path}`);
      return { status: r.status, json: r.status === 200 ? await r.json() : await r.text() };
    };

    try {
      await t.step("signs in; the tab says there are no schedules yet", async () => {
        await page.goto(s.url + "/");
        await page.getByLabel("Token").fill(s.tokens.alice!);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("tab", { name: "Detections" }).click();
        await page.getByText("No schedules yet: create one below.").waitFor();
      });

      await t.step("creates a schedule from the form; it is listed with its next run", async () => {
        const form = page.getByRole("form", { name: "New schedule" });
        await form.getByLabel("Name").fill("bob signs in");
        await form.getByLabel("Script").fill(
          "init(from::TIMESTAMP, to::TIMESTAMP);\nVALUES((id: 'x1', user: 'bob'))",
        );
        await form.getByLabel("Every (minutes)").fill("15");
        await form.getByLabel("Look-back (minutes)").fill("60");
        await form.getByLabel("Webhook URL").fill(hook);
        await form.getByLabel("Webhook secret").fill(SECRET);
        await form.getByRole("button", { name: "Create schedule" }).click();
        await page.getByText("Created bob signs in.").waitFor();
        const block = page.getByRole("region", { name: "Schedule bob signs in" });
        await block.getByText(/a script, every 15 min, look-back 60 min, enabled/).waitFor();
        assert.equal(await block.locator('[data-fact="last-run"]').innerText(), "none yet");
        const next = await block.locator('[data-fact="next-run"]').innerText();
        assert.ok(!Number.isNaN(Date.parse(next)), `next run: ${next}`);
        // The form is empty again, the secret not kept in the page.
        assert.equal(await form.getByLabel("Webhook secret").inputValue(), "");
        assert.ok(!(await page.content()).includes(SECRET));
        await b.shot("schedules-1-created");
      });

      await t.step("edits it: the new cadence is listed, the webhook's secret kept", async () => {
        // Fields the form does not show, set through the API, survive the edit.
        const listed = (await api("/schedules")).json as { schedules: { id: string }[] };
        const id = listed.schedules[0]!.id;
        const put = await s.fetch("alice", `/API/v1.0/schedules/${id}`, {
          method: "PUT",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({
            name: "bob signs in",
            script: "init(from::TIMESTAMP, to::TIMESTAMP);\nVALUES((id: 'x1', user: 'bob'))",
            everyMinutes: 15,
            lookbackMinutes: 60,
            dedupDays: 7,
            suppress: { fields: ["user"], forMinutes: 1 },
            webhook: { url: hook },
          }),
        });
        assert.equal(put.status, 200, await put.text());
        await page.getByRole("button", { name: "Edit bob signs in" }).click();
        const form = page.getByRole("form", { name: "Edit bob signs in" });
        assert.equal(await form.getByLabel("Every (minutes)").inputValue(), "15");
        assert.equal(await form.getByLabel("Webhook URL").inputValue(), hook);
        assert.equal(await form.getByLabel("Webhook secret").inputValue(), "");
        await form.getByText("(set: leave empty to keep it)").waitFor();
        // A cron the server refuses: said in the form, nothing changed.
        await form.getByLabel("When").selectOption("cron");
        await form.getByLabel("Cron").fill("every day");
        await form.getByRole("button", { name: "Save schedule" }).click();
        await form.getByRole("alert").filter({ hasText: /cron/ }).waitFor();
        await form.getByLabel("When").selectOption("every");
        await form.getByLabel("Every (minutes)").fill("30");
        await form.getByRole("button", { name: "Save schedule" }).click();
        await page.getByText("Saved bob signs in.").waitFor();
        const block = page.getByRole("region", { name: "Schedule bob signs in" });
        await block.getByText(/every 30 min/).waitFor();
        const { json } = await api("/schedules");
        const [stored] = (json as {
          schedules: {
            everyMinutes: number;
            webhook: unknown;
            dedupDays: number;
            suppress: unknown;
          }[];
        })
          .schedules;
        assert.equal(stored!.everyMinutes, 30);
        assert.deepEqual(stored!.webhook, { url: hook, secret: "(hidden)" });
        assert.deepEqual(
          [stored!.dedupDays, stored!.suppress],
          [7, { fields: ["user"], forMinutes: 1 }],
        );
      });

      await t.step(
        "runs it now: the run is listed, its alert dead once the hook failed",
        async () => {
          const block = page.getByRole("region", { name: "Schedule bob signs in" });
          await block.getByRole("button", { name: "Run now (last 60 min): bob signs in" }).click();
          await block.locator('[data-fact="last-run"]').getByText(/^succeeded, 1 matches, 1 alerts/)
            .waitFor();
          const runs = block.getByRole("table", { name: "Runs of bob signs in" });
          await runs.getByRole("cell", { name: "succeeded" }).waitFor();
          const alerts = block.getByRole("table", { name: "Alerts of bob signs in" });
          const row = alerts.locator("tbody tr").first();
          await row.getByRole("cell", { name: "dead", exact: true }).waitFor();
          assert.match(await row.innerText(), /x1[\s\S]*dead[\s\S]*1[\s\S]*500/);
          assert.equal(received.length, 1);
          await b.shot("schedules-2-dead-alert");
        },
      );

      await t.step(
        "redelivers the dead alert: delivered, signed with the kept secret",
        async () => {
          failing = false;
          const block = page.getByRole("region", { name: "Schedule bob signs in" });
          await block.getByRole("button", { name: "Redeliver alert x1" }).click();
          const alerts = block.getByRole("table", { name: "Alerts of bob signs in" });
          await alerts.getByRole("cell", { name: "delivered", exact: true }).waitFor();
          assert.equal(await alerts.getByRole("button", { name: /^Redeliver/ }).count(), 0);
          assert.equal(received.length, 2);
          const last = received[1]!;
          assert.equal(
            last.headers.get("Trawl-Signature"),
            `sha256=${await signature(SECRET, last.body)}`,
          );
          assert.match(last.headers.get("Idempotency-Key") ?? "", /\|x1$/);
          await block.getByText(/1 delivered/).waitFor();
        },
      );

      await t.step("converts a pasted Sigma rule, shows its mapping, schedules it", async () => {
        await page.getByLabel("Sigma rule (YAML)").fill(RULE);
        await page.getByRole("button", { name: "Convert" }).click();
        const mapping = page.getByRole("table", { name: "Field mapping" });
        await mapping.getByRole("cell", { name: "ResultType" }).waitFor();
        await mapping.getByRole("cell", { name: "status.errorCode" }).waitFor();
        assert.match(await page.getByLabel("Converted script").innerText(), /READ_JSON\(/);
        await b.shot("schedules-3-sigma");
        await page.getByRole("button", { name: "Schedule this rule" }).click();
        const form = page.getByRole("form", { name: "New schedule" });
        assert.equal(await form.getByLabel("Runs").inputValue(), "sigma");
        assert.equal(await form.getByLabel("Rule (Sigma YAML)").inputValue(), RULE);
        assert.notEqual(await form.getByLabel("Name").inputValue(), "");
        await form.getByLabel("Name").fill("sign-in failures");
        await form.getByRole("button", { name: "Create schedule" }).click();
        const block = page.getByRole("region", { name: "Schedule sign-in failures" });
        await block.getByText(/a Sigma rule, every 15 min, look-back 60 min, enabled/).waitFor();
        await block.getByText(/\(no webhook\)/).waitFor();
        await block.getByText("No runs yet.").waitFor();
        await block.getByText("No alerts.").waitFor();
      });

      await t.step("light and dark, 1280 and 640 px: no serious axe finding", async () => {
        for (const scheme of ["light", "dark"] as const) {
          await page.emulateMedia({ colorScheme: scheme });
          for (const width of [1280, 640]) {
            await page.setViewportSize({ width, height: 900 });
            await page.getByRole("region", { name: "Schedule bob signs in" }).waitFor();
            await b.shot(`schedules-tab-${width}-${scheme}`);
            const wide = await page.evaluate("document.documentElement.scrollWidth") as number;
            assert.ok(wide <= width + 20, `the tab is ${wide}px wide at ${width}px`);
            assert.deepEqual(await seriousAxeFindings(page), [], `${scheme}, ${width}px`);
          }
        }
        await page.emulateMedia({ colorScheme: "light" });
        await page.setViewportSize({ width: 1280, height: 900 });
      });

      await t.step("deletes it after a confirmation", async () => {
        const asked: string[] = [];
        page.once("dialog", (d) => {
          asked.push(d.message());
          d.accept();
        });
        await page.getByRole("button", { name: "Delete bob signs in" }).click();
        await page.getByRole("region", { name: "Schedule bob signs in" }).waitFor({
          state: "detached",
        });
        assert.match(asked[0] ?? "", /Delete the schedule bob signs in\?/);
        page.once("dialog", (d) => d.accept());
        await page.getByRole("button", { name: "Delete sign-in failures" }).click();
        await page.getByText("No schedules yet: create one below.").waitFor();
        assert.deepEqual((await api("/schedules")).json, { schedules: [] });
      });

      await t.step("no errors in the page", () => {
        // The refused cron's 400 is the only failed request.
        assert.deepEqual(
          b.errors.filter((e) =>
            !/Applying inline style violates|responded with a status of 400/.test(e)
          ),
          [],
        );
      });
    } finally {
      await receiver.shutdown();
    }
  },
});
