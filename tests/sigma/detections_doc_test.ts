/**
 * The curl examples of docs/detections.md run as pasted: each ```sh block, in order, in one
 * folder, against a real server (`$B` its API base, `$T` alice's token); its output must be the
 * ```text block that follows it.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startTestServer } from "../api/server.ts";

const DOC = join(import.meta.dirname!, "..", "..", "docs", "detections.md");
const BLOCK = /```sh\n([\s\S]*?)\n```\s*\n```text\n([\s\S]*?)\n```/g;

Deno.test("docs/detections.md: every curl example answers what the page shows", async () => {
  const examples = [...Deno.readTextFileSync(DOC).matchAll(BLOCK)];
  assert.ok(examples.length >= 4, `only ${examples.length} examples`);
  await using s = await startTestServer();
  const dir = await Deno.makeTempDir({ prefix: "trawl-doc-" });
  try {
    for (const [, script, expected] of examples) {
      const out = await new Deno.Command("sh", {
        args: ["-e", "-c", script!],
        cwd: dir,
        env: { B: `${s.url}/API/v1.0`, T: s.tokens.alice! },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, `${script}\nfailed: ${stderr}`);
      assert.equal(new TextDecoder().decode(out.stdout).trim(), expected!.trim(), script);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
