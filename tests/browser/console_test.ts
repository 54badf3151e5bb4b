/**
 * The web console in a real browser (headless Chromium) against a real server and the cloud
 * emulator: every step leaves a screenshot in tests/browser/artefacts/.
 */

import { sleep } from "../../engine/util/sleep.ts";
import assert from "node:assert/strict";
import { openBrowser, unexpectedErrors } from "./browser.ts";
import { startTestServer } from "../api/server.ts";
import { SLOW_SCRIPT, writeBigLog } from "../api/client.ts";
import { CloudEmulator } from "../emulator/emulator.ts";
import { CLIENT, HOUR, SECRET, TENANT } from "../cloudapi/harness.ts";
import type { Page } from "playwright-core";
import { tableFromIPC } from "apache-arrow";

const API = "/API/v1.0";

interface Scrollable {
  scrollTop: number;
  readonly scrollHeight: number;
  readonly clientHeight: number;
}

/** Replaces the editor's text as a person would: select all, type. */
async function setScript(page: Page, text: string): Promise<void> {
  const content = page.locator('.cm-content[aria-label="Script"]');
  await content.click();
  await page.keyboard.press("Control+a");
  await page.keyboard.press("Delete");
  await content.fill(text);
}

/**
 * Waits until the completion list shows `label` and takes keys: no source still answering (the
 * list greyed meanwhile) and more than CodeMirror's `interactionDelay` (75 ms) since it opened.
 */
async function completionReady(page: Page, label: string): Promise<void> {
  const ready = page.locator(".cm-tooltip-autocomplete:not(.cm-tooltip-autocomplete-disabled)");
  await ready.getByText(label, { exact: true }).waitFor();
  await sleep(150);
  await ready.getByText(label, { exact: true }).waitFor();
}

