import assert from "node:assert/strict";
import { ASSETS_MODULE, buildConsoleModule } from "../../tools/build_console.ts";

Deno.test("the checked-in console bundle (routes/console_assets.ts) is what `deno task console` builds now", async () => {
  const fresh = await buildConsoleModule();
  const checkedIn = await Deno.readTextFile(ASSETS_MODULE);
  assert.ok(
    fresh === checkedIn,
    "routes/console_assets.ts is stale: run `deno task console` and commit it",
  );
});
