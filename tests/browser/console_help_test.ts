/**
 * Inline help and the pattern developer (issue 27, items 7 and 8), in headless Chromium against
 * a real server and real files, as a person uses them: completion that knows where the cursor is
 * and shows each word's signature and description, the same help on hover, a pattern's mistake
 * marked at the matcher; a pattern written with matcher completion on lines read from a file of
 * the tree, each field coloured in its line, the character where a failing line stopped, "Use in
 * query", and a table that wraps at 640 px. axe-core in light and dark mode; screenshots
 * (tests/browser/artefacts/help-*.png) at 1280 and 640 px.
 */

import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { openBrowser } from "./browser.ts";
import { seriousAxeFindings } from "./axe.ts";
import { startTestServer } from "../api/server.ts";

const SCRIPT = '.cm-content[aria-label="Script"]';
const PATTERN = '.cm-content[aria-label="PARSE pattern"]';

/** Waits (polling) until `check` holds; fails naming `what` after some 30 s. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0;; tries++) {
    if (await check()) return;
    assert.ok(tries < 300, `still waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Replaces an editor's text as a person would: select all, type. */
async function setText(page: Page, editor: string, text: string): Promise<void> {
  const content = page.locator(editor);
  await content.click();
  await page.keyboard.press("Control+a");
  await page.keyboard.press("Delete");
  await content.fill(text);
  await until(async () => (await content.innerText()).trim() === text.trim(), "the editor's text");
  await page.keyboard.press("Escape");
}

/** Moves the cursor to the end of the editor's text. */
async function toEnd(page: Page, editor: string): Promise<void> {
  await page.locator(editor).click();
  await page.keyboard.press("Control+End");
}

/** The completion list's labels, once it shows `wanted`. */
async function completions(page: Page, wanted: string): Promise<string[]> {
  const list = page.locator(".cm-tooltip-autocomplete");
  await list.locator(".cm-completionLabel", { hasText: wanted }).first().waitFor();
  return await list.locator(".cm-completionLabel").allInnerTexts();
}

const LOG = [
  `10.0.0.5 - ann [01/May/2024:10:00:01 +0000] "GET /index.html HTTP/1.1" 200 5120`,
  `192.168.1.20 - bob [01/May/2024:11:20:00 +0000] "POST /login HTTP/1.1" 302 -`,
  `10.0.0.9 - - [01/May/2024 11:21:00] "GET / HTTP/1.1" 200 17`,
  `10.0.0.7 - eve [01/May/2024:11:22:00 +0000] "GET /${
    "very-long-path/".repeat(40)
  } HTTP/1.1" 404 9`,
];
const ACCESS = `IPV4:client ' - ' NSPACE:user ' [' HTTPDATE:time '] "' WORD:method ' ' ` +
  `NSPACE:path ' ' NSPACE:proto '" ' INT:status ' ' INT?:bytes EOL`;

