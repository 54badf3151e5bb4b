/**
 * The console's hygiene (issue 27 item 9), against a real server, real Chromium and the cloud
 * emulator: the assets revalidated with their ETag (304), "Test connection" of a datastore form
 * that is not saved, and the statecharts: substates drawn, no label over another label or under a
 * box (read from the drawn SVG's boxes), every transition listed, the followed query's state
 * changes with their times; axe-core in light and dark mode; artefacts/hygiene-*.png at 1280 and
 * 640 px and dark.
 */

import assert from "node:assert/strict";
import { openBrowser } from "./browser.ts";
import { seriousAxeFindings } from "./axe.ts";
import { startTestServer } from "../api/server.ts";
import { CloudEmulator } from "../emulator/emulator.ts";
import { CLIENT, HOUR, SECRET, TENANT } from "../cloudapi/harness.ts";

interface Clash {
  readonly machine: string;
  readonly what: string;
}

/** In the page: every pair of edge labels that overlap, and every label over a state's box. */
const CLASHES = `(() => {
  const out = [];
  const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 &&
    a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  for (const chart of document.querySelectorAll("svg.statechart")) {
    const machine = chart.dataset.machine;
    const labels = [...chart.querySelectorAll(".edge-label")].map((el) => ({
      el, text: el.textContent, r: el.getBoundingClientRect(),
    }));
    const boxes = [...chart.querySelectorAll("rect.state-box")].map((el) => ({
      el, name: el.parentElement.dataset.state, r: el.getBoundingClientRect(),
      compound: el.classList.contains("compound"),
    }));
    labels.forEach((a, i) => labels.slice(i + 1).forEach((b) => {
      if (overlap(a.r, b.r)) out.push({ machine, what: a.text + " / " + b.text });
    }));
    for (const l of labels) {
      if (l.r.width === 0) out.push({ machine, what: l.text + " is not drawn" });
      for (const b of boxes) {
        // A label inside a compound state (between its substates) is inside its box by design.
        if (b.compound && b.el.parentElement.contains(l.el)) continue;
        if (overlap(l.r, b.r)) out.push({ machine, what: l.text + " under " + b.name });
      }
    }
  }
  return out;
})()`;

