import assert from "node:assert/strict";
import { framingOf, headerOf, resultBody, rowWriter, smallBody } from "./result_body.ts";
import type { StoredItem } from "../actors/result_store.ts";
import type { MediaType } from "./formats.ts";

async function* batches(items: readonly StoredItem[]): AsyncGenerator<readonly StoredItem[]> {
  for (let i = 0; i < items.length; i += 2) yield items.slice(i, i + 2);
}

Deno.test("a small body is byte for byte the body that would have been streamed", async () => {
  const rows = [{ a: 1, b: "x,y" }, { a: 2, b: 'say "hi"' }, { a: null, b: "" }];
  const types: MediaType[] = [
    "application/json",
    "application/json-seq",
    "application/x-ndjson",
    "application/csv",
  ];
  for (const mediaType of types) {
    const format = { mediaType, options: { omitHeader: false } };
    const shape = {
      framing: framingOf(mediaType),
      header: headerOf(format, ["a", "b"]),
      write: rowWriter(format, ["a", "b"], "UTC"),
    };
    for (const items of [rows, [], ["pre-serialised"]] as StoredItem[][]) {
      const streamed = await new Response(resultBody(batches(items), shape)).text();
      assert.equal(smallBody(items, shape), streamed, `${mediaType} ${JSON.stringify(items)}`);
    }
  }
  const json = framingOf("application/json");
  assert.equal(
    smallBody(rows, { framing: json, header: "", write: (r) => JSON.stringify(r) }),
    '[{"a":1,"b":"x,y"},{"a":2,"b":"say \\"hi\\""},{"a":null,"b":""}]',
  );
});
