import assert from "node:assert/strict";
import { batchBody, bodyShape, resultBody, smallBatchBody, smallBody } from "./result_body.ts";
import type { StoredItem } from "../actors/result_store.ts";
import { batchWriterOf, FORMATS, formatSpec, type MediaType } from "./formats.ts";
import { scalar } from "../engine/types.ts";
import type { BatchWriter } from "./arrow.ts";

async function* batches(items: readonly StoredItem[]): AsyncGenerator<readonly StoredItem[]> {
  for (let i = 0; i < items.length; i += 2) yield items.slice(i, i + 2);
}

Deno.test("a small body is byte for byte the body that would have been streamed", async () => {
  const rows = [{ a: 1, b: "x,y" }, { a: 2, b: 'say "hi"' }, { a: null, b: "" }];
  for (const mediaType of Object.keys(FORMATS) as MediaType[]) {
    const writerOf = batchWriterOf(formatSpec(mediaType));
    if (writerOf) {
      const schema = [
        { name: "a", type: scalar("INTEGER"), nullable: true },
        { name: "b", type: scalar("STRING"), nullable: true },
      ];
      for (const items of [rows, []] as StoredItem[][]) {
        const writer = (): BatchWriter => writerOf(schema, { timeZone: "UTC" });
        const streamed: Uint8Array = new Uint8Array(
          await new Response(batchBody(batches(items), writer())).arrayBuffer(),
        );
        assert.deepEqual(smallBatchBody(items, writer()), streamed, mediaType);
      }
      continue;
    }
    const shape = bodyShape({ mediaType, options: { omitHeader: false } }, ["a", "b"], "UTC");
    for (const items of [rows, [], ["pre-serialised"]] as StoredItem[][]) {
      const streamed = await new Response(resultBody(batches(items), shape)).text();
      assert.equal(smallBody(items, shape), streamed, `${mediaType} ${JSON.stringify(items)}`);
    }
  }
  const json = bodyShape({ mediaType: "application/json", options: { omitHeader: false } }, [
    "a",
    "b",
  ], "UTC");
  assert.equal(
    smallBody(rows, json),
    '[{"a":1,"b":"x,y"},{"a":2,"b":"say \\"hi\\""},{"a":null,"b":""}]',
  );
});

Deno.test("bodyShape() writes rows, header and framing as the format's entry says", () => {
  const rows = [{ a: 1, b: "x" }, { a: 2, b: null }];
  const body = (mediaType: MediaType, omitHeader = false) =>
    smallBody(rows, bodyShape({ mediaType, options: { omitHeader } }, ["a", "b"], "UTC"));
  assert.equal(body("application/json"), '[{"a":1,"b":"x"},{"a":2,"b":null}]');
  assert.equal(body("application/json-seq"), '\x1e{"a":1,"b":"x"}\n\x1e{"a":2,"b":null}\n');
  assert.equal(body("application/x-ndjson"), '{"a":1,"b":"x"}\n{"a":2,"b":null}\n');
  assert.equal(body("application/csv"), '"a";"b"\n1;"x"\n2;\n');
  assert.equal(body("application/csv", true), '1;"x"\n2;\n');
});