Deno.test({
  name: "assets revalidate; a datastore is tested unsaved; statecharts have clear labels",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const emulator = new CloudEmulator({
      tenants: [{ tenantId: TENANT, clientId: CLIENT, secret: SECRET }],
      seed: { from: Date.now() - 2 * HOUR, to: Date.now(), perHour: 2 },
    });
    await emulator.start();
    try {
      await using s = await startTestServer({
        "cloudapi.loginHost": emulator.url,
        "cloudapi.graphHost": emulator.url,
        "cloudapi.manageHost": emulator.url,
      });
      const token = await s.deps.users.add("root", { admin: true });
      await using b = await openBrowser();
      const { page } = b;

      await t.step("each asset has an ETag; a reload with If-None-Match gets 304", async () => {
        for (const path of ["/", "/console.js", "/console.css"]) {
          const first = await fetch(s.url + path);
          const body = await first.text();
          const etag = first.headers.get("ETag");
          assert.match(etag ?? "", /^"[0-9a-f]{32}"$/, path);
          assert.equal(first.headers.get("Cache-Control"), "no-cache");
          assert.ok(body.length > 0);
          const again = await fetch(s.url + path, { headers: { "If-None-Match": etag! } });
          assert.equal(again.status, 304, path);
          assert.equal(await again.text(), "");
          assert.equal(again.headers.get("ETag"), etag);
          // Another version's tag gets the asset.
          const other = await fetch(s.url + path, { headers: { "If-None-Match": '"0"' } });
          assert.equal(other.status, 200);
          assert.equal(await other.text(), body);
        }
        // The browser revalidates on a reload and is answered 304 for the script.
        await page.goto(s.url + "/");
        const statuses: number[] = [];
        page.on("response", (r) => {
          if (new URL(r.url()).pathname === "/console.js") statuses.push(r.status());
        });
        await page.reload();
        await page.getByLabel("Token").waitFor();
        assert.deepEqual(statuses, [304]);
      });

      await t.step("Test connection tests the form as it stands, without saving it", async () => {
        await page.getByLabel("Token").fill(token);
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("tab", { name: "Datastores" }).click();
        await page.getByLabel("Store name").fill("corp");
        await page.getByLabel("Application (client) ID").fill(CLIENT);
        await page.getByLabel("Directory (tenant) ID").fill(TENANT);
        await page.getByLabel("Secret Key").fill(SECRET);
        await page.getByRole("switch", { name: "Directory-service logs" }).check();
        await page.getByLabel("Time Zone").fill("UTC");
        await page.getByRole("button", { name: "Test connection" }).click();
        const results = page.getByRole("list", { name: "Connection test" });
        await results.getByText(/directory: OK/).waitFor();
        await page.getByText("Connection tested; corp is not saved until you press Save.")
          .waitFor();
        const stored = await fetch(`${s.url}/API/v1.0/datastores/corp`, {
          headers: { Authorization: `Bearer ${token}` },
        });
        assert.equal(stored.status, 404);
        await stored.body?.cancel();
        assert.equal(await page.getByRole("button", { name: "Open corp" }).count(), 0);
        // A wrong secret: the family says it failed; the secret is nowhere in the page.
        await page.getByLabel("Secret Key").fill("Not.The.Secret-42");
        await page.getByRole("button", { name: "Test connection" }).click();
        await results.getByText(/directory: failed/).waitFor();
        const html = await page.content();
        assert.ok(!html.includes("Not.The.Secret-42") && !html.includes(SECRET));
        await b.shot("hygiene-1-tested-unsaved");
      });

      await t.step(
        "the query machine follows a query; its state changes listed with times",
        async () => {
          await page.getByRole("tab", { name: "Editor" }).click();
          const content = page.locator('.cm-content[aria-label="Script"]');
          await content.click();
          await page.keyboard.press("Control+a");
          await page.keyboard.press("Delete");
          await content.fill("VALUES((a: 1))");
          await page.keyboard.press("Escape");
          await page.getByRole("button", { name: "Run", exact: true }).click();
          await page.locator('output[aria-label="State"]', { hasText: "SUCCEEDED" }).waitFor();
          await page.getByRole("tab", { name: "Machines" }).click();
          const changes = page.getByRole("list", { name: /^State changes of query / });
          await changes.getByText(/→ SUCCEEDED/).waitFor();
          const lines = await changes.locator("li").allInnerTexts();
          assert.match(lines[0]!, /^\d\d:\d\d:\d\d\.\d{3} NEW → QUEUED$/);
          for (const line of lines) assert.match(line, /^\d\d:\d\d:\d\d\.\d{3} \w+ → \w+/, line);
          assert.match(lines.at(-1)!, /→ SUCCEEDED \(\+\d+\.\d{3} s\)$/);
          const current = page.locator('svg[data-machine="query"] g.state.current');
          assert.equal(await current.getAttribute("data-state"), "SUCCEEDED");
        },
      );

      await t.step(
        "a warning is drawn in the warning colour, an error in the error colour",
        async () => {
          await s.write("/shared/mixed.log", "1 a\nx b\n3 c\n");
          await page.getByRole("tab", { name: "Editor" }).click();
          const run = async (script: string) => {
            const content = page.locator('.cm-content[aria-label="Script"]');
            await content.click();
            await page.keyboard.press("Control+a");
            await page.keyboard.press("Delete");
            await content.fill(script);
            await page.keyboard.press("Escape");
            await page.getByRole("button", { name: "Run", exact: true }).click();
          };
          await run("PARSE(pattern: '''INT:n LD:x EOL''', src: '/shared/mixed.log')");
          const warning = page.getByRole("list", { name: "Warnings" }).locator("li").first();
          await warning.getByText(/does not match the pattern/).waitFor();
          // The colours --warn and --bad stand for, and an element's, in each scheme.
          const palette = async () =>
            await page.evaluate(`(() => {
              const style = getComputedStyle(document.documentElement);
              const probe = document.createElement("span");
              document.body.append(probe);
              const of = (name) => {
                probe.style.color = style.getPropertyValue(name);
                return getComputedStyle(probe).color;
              };
              const out = { warn: of("--warn"), bad: of("--bad") };
              probe.remove();
              return out;
            })()`) as { warn: string; bad: string };
          const colour = async (l: typeof warning) =>
            await l.evaluate((el) =>
              (el.ownerDocument.defaultView as unknown as {
                getComputedStyle(e: unknown): { color: string };
              }).getComputedStyle(el).color
            );
          for (const scheme of ["light", "dark"] as const) {
            await page.emulateMedia({ colorScheme: scheme });
            const { warn, bad } = await palette();
            assert.notEqual(warn, bad, scheme);
            assert.equal(await colour(warning), warn, scheme);
          }
          await page.emulateMedia({ colorScheme: "light" });
          await run("VALUES((a: 1)) | filter(nope = 1)");
          const error = page.locator('div.error[role="alert"]').filter({ hasText: /nope/ }).first();
          await error.waitFor();
          for (const scheme of ["light", "dark"] as const) {
            await page.emulateMedia({ colorScheme: scheme });
            assert.equal(await colour(error), (await palette()).bad, scheme);
          }
          await page.emulateMedia({ colorScheme: "light" });
          await page.getByRole("tab", { name: "Machines" }).click();
        },
      );

      await t.step(
        "substates are drawn inside their state; every transition is listed",
        async () => {
          const query = page.locator('svg[data-machine="query"]');
          for (const sub of ["RUNNING.working", "RUNNING.cancelling", "SUCCEEDED.retained"]) {
            await query.locator(`g.substate[data-state="${sub}"]`).waitFor();
          }
          // working → cancelling on CANCEL, drawn inside RUNNING.
          const inner = query.locator(
            'g.state[data-state="RUNNING"] g.transition[data-from="RUNNING.working"]',
          );
          assert.equal(await inner.locator(".edge-label").textContent(), "CANCEL");
          await page.getByText("Transitions of the query machine").click();
          const list = page.getByRole("table", { name: "Transitions of the query machine" });
          const rows = await list.locator("tbody tr").evaluateAll((trs) =>
            trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent).join(" | "))
          );
          for (
            const want of [
              "NEW | ACCEPT | QUEUED |  | ",
              "RUNNING.working | CANCEL | RUNNING.cancelling |  | ",
              "RUNNING.cancelling | after STOP_GRACE | CANCELLED |  | STOP_GRACE: the engine's grace to stop (5 s)",
              "SUCCEEDED.retained | after RETENTION | (stays) |  | RETENTION: query.retention after the result was last read",
            ]
          ) assert.ok(rows.includes(want), `${want} not in:\n${rows.join("\n")}`);
          // Listed while folded away too.
          const supervisor = page.locator(
            'table[aria-label="Transitions of the supervisor machine"]',
          );
          assert.ok(await supervisor.locator("tbody tr").count() >= 10);
        },
      );

      await t.step(
        "no label overlaps another or runs under a box, at 1280 and 640 px",
        async () => {
          for (const width of [1280, 640]) {
            await page.setViewportSize({ width, height: 900 });
            const clashes = await page.evaluate(CLASHES) as Clash[];
            assert.deepEqual(clashes, [], `${width}px`);
            const labels = await page.locator("svg.statechart .edge-label").count();
            assert.ok(labels >= 15, `${labels} labels drawn`);
            const wide = await page.evaluate("document.documentElement.scrollWidth") as number;
            assert.ok(wide <= width + 20, `the Machines tab is ${wide}px wide at ${width}px`);
          }
          await page.setViewportSize({ width: 1280, height: 900 });
        },
      );

      await t.step("light and dark, 1280 and 640 px: no serious axe finding", async () => {
        for (const tab of ["Machines", "Datastores"]) {
          await page.getByRole("tab", { name: tab }).click();
          for (const scheme of ["light", "dark"] as const) {
            await page.emulateMedia({ colorScheme: scheme });
            for (const width of [1280, 640]) {
              await page.setViewportSize({ width, height: 900 });
              await b.shot(`hygiene-${tab.toLowerCase()}-${width}-${scheme}`);
              assert.deepEqual(await seriousAxeFindings(page), [], `${tab} ${scheme} ${width}`);
            }
          }
        }
        await page.emulateMedia({ colorScheme: "light" });
        await page.setViewportSize({ width: 1280, height: 900 });
      });

      await t.step("no errors in the page", () => {
        // The refused script's 400 is the only failed request.
        assert.deepEqual(
          b.errors.filter((e) =>
            !/Applying inline style violates|responded with a status of 400/.test(e)
          ),
          [],
        );
      });
    } finally {
      await emulator.stop();
    }
  },
});
