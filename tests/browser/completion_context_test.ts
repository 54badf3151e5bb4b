/**
 * Where the cursor is, for the console's completion (console/trawl_language.ts contextAt): in a
 * pattern, in another string, after a pipe, in a command's arguments. The browser walk is
 * console_help_test.ts; this one tries the corners.
 */

import assert from "node:assert/strict";
import { contextAt, matcherExpected } from "../../console/trawl_language.ts";

Deno.test("inside a raw string or the value of pattern: the cursor is in a pattern", () => {
  assert.equal(contextAt("PARSE(pattern: '''IPV4:ip ' ' HT").string, "pattern");
  assert.equal(contextAt("$p = '''IPV4:ip\n  WO").string, "pattern");
  assert.equal(contextAt("PARSE(pattern: 'IPV4:ip \\' \\' HT").string, "pattern");
  assert.equal(contextAt('PARSE(pattern : "IPV4').string, "pattern");
});

Deno.test("inside another string or a comment: neither a pattern nor an expression", () => {
  assert.equal(contextAt("PARSE(pattern: '''IPV4''', src: '/shared/lo").string, "other");
  assert.equal(contextAt("VALUES((a: 1)) | filter(a = 'it' and ").string, null);
  assert.equal(contextAt("VALUES((a: 1)) // a note, fi").string, "other");
  assert.equal(contextAt("VALUES((a: 1)) /* IPV4 '''").string, "other");
});

Deno.test("after a pipe a command; inside its parentheses an expression of that stage", () => {
  const afterPipe = contextAt("VALUES((a: 1))\n| ");
  assert.deepEqual(afterPipe, { string: null, afterPipe: true, inArguments: false, pipe: 15 });
  const args = contextAt("VALUES((a: 1))\n| filter(a > 0 and ");
  assert.deepEqual(args, { string: null, afterPipe: false, inArguments: true, pipe: 15 });
  // A `|` inside a string or a comment is no pipe; the last stage's counts.
  const s = "VALUES((a: '|'))\n// |\n| select(a) | sort(";
  assert.equal(contextAt(s).pipe, s.lastIndexOf("|"));
  // A statement ends the parentheses left open before it.
  assert.equal(contextAt("@x = VALUES((a: 1)\n;\n").inArguments, false);
  // A source's own arguments: an expression, with no stage before it.
  assert.deepEqual(contextAt("PARSE(src: "), {
    string: null,
    afterPipe: false,
    inArguments: true,
    pipe: -1,
  });
});

Deno.test("a matcher is expected neither after `:` nor inside a pattern's literal", () => {
  assert.equal(matcherExpected("IPV4:client ' - ' "), true);
  assert.equal(matcherExpected("IPV4:"), false);
  assert.equal(matcherExpected("IPV4: "), false);
  assert.equal(matcherExpected("IPV4:client ' - "), false);
  assert.equal(matcherExpected(`IPV4 "a\\" `), false);
  assert.equal(matcherExpected(`IPV4 "a\\"" `), true);
  assert.equal(contextAt("$p = '''IPV4:ip ' ").raw, "IPV4:ip ' ");
});
