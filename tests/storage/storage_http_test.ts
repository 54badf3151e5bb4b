/**
 * A KV that fails while the server runs: requests that need it get a 503 STORAGE_UNAVAILABLE that
 * names what failed but no host path, the admin's log has the details, and the server stays up.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ensureHome } from "../../home/layout.ts";
import { memoryLogger } from "../../home/log.ts";
import { loadSettings } from "../../home/settings.ts";
import { KvStorage } from "../../home/storage/kv_storage.ts";
import { buildDeps } from "../../main.ts";
import { createApp } from "../../routes/app.ts";

Deno.test("a failing KV answers 503 STORAGE_UNAVAILABLE without host paths, and the server stays up", async () => {
  const dir = await Deno.makeTempDir({ prefix: "trawl-kv-http-" });
  const home = await ensureHome(join(dir, "home"));
  const kvFile = join(dir, "secret-folder-name", "state.kv");
  await Deno.mkdir(join(dir, "secret-folder-name"));
  const kv = await Deno.openKv(kvFile);
  const log = memoryLogger();
  const deps = buildDeps(
    home,
    loadSettings(null, {}).settings,
    log,
    undefined,
    new KvStorage(kv, kvFile),
  );
  try {
    const token = await deps.users.bootstrapAdmin("admin");
    const auth = { Authorization: `Bearer ${token}` };
    const app = createApp(deps);
    assert.equal((await app.request("/API/v1.0/whoami", { headers: auth })).status, 200);
    assert.equal((await app.request("/API/v1.0/datastores", { headers: auth })).status, 200);

    kv.close(); // the KV goes away under the running server
    const res = await app.request("/API/v1.0/whoami", { headers: auth });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("Retry-After"), "5");
    const body = await res.json();
    assert.equal(body.code, "STORAGE_UNAVAILABLE");
    assert.match(body.message, /storage failed while reading 'conf\/users.json'/);
    assert.ok(!body.message.includes("secret-folder-name"), body.message);
    assert.ok(!JSON.stringify(body).includes(token!));

    await log.flush();
    assert.ok(log.lines.some((l) => l.includes("WARN") && l.includes("secret-folder-name")));
    assert.ok(log.lines.every((l) => !l.includes(token!)));
    const health = await app.request("/healthz");
    assert.equal(health.status, 200);
    await health.body?.cancel();
  } finally {
    deps.supervisor?.stop();
    deps.lifetimes.pacer.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
