import assert from "node:assert/strict";
import { absentWarnings, mergeAbsent, warnAbsentFields } from "./absent_fields.ts";
import { testContext } from "../../tests/support/temp_tree.ts";
import type { Row } from "../values/values.ts";

async function run(
  batches: Row[][],
  fields: string[] | null,
  keep?: (row: Row) => boolean,
): Promise<{ rows: Row[]; warnings: string[] }> {
  const ctx = testContext();
  const rows: Row[] = [];
  const open = async function* (k: ((row: Row) => boolean) | undefined) {
    for (const b of batches) yield k ? b.filter(k) : b;
  };
  for await (const b of warnAbsentFields("READ_JSON", fields, keep, ctx, open)) rows.push(...b);
  return { rows, warnings: ctx.warnings.map((w) => w.message) };
}

Deno.test("a read field that no record had is warned about, with the count of records read", async () => {
  const { rows, warnings } = await run([[{ a: 1, b: null }], [{ a: 2 }]], ["a", "b", "c"]);
  assert.equal(rows.length, 2);
  assert.deepEqual(warnings, [
    "READ_JSON: field 'b' was in none of the 2 records read (it is null in every row)",
    "READ_JSON: field 'c' was in none of the 2 records read (it is null in every row)",
  ]);
});

Deno.test("behind a pushed filter every record read is watched, not only those kept", async () => {
  const { rows, warnings } = await run(
    [[{ a: 1, b: "x" }, { a: 2, b: null }]],
    ["a", "b"],
    (r) => r.a === 2,
  );
  assert.deepEqual(rows, [{ a: 2, b: null }]);
  assert.deepEqual(warnings, []);
});

Deno.test("no warning without records, or when the query reads every field", async () => {
  assert.deepEqual((await run([], ["a"])).warnings, []);
  assert.deepEqual((await run([[{ a: 1 }]], null)).warnings, []);
});

Deno.test("a missing part of a hyphenated name the data has is named in its warning, merged too", () => {
  const merged = mergeAbsent([
    { source: "READ_JSON", records: 2, missing: ["log", "status", "zzz"] },
    {
      source: "READ_JSON",
      records: 3,
      missing: ["log", "status", "zzz"],
      hyphenated: ["log-status"],
    },
  ]);
  const messages = absentWarnings(merged[0]!).map((w) => w.message);
  assert.equal(messages.length, 3);
  assert.match(
    messages[0]!,
    /'log' was in none of the 5 records .* the data has the field 'log-status'/,
  );
  assert.match(messages[1]!, /'status' .* write it in backquotes, `log-status`/);
  assert.doesNotMatch(messages[2]!, /the data has/);
});
