/**
 * The console's page, script and style carry an ETag: a reload revalidates and gets 304 with no
 * body, so the script crosses the wire once per build.
 */

import assert from "node:assert/strict";
import { startTestServer } from "./server.ts";

Deno.test("each console asset has an ETag and answers 304 to it, 200 to another", async () => {
  await using s = await startTestServer();
  const tags = new Set<string>();
  for (const path of ["/", "/console.js", "/console.css"]) {
    const first = await fetch(s.url + path);
    assert.equal(first.status, 200, path);
    const etag = first.headers.get("ETag");
    assert.match(etag ?? "", /^(W\/)?"[0-9a-f]{32}"$/, path);
    assert.equal(first.headers.get("Cache-Control"), "no-cache");
    const body = await first.text();
    assert.ok(body.length > 0);
    tags.add(etag!);
    const again = await fetch(s.url + path, { headers: { "If-None-Match": etag! } });
    assert.equal(again.status, 304, path);
    assert.equal(await again.text(), "");
    assert.equal(again.headers.get("ETag"), etag);
    assert.match(again.headers.get("Content-Security-Policy") ?? "", /default-src 'self'/);
    const other = await fetch(s.url + path, { headers: { "If-None-Match": '"0000"' } });
    assert.equal(other.status, 200, path);
    assert.equal(await other.text(), body);
  }
  assert.equal(tags.size, 3);
});
