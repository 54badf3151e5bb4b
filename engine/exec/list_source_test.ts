import assert from "node:assert/strict";
import { listSource } from "./list_source.ts";
import { alice, makeTempTree, testContext } from "../../tests/support/temp_tree.ts";
import { Timestamp } from "../values/values.ts";

Deno.test("listSource() gives one row per file with uri, size, modified and path_time", async () => {
  const t = await makeTempTree({
    "/shared/l/2024-05-17.log": "abc",
    "/shared/l/notes.log": "",
  });
  try {
    const all = t.store.list("/shared/l/*", t.options(alice));
    const rows = [];
    for await (const batch of listSource(all, testContext())) rows.push(...batch);
    assert.deepEqual(rows.map((r) => [r.uri, r.size, r.path_time]), [
      ["/shared/l/2024-05-17.log", 3, null],
      ["/shared/l/notes.log", 0, null],
    ]);
    assert.ok(rows[0]!.modified instanceof Timestamp);
    const timed = t.store.list("/shared/l/$yyyy$-$MM$-$dd$.log", t.options(alice));
    const [batch] = await Array.fromAsync(listSource(timed, testContext()));
    assert.deepEqual(batch!.map((r) => r.path_time), [
      new Timestamp(Date.parse("2024-05-17T00:00:00Z")),
    ]);
  } finally {
    await t.remove();
  }
});
