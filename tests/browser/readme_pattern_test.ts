/**
 * README.md's first PARSE pattern reads a real web server log in both formats it says it reads:
 * the common one (its sample) and the combined one (nginx's and Apache's default).
 */

import assert from "node:assert/strict";
import { tryPattern } from "../../engine/mod.ts";

const README = new URL("../../README.md", import.meta.url);

Deno.test("README's first pattern matches a common and a combined access log line", async () => {
  const text = await Deno.readTextFile(README);
  const pattern = /PARSE\(pattern: '''([\s\S]*?)'''/.exec(text)?.[1];
  assert.ok(pattern, "README.md has a PARSE pattern");
  const lines = [
    `10.0.0.5 - ann [01/May/2024:10:00:01 +0000] "GET /index.html HTTP/1.1" 200 5120`,
    `192.168.1.20 - bob [01/May/2024:11:20:00 +0000] "GET /missing HTTP/1.1" 404 -`,
    `203.0.113.9 - - [10/Oct/2024:13:55:36 +0000] "GET /a?b=1 HTTP/2.0" 200 2326 ` +
    `"https://example.com/" "Mozilla/5.0 (X11; Linux x86_64; rv:131.0) Gecko/20100101 Firefox/131.0"`,
    `203.0.113.9 - - [10/Oct/2024:13:55:37 +0000] "GET / HTTP/1.1" 304 0 "-" "curl/8.5.0"`,
  ];
  const trial = tryPattern(pattern, lines, "UTC");
  assert.ok(trial.ok, JSON.stringify(trial));
  const rows = trial.rows;
  assert.ok(rows.every((r) => r !== null), JSON.stringify(rows));
  assert.equal(rows[0]!.referer, null);
  assert.equal(rows[1]!.bytes, null);
  assert.equal(rows[2]!.status, 200);
  assert.equal(
    rows[2]!.agent,
    "Mozilla/5.0 (X11; Linux x86_64; rv:131.0) Gecko/20100101 Firefox/131.0",
  );
  assert.equal(rows[3]!.referer, "-");
});
