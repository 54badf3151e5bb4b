/**
 * The server main.ts builds reads cloudapi:// out of the box: the datastore is registered in
 * buildDeps and takes its hosts from the settings (here, the emulator), on the real clock.
 */

import assert from "node:assert/strict";
import { startTestServer } from "../api/server.ts";
import { CloudEmulator } from "../emulator/emulator.ts";
import { baseStore, CLIENT, HOUR, SECRET, TENANT } from "./harness.ts";

const SCRIPT_HEADERS = { "Content-Type": "text/vnd.engine.script" };

Deno.test("the served datastore registry reads cloudapi:// through the hosts in the settings", async () => {
  const now = Date.now();
  const emulator = new CloudEmulator({
    tenants: [{ tenantId: TENANT, clientId: CLIENT, secret: SECRET }],
    seed: { from: now - 6 * HOUR, to: now, perHour: 4 },
  });
  await emulator.start();
  try {
    await using s = await startTestServer({
      "cloudapi.loginHost": emulator.url,
      "cloudapi.graphHost": emulator.url,
      "cloudapi.manageHost": emulator.url,
    });
    await s.write(
      "/system/datastores/corp.json",
      JSON.stringify({
        type: "CLOUDAPI",
        cloudapiStore: baseStore({ acl: { users: { alice: ["read", "list"] }, groups: {} } }),
      }),
    );
    // from/to choose whole hours to fetch and read (not single records): align them to hours.
    const hour = Math.floor(now / HOUR) * HOUR;
    const from = new Date(hour - 4 * HOUR).toISOString();
    const to = new Date(hour - HOUR).toISOString();
    const script =
      `READ_JSON(src: 'cloudapi://corp/directory_service/audits/$yyyy$/$MM$/$dd$/*', ` +
      `from: TIMESTAMP('${from}'), to: TIMESTAMP('${to}')) | select(id)`;

    // Without the Enterprise license the scheme is refused plainly, which also proves the
    // scheme is registered (an unregistered one would be NOT_FOUND).
    const refused = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT_HEADERS,
      body: script,
    });
    const refusedBody = await refused.json();
    assert.notEqual(refused.status, 200);
    assert.match(JSON.stringify(refusedBody), /LICENSE_REQUIRED/);

    await Deno.writeTextFile(`${s.home}/conf/license`, "edition = enterprise\n");
    const res = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT_HEADERS,
      body: script,
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.ok(!text.includes(SECRET));
    const got = (JSON.parse(text) as { id: string }[]).map((r) => r.id).sort();
    const expected = emulator.data(TENANT).audits
      .filter((a) => a.time >= Date.parse(from) && a.time < Date.parse(to))
      .map((a) => String(a.record.id)).sort();
    assert.ok(expected.length > 0);
    assert.deepEqual(got, expected);

    // Where each record came from: `path_field` gives it its file (cloudapi://.../yyyy/MM/dd/...).
    const perHour = await s.fetch("alice", "/API/v1.0/?scriptPath=/user", {
      method: "POST",
      headers: SCRIPT_HEADERS,
      body: script.replace(
        "to: TIMESTAMP",
        "path_field: '_path', line_field: '_line', to: TIMESTAMP",
      )
        .replace("select(id)", "select(id, _path, _line)"),
    });
    const hours = await perHour.text();
    assert.equal(perHour.status, 200, hours);
    const tagged = JSON.parse(hours) as { id: string; _path: string; _line: number }[];
    assert.deepEqual(tagged.map((r) => r.id).sort(), expected);
    const files = new Set(tagged.map((r) => r._path));
    assert.ok(files.size >= 1);
    for (const f of files) {
      assert.match(f, /^cloudapi:\/\/corp\/directory_service\/audits\/\d{4}\/\d\d\/\d\d\//, f);
      // One record a line: the records read from each file are its lines 1, 2, ... in order.
      const lines = tagged.filter((r) => r._path === f).map((r) => r._line);
      assert.deepEqual(lines, lines.map((_, i) => i + 1), f);
    }
  } finally {
    await emulator.stop();
  }
});
