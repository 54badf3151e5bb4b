/**
 * A `cloudapi://` pattern that names no log of its store (a misspelt log or family) gives no
 * rows and says so in a warning naming the store's logs, as a file glob that matches nothing
 * does; a pattern naming a log, or a `**` over all of them, gives no such warning.
 */

import assert from "node:assert/strict";
import { baseStore, harness, HOUR, NOW } from "./harness.ts";
import { mayNameLog } from "../../connectors/cloudapi/uri_pattern.ts";

Deno.test("a cloudapi:// pattern naming no log of the store warns with the store's logs and fetches nothing", async () => {
  const h = await harness();
  try {
    await h.writeDefinition("corp", baseStore());
    const window = { from: NOW - 2 * HOUR, to: NOW };
    for (
      const uri of ["cloudapi://corp/directory_service/nolog/**", "cloudapi://corp/bogus/x/**"]
    ) {
      const { files, warnings } = await h.list(uri, window);
      assert.deepEqual(files, []);
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      assert.match(warnings[0]!.message, /no log of datastore 'corp' matches/);
      assert.match(warnings[0]!.message, /directory_service\/audits, directory_service\/logins/);
    }
    assert.equal(h.emulator.requests.length, 0, "nothing fetched for a pattern naming no log");
    for (const uri of ["cloudapi://corp/directory_service/audits/**", "cloudapi://corp/**"]) {
      const { warnings } = await h.list(uri, window);
      assert.ok(!warnings.some((w) => /no log of/.test(w.message)), uri);
    }
  } finally {
    await h.close();
  }
});

Deno.test("mayNameLog() takes globs in the first two segments and stops at **", () => {
  assert.ok(mayNameLog("directory_service/audits/2024/**", "directory_service", "audits"));
  assert.ok(mayNameLog("directory_*/a*", "directory_service", "audits"));
  assert.ok(mayNameLog("**/x.json", "directory_service", "audits"));
  assert.ok(mayNameLog("", "directory_service", "audits"));
  assert.ok(mayNameLog("directory_service", "directory_service", "audits"));
  assert.ok(!mayNameLog("directory_service/signins/**", "directory_service", "audits"));
  assert.ok(!mayNameLog("cloud_activity/**", "directory_service", "audits"));
});
