import assert from "node:assert/strict";
import { README, settingsTable, withSettingsTable } from "./settings_doc.ts";
import { SETTING_KEYS } from "./settings.ts";

Deno.test("README's settings table is the one generated from SETTINGS (deno task settings-doc)", async () => {
  const readme = await Deno.readTextFile(README);
  assert.equal(withSettingsTable(readme), readme, "run `deno task settings-doc`");
});

Deno.test("settingsTable() has one row per setting with its default and meaning", () => {
  const lines = settingsTable().split("\n");
  assert.equal(lines.length, 2 + SETTING_KEYS.length);
  const row = (key: string) => lines.find((l) => l.startsWith(`| \`${key}\` `))!;
  assert.match(row("wgui.port"), /\| `8388` +\| port; `0` takes any free port +\|$/);
  assert.match(row("query.maxRunning"), /\| number of cores +\|/);
  assert.match(row("cloudapi.loginHost"), /\| unset +\|/);
  assert.match(row("server.timeZone"), /\| the process's zone +\|/);
});