Deno.test({
  name:
    "a person signs in, runs, cancels, saves, defines a datastore and watches the machines in the console",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const emulator = new CloudEmulator({
      tenants: [{ tenantId: TENANT, clientId: CLIENT, secret: SECRET }],
      seed: { from: Date.now() - 2 * HOUR, to: Date.now(), perHour: 2 },
    });
    await emulator.start();
    await using s = await startTestServer({
      "cloudapi.loginHost": emulator.url,
      "cloudapi.graphHost": emulator.url,
      "cloudapi.manageHost": emulator.url,
    });
    const token = await s.deps.users.add("root", { admin: true });
    const asRoot = (path: string, init: RequestInit = {}) =>
      fetch(s.url + path, {
        ...init,
        headers: { Authorization: `Bearer ${token}`, ...init.headers },
      });
    const big = await writeBigLog(s, 1_500_000);
    // The same log under more names (hard links, no more disk), for a query that runs long
    // enough to be watched and cancelled on a busy machine.
    for (const n of [2, 3, 4, 5, 6]) {
      await Deno.link(big, big.replace("big.log", `big${n}.log`));
    }
    await using b = await openBrowser();
    const { page } = b;

    await t.step("signs in with a token, kept in sessionStorage and in no URL", async () => {
      await page.goto(s.url + "/");
      await page.getByLabel("Token").fill(token);
      await b.shot("01-sign-in");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("button", { name: "Run", exact: true }).waitFor();
      assert.equal(await page.evaluate(() => sessionStorage.getItem("trawl.token")), token);
      assert.ok(!page.url().includes(token));
      await page.getByText("Signed in as root (admin)").waitFor();
    });

    await t.step("runs a script and sees its rows with the schema's types", async () => {
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await page.locator('output[aria-label="State"]', { hasText: "SUCCEEDED" }).waitFor();
      const grid = page.getByRole("grid", { name: "Result" });
      await grid.getByRole("gridcell", { name: "a", exact: true }).waitFor();
      assert.match(await grid.getByRole("columnheader").first().innerText(), /host\s+STRING/);
      // The header, the column filters, two rows.
      assert.equal(await grid.getByRole("row").count(), 4);
      await page.getByText("2 rows", { exact: true }).waitFor();
      await page.locator("figure.chart canvas").waitFor();
      await b.shot("02-run-rows");
    });

    await t.step(
      "downloads the result as an Arrow stream, the token in a header and in no URL",
      async () => {
        const sent: {
          url: string;
          accept?: string | undefined;
          authorization?: string | undefined;
        }[] = [];
        const listen = (req: { url(): string; headers(): Record<string, string> }) => {
          if (/\/result$/.test(new URL(req.url()).pathname)) {
            const headers = req.headers();
            sent.push({
              url: req.url(),
              accept: headers["accept"],
              authorization: headers["authorization"],
            });
          }
        };
        page.on("request", listen);
        const [file] = await Promise.all([
          page.waitForEvent("download"),
          page.getByRole("button", { name: "Download Arrow" }).click(),
        ]);
        page.off("request", listen);
        assert.match(file.suggestedFilename(), /^trawl-[0-9a-f-]{8}\.arrows$/);
        const arrowRequest = sent.find((r) => r.accept === "application/vnd.apache.arrow.stream");
        assert.ok(arrowRequest, JSON.stringify(sent));
        assert.equal(arrowRequest.authorization, `Bearer ${token}`);
        assert.ok(!arrowRequest.url.includes(token));
        const bytes = await Deno.readFile(await file.path());
        // An IPC stream opens with a schema message: the continuation marker 0xFFFFFFFF.
        assert.deepEqual([...bytes.subarray(0, 4)], [0xff, 0xff, 0xff, 0xff]);
        const arrow = tableFromIPC(bytes);
        assert.equal(arrow.numRows, 2);
        assert.deepEqual(arrow.schema.fields.map((f) => f.name), ["host", "hits"]);
        const rows = arrow.toArray().map((r) => ({ host: r.host, hits: Number(r.hits) }));
        assert.deepEqual(
          rows.sort((x, y) => x.host.localeCompare(y.host)),
          [{ host: "a", hits: 2 }, { host: "b", hits: 1 }],
        );
      },
    );

    await t.step("draws a histogram over time for a result with a timestamp", async () => {
      await setScript(
        page,
        "VALUES((t: T('2024-05-01T13:00:00Z'), n: 1), (t: T('2024-05-01T13:30:00Z'), n: 2),\n" +
          "  (t: T('2024-05-01T15:00:00Z'), n: 3))",
      );
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await page.getByRole("img", { name: "Events over time by t" }).waitFor();
      await page.getByText(/Events over time by t: 3 events, 1 min per bar/).waitFor();
      assert.match(
        await page.getByRole("grid", { name: "Result" }).getByRole("columnheader").first()
          .innerText(),
        /t\s+TIMESTAMP/,
      );
      await b.shot("02a-histogram");
    });

    await t.step("scrolls through 1.5 million rows fetching only the pages in view", async () => {
      const ranges: string[] = [];
      const listen = (req: { url(): string; headers(): Record<string, string> }) => {
        if (/\/result$/.test(new URL(req.url()).pathname)) {
          ranges.push(req.headers()["range"] ?? "none");
        }
      };
      page.on("request", listen);
      await setScript(
        page,
        "PARSE(pattern: '''INT:n LD:x EOL''', src: '/shared/big.log') | select(n)",
      );
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await page.getByText("1500000 rows", { exact: true }).waitFor({ timeout: 60_000 });
      const grid = page.getByRole("grid", { name: "Result" });
      await grid.getByRole("gridcell", { name: "0", exact: true }).waitFor();
      // To the middle, then to the end, as a person dragging the scroll bar.
      const viewport = page.locator(".grid-viewport");
      await viewport.evaluate((el: Scrollable) => {
        el.scrollTop = (el.scrollHeight - el.clientHeight) / 2;
      });
      for (let tries = 0;; tries++) {
        const cells = await grid.locator(".grid-body [role=gridcell]").allInnerTexts();
        if (cells.some((c) => Math.abs(Number(c) - 750_000) < 50)) break;
        assert.ok(tries < 100, `not near row 750000 but at ${cells[0]}`);
        await page.waitForTimeout(100);
      }
      await b.shot("03a-middle-of-1.5M-rows");
      // The keyboard moves through the grid's cells: Ctrl+End to the last row.
      await grid.locator(".grid-body [role=gridcell]").first().click();
      await page.keyboard.press("Control+End");
      await grid.getByRole("gridcell", { name: "1499999", exact: true }).waitFor();
      await b.shot("03b-end-of-1.5M-rows");
      page.off("request", listen);
      assert.ok(ranges.length >= 3 && ranges.length < 20, ranges.join(" "));
      for (const r of ranges) {
        const m = /^items=(\d+)-(\d+)$/.exec(r);
        assert.ok(m && Number(m[2]) - Number(m[1]) < 200, `a request for ${r}`);
      }
    });

    await t.step("marks a typo with the server's message before running", async () => {
      const typo = "VALUES((a: 1))\n| fliter(a > 0)";
      const check = await (await asRoot(`${API}/check?scriptPath=/user`, {
        method: "POST",
        headers: { "Content-Type": "text/plain" },
        body: typo,
      })).json();
      const message = check.diagnostics[0].message as string;
      await setScript(page, typo);
      const mark = page.locator(".cm-lintRange-error");
      await mark.waitFor();
      assert.equal(await mark.innerText(), "fliter");
      await mark.hover();
      const tooltip = page.locator(".cm-tooltip-lint");
      await tooltip.waitFor();
      assert.ok((await tooltip.innerText()).includes(message), await tooltip.innerText());
      await b.shot("03-typo-marked");
    });

    await t.step(
      "highlights the language and completes commands and the fields known at the cursor",
      async () => {
        await setScript(page, "VALUES((host: 'a', bytes: 1))\n| filter(ho");
        assert.equal(await page.locator(".tok-source").first().innerText(), "VALUES");
        assert.equal(await page.locator(".tok-command").first().innerText(), "filter");
        await page.keyboard.press("Control+Space");
        const list = page.locator(".cm-tooltip-autocomplete");
        await list.getByText("host", { exact: true }).waitFor();
        await b.shot("03c-complete-field");
        // CodeMirror takes no Enter while its list waits for a source (Control+Space asked the
        // fields again: the list is drawn greyed, `cm-tooltip-autocomplete-disabled`) nor within
        // 75 ms of the list opening (`interactionDelay`); either way the Enter makes a new line.
        // A busy machine once pressed it in that window: the list is waited for ready, and a
        // person's moment more.
        await completionReady(page, "host");
        await page.keyboard.press("Enter");
        const editor = page.locator('.cm-content[aria-label="Script"]');
        let text = "";
        for (let i = 0; i < 40 && !/filter\(host$/.test(text); i++) {
          if (i > 0) await sleep(50);
          text = await editor.innerText();
        }
        assert.match(text, /filter\(host$/, "Enter takes the completion");
        await page.keyboard.type(" = 'a')\n| so");
        await page.keyboard.press("Control+Space");
        await list.getByText("sort", { exact: true }).waitFor();
        await page.keyboard.press("Escape");
      },
    );

    await t.step(
      "a long query shows RUNNING, its machine marks RUNNING, and Cancel stops it",
      async () => {
        await setScript(page, SLOW_SCRIPT.replace("big.log", "big*.log"));
        await page.keyboard.press("Control+Enter");
        await page.locator('output[aria-label="State"]', { hasText: "RUNNING" }).waitFor();
        await b.shot("04-running");
        await page.getByRole("tab", { name: "Machines" }).click();
        const current = page.locator('svg[data-machine="query"] g.state.current');
        await current.waitFor();
        assert.equal(await current.getAttribute("data-state"), "RUNNING");
        await b.shot("05-machine-running");
        await page.getByRole("tab", { name: "Editor" }).click();
        await page.getByRole("button", { name: "Cancel" }).click();
        await page.locator('output[aria-label="State"]', { hasText: "CANCELLED" }).waitFor();
        await page.getByRole("tab", { name: "Machines" }).click();
        await page.locator('svg[data-machine="query"] g.state.current[data-state="CANCELLED"]')
          .waitFor();
        await b.shot("06-machine-cancelled");
      },
    );

    await t.step("lists the queries, newest first", async () => {
      await page.getByRole("tab", { name: "Queries" }).click();
      const rows = page.locator("table.queries tbody tr");
      await rows.nth(1).waitFor();
      assert.match(await rows.first().innerText(), /CANCELLED/);
      await b.shot("07-queries");
      // Opening the oldest follows it in the editor's run pane.
      await rows.last().getByRole("button", { name: /^Open query / }).click();
      await page.locator('output[aria-label="State"]', { hasText: "SUCCEEDED" }).waitFor();
      await page.getByRole("grid", { name: "Result" }).getByRole("gridcell", { name: "a" })
        .first().waitFor();
      await page.getByRole("tab", { name: "Editor" }).click();
    });

    await t.step("runs a view with the form built from its init arguments", async () => {
      await (await asRoot(`${API}/resources/user/views/`, { method: "PUT" })).body?.cancel();
      const put = await asRoot(`${API}/resources/user/views/top.sx`, {
        method: "PUT",
        body: "init(n: 3, who::STRING);\nVALUES((a: 1), (a: 2), (a: 3), (a: 4)) | limit($n)",
      });
      assert.ok(put.ok, await put.text());
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByLabel("Token").waitFor();
      assert.equal(await page.evaluate("sessionStorage.length"), 0);
      await page.getByLabel("Token").fill(token);
      await page.getByRole("button", { name: "Sign in" }).click();
      const tree = page.getByRole("tree", { name: "Files" });
      await tree.getByText("users", { exact: true }).click();
      await tree.getByText("root", { exact: true }).click();
      await tree.getByText("views", { exact: true }).click();
      await tree.getByText("top.sx", { exact: true }).click();
      const form = page.getByRole("form", { name: "View arguments" });
      await form.waitFor();
      assert.equal(await form.getByLabel("n (LONG)").getAttribute("type"), "number");
      await form.getByLabel("n (LONG)").fill("2");
      await form.getByLabel("who (STRING)").fill("me");
      await b.shot("08-view-form");
      await form.getByRole("button", { name: "Run view" }).click();
      await page.locator('output[aria-label="State"]', { hasText: "SUCCEEDED" }).waitFor();
      await page.getByText("2 rows", { exact: true }).waitFor();
      await b.shot("09-view-run");
    });

    await t.step("saves a script, reopens it, and a conflicting save is refused", async () => {
      await page.getByRole("button", { name: "New", exact: true }).click();
      await page.getByLabel("Path", { exact: true }).fill("/user/saved.sx");
      await setScript(page, "VALUES((x: 1))");
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByText("Saved /user/saved.sx").waitFor();
      const tree = page.getByRole("tree", { name: "Files" });
      await tree.getByText("saved.sx", { exact: true }).click();
      await page.getByText("Opened /users/root/saved.sx").waitFor();
      assert.equal(
        await page.locator('.cm-content[aria-label="Script"]').innerText(),
        "VALUES((x: 1))",
      );
      // Someone else saves it meanwhile.
      const other = await asRoot(`${API}/resources/user/saved.sx`, {
        method: "PUT",
        body: "VALUES((x: 2))",
      });
      assert.ok(other.ok);
      await setScript(page, "VALUES((x: 3))");
      await page.getByRole("button", { name: "Save" }).click();
      const alert = page.getByRole("alert").filter({ hasText: "Not saved" });
      await alert.waitFor();
      assert.match(await alert.innerText(), /changed elsewhere/);
      const stored = await (await asRoot(`${API}/resources/user/saved.sx`)).text();
      assert.equal(stored, "VALUES((x: 2))");
      await b.shot("10-conflict-refused");
    });

    await t.step(
      "defines a datastore with the form, sees the server's messages, tests the connection",
      async () => {
        await page.getByRole("tab", { name: "Datastores" }).click();
        await page.getByLabel("Store name").fill("corp");
        await page.getByLabel("Application (client) ID").fill(CLIENT);
        await page.getByLabel("Directory (tenant) ID").fill("common");
        await page.getByLabel("Secret Key").fill(SECRET);
        await page.getByRole("switch", { name: "Directory-service logs" }).check();
        await page.getByRole("switch", { name: "Productivity-suite logs" }).check();
        await page.getByLabel("Time Zone").fill("UTC");
        await page.getByRole("button", { name: "Save" }).click();
        const message = page.locator("#ds-tenantId-message");
        await message.getByText(/tenantId/).waitFor();
        assert.equal(
          await page.getByLabel("Directory (tenant) ID").getAttribute("aria-invalid"),
          "true",
        );
        await b.shot("11-datastore-messages");
        await page.getByLabel("Directory (tenant) ID").fill(TENANT);
        await page.getByRole("button", { name: "Test connection" }).click();
        const results = page.getByRole("list", { name: "Connection test" });
        await results.getByText(/directory: OK/).waitFor();
        await results.getByText(/suite: OK/).waitFor();
        // Tested, not saved: Save stores it.
        const unsaved = await asRoot(`${API}/datastores/corp`);
        assert.equal(unsaved.status, 404);
        await unsaved.body?.cancel();
        await page.getByRole("button", { name: "Save" }).click();
        await page.getByText("(set)").waitFor();
        assert.equal(await page.getByLabel("Secret Key").inputValue(), "");
        assert.ok(!(await page.content()).includes(SECRET));
        await b.shot("12-datastore-tested");
      },
    );

    await t.step(
      "defines a store of another kind the server offers, its secrets write-only fields",
      async () => {
        // The kinds come from the server: AZBLOB's secret keys become password fields.
        await page.getByLabel("Kind").selectOption("AZBLOB");
        assert.equal(await page.getByLabel("accountKey").getAttribute("type"), "password");
        assert.equal(await page.getByLabel("sasToken").getAttribute("type"), "password");
        await page.getByText(/Changing endpoint, accountName needs the secret again/).waitFor();
        await page.getByLabel("Kind").selectOption("FILE");
        await page.getByLabel("Store name").fill("weblogs");
        await page.getByLabel("Settings (JSON)").fill('{"root": "relative/folder"}');
        await page.getByRole("button", { name: "Save" }).click();
        await page.getByRole("alert").filter({ hasText: "absolute folder" }).waitFor();
        await page.getByLabel("Settings (JSON)").fill(JSON.stringify({ root: Deno.cwd() }));
        await page.getByRole("button", { name: "Save" }).click();
        await page.getByText("Saved weblogs.").waitFor();
        await page.getByRole("button", { name: "Open weblogs" }).waitFor();
        const stored = await (await asRoot(`${API}/datastores/weblogs`)).json();
        assert.deepEqual(stored, { type: "FILE", fileStore: { root: Deno.cwd() } });
      },
    );

    await t.step("opens a stored table from the tree", async () => {
      const saved = await asRoot(`${API}/?scriptPath=/user`, {
        method: "POST",
        headers: { "Content-Type": "text/plain" },
        body: "VALUES((city: 'Tallinn', n: 5), (city: 'Tartu', n: 3)) | save('/user/cities.sxt')",
      });
      assert.ok(saved.ok, await saved.text());
      await page.getByRole("tab", { name: "Editor" }).click();
      await page.getByRole("button", { name: "Refresh" }).click();
      const tree = page.getByRole("tree", { name: "Files" });
      await tree.getByText("cities.sxt", { exact: true }).click();
      const grid = page.getByRole("grid", { name: "Result" });
      await grid.getByRole("gridcell", { name: "Tartu", exact: true }).waitFor();
      await page.locator("figure.chart canvas").waitFor();
      await b.shot("10a-stored-table");
    });

    await t.step("develops a pattern against sample lines as one types", async () => {
      await page.getByRole("tab", { name: "Pattern" }).click();
      await page.getByLabel("Sample lines").fill("10.0.0.1 200\nnot a line\n10.0.0.2 404");
      await page.getByLabel("PARSE pattern").fill("IPV4:ip ' ' INT:status");
      await page.locator("tr.no-match", { hasText: "no match" }).waitFor();
      assert.equal(await page.locator("tr.match").count(), 2);
      await b.shot("13-pattern");
    });

    await t.step("reads at 200 % zoom", async () => {
      await page.getByRole("tab", { name: "Editor" }).click();
      await page.setViewportSize({ width: 640, height: 900 });
      const width = await page.evaluate("document.documentElement.scrollWidth") as number;
      assert.ok(width <= 660, `the page is ${width}px wide at 640px`);
      await b.shot("14-narrow");
      await page.setViewportSize({ width: 1280, height: 900 });
    });

    await t.step("no errors in the page but the refusals the steps asked for", () => {
      // 400 and 412: the mistakes and the stale save the steps made on purpose. 409: the rows so
      // far of a query read just as it was cancelled (or while still queued) on a busy machine.
      const unexpected = unexpectedErrors(b, (r) =>
        r.status === 400 || r.status === 412 ||
        (r.status === 409 && r.method === "GET" && r.range !== undefined &&
          /^\/API\/v1\.0\/queries\/[^/]+\/result$/.test(r.path)));
      assert.deepEqual(unexpected, [], JSON.stringify(b.refused));
    });
    await emulator.stop();
  },
});
