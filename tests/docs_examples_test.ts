/**
 * The worked examples of docs/language.md ("Reading real logs") are golden scripts: each code
 * block after `<!-- golden: NAME.sx -->` must be tests/scripts/NAME.sx without its comment
 * lines, so that what the reference shows is what the golden test runs.
 */

import assert from "node:assert/strict";
import { join } from "node:path";

const ROOT = join(import.meta.dirname!, "..");
const MARK = /<!-- golden: ([\w.-]+\.sx) -->\s*```\n([\s\S]*?)\n```/g;

Deno.test("every worked example of the language reference is the golden script it names", () => {
  const doc = Deno.readTextFileSync(join(ROOT, "docs", "language.md"));
  const examples = [...doc.matchAll(MARK)];
  assert.ok(examples.length >= 5, `only ${examples.length} worked examples`);
  for (const [, name, block] of examples) {
    const script = Deno.readTextFileSync(join(ROOT, "tests", "scripts", name!))
      .split("\n").filter((l) => !l.startsWith("//")).join("\n").trim();
    assert.equal(block!.trim(), script, `${name} differs from its example in docs/language.md`);
  }
  for (
    const name of ["real_syslog", "real_stack_trace", "real_iis", "real_zeek", "real_cloudtrail"]
  ) {
    assert.ok(examples.some(([, n]) => n === `${name}.sx`), `${name}.sx is not shown`);
  }
});