Deno.test({
  name: "a person gets help as they write a script and develops a pattern on a file's lines",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await using s = await startTestServer();
    const token = await s.deps.users.add("root", { admin: true });
    await s.write("/shared/logs/access.log", LOG.join("\n") + "\n");
    await using b = await openBrowser();
    const { page } = b;
    await page.goto(s.url + "/");
    await page.getByLabel("Token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Run", exact: true }).waitFor();

    await t.step("completion shows each function's signature and description", async () => {
      await setText(page, SCRIPT, "VALUES((host: 'a', n: 1))\n| select(subs");
      await toEnd(page, SCRIPT);
      await page.keyboard.press("Control+Space");
      await completions(page, "substr");
      const option = page.locator(".cm-tooltip-autocomplete li", { hasText: "substr" }).first();
      assert.match(await option.innerText(), /substr\(s, start \[, len\]\)/);
      const info = page.locator(".cm-completionInfo .word-help");
      await info.waitFor();
      assert.match(await info.innerText(), /function: Part of a string, start counted from 1\./);
      await b.shot("help-01-completion-info");
      await page.keyboard.press("Escape");
    });

    await t.step(
      "inside an expression the stream's fields come first, matchers never",
      async () => {
        await setText(page, SCRIPT, "VALUES((host: 'a', bytes: 1))\n| filter(");
        await toEnd(page, SCRIPT);
        await page.keyboard.press("Control+Space");
        const labels = await completions(page, "bytes");
        assert.deepEqual(labels.slice(0, 2).sort(), ["bytes", "host"], labels.join(" "));
        for (const m of ["IPV4", "HTTPDATE", "LD"]) {
          assert.ok(!labels.includes(m), labels.join(" "));
        }
        // A source is no expression, nor is a command.
        assert.ok(!labels.includes("PARSE") && !labels.includes("sort"), labels.join(" "));
        assert.ok(labels.includes("upper"));
        const section = page.locator(".cm-tooltip-autocomplete completion-section").first();
        assert.equal(await section.innerText(), "Fields");
        await page.keyboard.press("Escape");
      },
    );

    await t.step("after a pipe only commands, each with its signature", async () => {
      await setText(page, SCRIPT, "VALUES((host: 'a'))\n| ");
      await toEnd(page, SCRIPT);
      await page.keyboard.press("Control+Space");
      const labels = await completions(page, "filter");
      assert.ok(
        labels.every((l) => /^[a-z_]+$/.test(l)),
        labels.join(" "),
      );
      assert.ok(!labels.includes("upper") && !labels.includes("host"), labels.join(" "));
      const filter = page.locator(".cm-tooltip-autocomplete li", { hasText: "filter(cond)" });
      await filter.first().waitFor();
      await page.keyboard.press("Escape");
    });

    await t.step("inside a pattern only matchers; inside a path nothing", async () => {
      await setText(page, SCRIPT, "PARSE(pattern: 'IPV4:ip \\' \\' HT");
      await toEnd(page, SCRIPT);
      await page.keyboard.press("Control+Space");
      const labels = await completions(page, "HTTPDATE");
      assert.deepEqual(labels, ["HTTPDATE"]);
      const option = page.locator(".cm-tooltip-autocomplete li", { hasText: "HTTPDATE" });
      assert.match(await option.innerText(), /HTTPDATE/);
      await page.locator(".cm-completionInfo .word-help", { hasText: "10/Oct/2024" }).waitFor();
      await page.keyboard.press("Escape");
      await setText(page, SCRIPT, "PARSE(pattern: '''IPV4:ip''', src: '/shared/lo");
      await toEnd(page, SCRIPT);
      await page.keyboard.press("Control+Space");
      await page.keyboard.type("g");
      // Nothing to offer in a path: no list opens (give it a moment to, were it wrong).
      await page.waitForTimeout(500);
      assert.equal(await page.locator(".cm-tooltip-autocomplete").count(), 0);
    });

    await t.step("hovering a function, a command or a matcher shows its help", async () => {
      await setText(
        page,
        SCRIPT,
        "PARSE(pattern: '''IPV4:ip ' ' LD:rest''', src: '/shared/logs/access.log')\n" +
          "| select(upper(rest) as r)",
      );
      const hover = async (word: string, nth = 0) => {
        await page.mouse.move(0, 0);
        await page.locator(`${SCRIPT} span`, { hasText: new RegExp(`^${word}$`) }).nth(nth).hover();
        const tip = page.locator(".cm-tooltip-hover .word-help");
        await tip.waitFor();
        const text = await tip.innerText();
        await page.mouse.move(0, 0);
        await tip.waitFor({ state: "detached" });
        return text;
      };
      const upper = await hover("upper");
      assert.match(upper, /^upper\(s\)\nfunction: The string in upper case\.$/);
      assert.match(await hover("select"), /select\(expr \[as name\], \.\.\.\)/);
      assert.match(await hover("IPV4"), /IPV4\nmatcher: An IPv4 address \(IPADDR\)\./);
      assert.match(await hover("PARSE"), /PARSE\(pattern: p, src: uri\)/);
    });

    await t.step("a pattern's mistake is marked at the matcher, not at the quotes", async () => {
      await setText(
        page,
        SCRIPT,
        "PARSE(pattern: '''IPV4:ip\n    ' ' WROD:w''', src: '/shared/logs/access.log')",
      );
      const mark = page.locator(`.cm-lintRange-error`);
      await mark.waitFor();
      assert.equal(await mark.innerText(), "WROD");
      await mark.hover();
      const tip = page.locator(".cm-tooltip-lint");
      await tip.waitFor();
      assert.match(await tip.innerText(), /unknown matcher 'WROD' \(did you mean 'WORD'\?\)/);
      await b.shot("help-02-pattern-mistake");
      await page.mouse.move(0, 0);
    });

    await t.step("the pattern developer reads sample lines from a file of the tree", async () => {
      await page.getByRole("tab", { name: "Pattern" }).click();
      const file = page.getByLabel("Sample file");
      await file.fill("/shared/");
      // The folder's files are offered as the path is typed.
      await page.locator('#pattern-file-list option[value="/shared/logs/"]').waitFor({
        state: "attached",
      });
      await file.fill("/shared/logs/access.log");
      await page.getByRole("button", { name: "Load lines" }).click();
      await page.getByText("4 lines of /shared/logs/access.log").waitFor();
      assert.equal(
        await page.getByLabel("Sample lines", { exact: true }).inputValue(),
        LOG.join("\n"),
      );
    });

    await t.step(
      "the pattern is highlighted and its matchers completed with their help",
      async () => {
        await setText(page, PATTERN, "IPV4:client ' - ' NSPACE:user ' [' HTTPD");
        // The unfinished matcher is marked by the trial (and the mark is drawn before a key).
        const unfinished = page.locator(".pattern-editor .cm-lintRange-error");
        await unfinished.waitFor();
        assert.equal(await unfinished.innerText(), "HTTPD");
        await toEnd(page, PATTERN);
        await page.keyboard.press("Control+Space");
        assert.deepEqual(await completions(page, "HTTPDATE"), ["HTTPDATE"]);
        await page.locator(".cm-completionInfo .word-help", { hasText: "10/Oct/2024" }).waitFor();
        // CodeMirror takes no Enter within 75 ms of a list opening (its interactionDelay, against
        // accepting by accident): a person reads the list first.
        await page.waitForTimeout(200);
        await page.keyboard.press("Enter");
        let typed = "";
        await until(async () => {
          typed = await page.locator(PATTERN).innerText();
          return typed.endsWith("HTTPDATE");
        }, "HTTPDATE completed").catch((e) => {
          throw new Error(`${(e as Error).message}; the pattern reads ${JSON.stringify(typed)}`);
        });
        const matchers = await page.locator(`${PATTERN} .tok-matcher`).allInnerTexts();
        assert.deepEqual(matchers, ["IPV4", "NSPACE", "HTTPDATE"]);
        assert.deepEqual(
          await page.locator(`${PATTERN} .tok-field`).allInnerTexts(),
          ["client", "user"],
        );
        assert.ok((await page.locator(`${PATTERN} .tok-string`).count()) >= 2);
      },
    );

    await t.step(
      "each field coloured in its line; a failing line shows where it stopped",
      async () => {
        await setText(page, PATTERN, ACCESS);
        const rows = page.locator(".pattern-table tbody tr");
        await page.getByText("3 of 4 lines match.").waitFor();
        // The first line: each field's text in its own colour, titled with its name. The
        // previous step's shorter pattern also matched 3 of 4 lines: its table may still be
        // shown until the new answer comes, so wait for the last field of this one.
        const first = rows.nth(0).locator(".field-text");
        await rows.nth(0).locator('.field-text[title="bytes"]').waitFor();
        const seen = await first.evaluateAll((els) =>
          els.map((e) => [
            e.getAttribute("title") ?? "",
            e.textContent ?? "",
            e.ownerDocument.defaultView!.getComputedStyle(e).backgroundColor,
          ])
        );
        assert.deepEqual(seen.map(([name, text]) => `${name}=${text}`), [
          "client=10.0.0.5",
          "user=ann",
          "time=01/May/2024:10:00:01 +0000",
          "method=GET",
          "path=/index.html",
          "proto=HTTP/1.1",
          "status=200",
          "bytes=5120",
        ]);
        const colours = new Set(seen.map((s) => s[2]));
        assert.equal(colours.size, 8, `eight fields, eight colours: ${[...colours]}`);
        // The legend and the values use the same colours.
        const legend = page.locator(".pattern-legend li", { hasText: "client" });
        assert.equal(
          await legend.evaluate((e) =>
            e.ownerDocument.defaultView!.getComputedStyle(e).backgroundColor
          ),
          seen[0]![2],
        );
        await rows.nth(0).locator("dd", { hasText: '"10.0.0.5"' }).waitFor();
        // The third line has a date without its time zone: matching stopped at its `[`'s next.
        const bad = rows.nth(2);
        assert.equal(await bad.getAttribute("class"), "no-match");
        const stop = bad.locator("mark.stop");
        assert.equal(await stop.innerText(), "0");
        assert.equal(
          await bad.locator(".field-text").evaluateAll((els) => els.map((e) => e.textContent)).then(
            (t) => t.join(","),
          ),
          "10.0.0.9,-",
        );
        assert.match(
          await bad.locator("td").innerText(),
          /No match: stopped at column 15, expecting HTTPDATE:time/,
        );
        // "Show in pattern" selects the element that failed.
        await bad.getByRole("button", { name: "Show in pattern: HTTPDATE:time" }).click();
        // Typing replaces what it selected.
        await page.keyboard.type("HTTPDATE:when");
        await until(
          async () =>
            (await page.locator(PATTERN).innerText()) ===
              ACCESS.replace("HTTPDATE:time", "HTTPDATE:when"),
          "the failed element selected and replaced",
        );
        await setText(page, PATTERN, ACCESS);
        await page.getByText("3 of 4 lines match.").waitFor();
        await b.shot("help-03-pattern-developer");
      },
    );

    await t.step("a mistake in the pattern is marked at its matcher in the pane", async () => {
      await setText(page, PATTERN, ACCESS.replace("WORD:method", "WROD:method"));
      const alert = page.locator(".pattern-out [role=alert]");
      await alert.waitFor();
      assert.match(await alert.innerText(), /unknown matcher 'WROD'/);
      assert.match(
        await alert.innerText(),
        new RegExp(`at column ${ACCESS.indexOf("WORD") + 1}\\)`),
      );
      const mark = page.locator(`.pattern-editor .cm-lintRange-error`);
      await mark.waitFor();
      assert.equal(await mark.innerText(), "WROD");
      assert.equal(await page.locator(`${PATTERN} .tok-invalid`).innerText(), "WROD");
      await setText(page, PATTERN, ACCESS);
      await page.getByText("3 of 4 lines match.").waitFor();
      assert.equal(await mark.count(), 0);
    });

    await t.step(
      "light and dark, 1280 and 640 px: no wider than the window, axe finds nothing serious",
      async () => {
        for (const scheme of ["light", "dark"] as const) {
          await page.emulateMedia({ colorScheme: scheme });
          for (const width of [1280, 640]) {
            await page.setViewportSize({ width, height: 900 });
            await page.locator(".pattern-table").waitFor();
            const sizes = await page.evaluate(`(() => {
              const doc = document.documentElement;
              const out = document.querySelector(".pattern-out");
              return [doc.scrollWidth, doc.clientWidth, out.scrollWidth, out.clientWidth];
            })()`) as number[];
            assert.ok(sizes[0]! <= sizes[1]!, `the page is ${sizes[0]} px wide in ${sizes[1]}`);
            assert.ok(sizes[2]! <= sizes[3]!, `the table is ${sizes[2]} px wide in ${sizes[3]}`);
            await b.shot(`help-pattern-${width}-${scheme}`);
            assert.deepEqual(
              await seriousAxeFindings(page),
              [],
              `pattern pane, ${scheme}, ${width}`,
            );
          }
        }
        // The hover help in dark mode, over the editor.
        await page.setViewportSize({ width: 1280, height: 900 });
        await page.getByRole("tab", { name: "Editor" }).click();
        await setText(page, SCRIPT, "VALUES((a: 'x'))\n| select(upper(a) as u)");
        await page.locator(`${SCRIPT} span`, { hasText: /^upper$/ }).hover();
        await page.locator(".cm-tooltip-hover .word-help").waitFor();
        assert.deepEqual(await seriousAxeFindings(page), [], "hover help, dark");
        await b.shot("help-04-hover-1280-dark");
        await page.emulateMedia({ colorScheme: "light" });
        assert.deepEqual(await seriousAxeFindings(page), [], "hover help, light");
        await b.shot("help-04-hover-1280-light");
        await page.mouse.move(0, 0);
        await page.getByRole("tab", { name: "Pattern" }).click();
      },
    );

    await t.step("Use in query: a PARSE of the file the samples came from", async () => {
      await page.getByRole("button", { name: "Use in query" }).click();
      await page.getByRole("tab", { name: "Editor", selected: true }).waitFor();
      const script = await page.locator(SCRIPT).innerText();
      assert.equal(
        script,
        `PARSE(pattern: '''${ACCESS}''',\n      src: '/shared/logs/access.log')\n| limit(100)`,
      );
      await page.keyboard.press("Control+Enter");
      await page.getByText("3 rows", { exact: true }).waitFor({ timeout: 60_000 });
    });

    await t.step("no errors in the page", () => {
      const unexpected = b.errors.filter((e) =>
        !/Failed to load resource: the server responded with a status of 404/.test(e) &&
        !/Applying inline style violates/.test(e)
      );
      assert.deepEqual(unexpected, []);
    });
  },
});
