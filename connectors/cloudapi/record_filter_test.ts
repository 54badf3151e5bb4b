import assert from "node:assert/strict";
import { recordsInRange, recordTime } from "./record_filter.ts";

async function filtered(text: string, chunk: number, from: number, to: number, field: string) {
  const bytes = new TextEncoder().encode(text);
  const source = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < bytes.length; i += chunk) c.enqueue(bytes.slice(i, i + chunk));
      c.close();
    },
  });
  return await new Response(source.pipeThrough(recordsInRange({ field, from, to }))).text();
}

const H = Date.UTC(2026, 2, 10, 1);
const LINES = [
  { id: "a", activityDateTime: "2026-03-10T00:59:59Z" },
  { id: "b", activityDateTime: "2026-03-10T01:00:00Z" },
  { id: "c", activityDateTime: "2026-03-10T01:59:59.999Z" },
  { id: "d", activityDateTime: "2026-03-10T02:00:00Z" },
].map((r) => JSON.stringify(r)).join("\n") + "\n";

Deno.test("recordsInRange() keeps the records of [from, to) whatever the chunking", async () => {
  for (const chunk of [1, 7, 64, 10_000]) {
    const out = await filtered(LINES, chunk, H, H + 3_600_000, "activityDateTime");
    assert.deepEqual(out.trim().split("\n").map((l) => JSON.parse(l).id), ["b", "c"], `${chunk}`);
  }
});

Deno.test("recordTime() reads suite times without a zone as UTC", () => {
  assert.equal(recordTime("2026-03-10T01:00:00"), H);
  assert.equal(recordTime("2026-03-10T01:00:00Z"), H);
  assert.ok(Number.isNaN(recordTime(undefined)));
});
