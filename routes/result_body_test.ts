import assert from "node:assert/strict";
import { batchBody, bodyShape, resultBody, smallBatchBody, smallBody } from "./result_body.ts";
import type { StoredItem } from "../actors/result_store.ts";
import { batchWriterOf, FORMATS, formatSpec, type MediaType } from "./formats.ts";
import { scalar } from "../engine/mod.ts";
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

Deno.test("rendered rows in a body are framed as the same fragments would be, in every format", async () => {
  const { RenderedRows } = await import("../engine/mod.ts");
  const encoder = new TextEncoder();
  const texts = [
    '{"a":1}',
    "",
    "ü東京😀",
    '"x";;',
    "\t\\n",
    ...Array.from({ length: 3000 }, (_, i) => `r${i}`),
  ];
  const asRendered = (part: readonly string[]) => {
    const bytes = encoder.encode(part.join(""));
    const ends = new Uint32Array(part.length);
    let at = 0;
    part.forEach((t, i) => ends[i] = at += encoder.encode(t).length);
    return new RenderedRows(bytes, ends);
  };
  for (const mediaType of Object.keys(FORMATS) as MediaType[]) {
    if (batchWriterOf(formatSpec(mediaType))) continue;
    const shape = bodyShape({ mediaType, options: { omitHeader: false } }, ["a", "b"], "UTC");
    for (
      const cuts of [[0, 1, 5, 2000, texts.length], [0, texts.length], [0, 0, 3, texts.length]]
    ) {
      // The same items: as stored fragments, and as rendered parts among fragments.
      const fragments = async function* () {
        for (let i = 0; i + 1 < cuts.length; i++) yield texts.slice(cuts[i], cuts[i + 1]);
      };
      const parts = async function* () {
        for (let i = 0; i + 1 < cuts.length; i++) {
          const part = texts.slice(cuts[i], cuts[i + 1]);
          yield i % 2 === 0 ? asRendered(part) : part;
        }
      };
      // And rendered with the body's frame around each row (RowFrame), as stored for a
      // format fixed at POST: sent as they are, the first row's separator left out.
      const { separator, before, after } = shape.framing;
      const frame = { separator, before, after };
      const framed = async function* () {
        for (let i = 0; i + 1 < cuts.length; i++) {
          const part = texts.slice(cuts[i], cuts[i + 1]);
          if (i % 2 === 1) {
            yield part;
            continue;
          }
          const plain = asRendered(part.map((t) => separator + before + t + after));
          yield new RenderedRows(plain.bytes, plain.ends, frame);
        }
      };
      const want = await new Response(resultBody(fragments(), shape)).text();
      const got = await new Response(resultBody(parts(), shape)).text();
      assert.equal(got, want, `${mediaType} ${cuts}`);
      assert.equal(await new Response(resultBody(framed(), shape)).text(), want, `framed ${cuts}`);
      assert.equal(want, smallBody(texts, shape));
    }
  }
});

Deno.test("a large framed part goes out whole, in chunks, after what was gathered before it", async () => {
  const { RenderedRows } = await import("../engine/mod.ts");
  const encoder = new TextEncoder();
  const shape = bodyShape(
    { mediaType: "application/json", options: { omitHeader: false } },
    ["i"],
    "UTC",
  );
  const rows = Array.from({ length: 50_000 }, (_, i) => `{"i":${i}}`);
  const framedPart = (part: string[]) => {
    const texts = part.map((t) => "," + t);
    const bytes = encoder.encode(texts.join(""));
    const ends = new Uint32Array(texts.length);
    let at = 0;
    texts.forEach((t, i) => ends[i] = at += t.length);
    return new RenderedRows(bytes, ends, { separator: ",", before: "", after: "" });
  };
  const items = async function* () {
    yield rows.slice(0, 3);
    yield framedPart(rows.slice(3, 10));
    yield framedPart(rows.slice(10, 40_000)); // past the chunk size: one chunk
    yield framedPart(rows.slice(40_000));
  };
  const chunks: Uint8Array[] = [];
  for await (const chunk of resultBody(items(), shape)) chunks.push(chunk);
  const text = chunks.map((c) => new TextDecoder().decode(c)).join("");
  assert.equal(text, "[" + rows.join(",") + "]");
  assert.deepEqual(JSON.parse(text).length, rows.length);
  // The large part in chunks of at most 64 KiB, each full but the last of a part.
  assert.ok(chunks.every((c) => c.length <= 64 * 1024), chunks.map((c) => c.length).join());
  assert.ok(chunks.length >= Math.ceil(text.length / (64 * 1024)));
});
